/// A rectangle of cells. Sizes are never negative: splitting a too-small rect yields empty ones.
public struct Rect: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = max(0, width)
        self.height = max(0, height)
    }

    public var isEmpty: Bool { width == 0 || height == 0 }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }

    /// Whether the cell at `x`, `y` is inside.
    public func contains(x: Int, y: Int) -> Bool { x >= self.x && x < maxX && y >= self.y && y < maxY }
    public var description: String { "\(width)x\(height)@\(x),\(y)" }

    /// The rect shrunk by `n` cells on every side.
    public func inset(_ n: Int) -> Rect {
        Rect(x: x + n, y: y + n, width: width - 2 * n, height: height - 2 * n)
    }

    /// The top `rows` rows and the rest.
    public func splitTop(_ rows: Int) -> (top: Rect, rest: Rect) {
        let h = min(max(0, rows), height)
        return (Rect(x: x, y: y, width: width, height: h), Rect(x: x, y: y + h, width: width, height: height - h))
    }

    /// The bottom `rows` rows and the rest.
    public func splitBottom(_ rows: Int) -> (rest: Rect, bottom: Rect) {
        let h = min(max(0, rows), height)
        return (Rect(x: x, y: y, width: width, height: height - h), Rect(x: x, y: y + height - h, width: width, height: h))
    }

    /// The left `columns` columns and the rest.
    public func splitLeft(_ columns: Int) -> (left: Rect, rest: Rect) {
        let w = min(max(0, columns), width)
        return (Rect(x: x, y: y, width: w, height: height), Rect(x: x + w, y: y, width: width - w, height: height))
    }

    /// Row `i` of the rect, one cell high (empty when outside).
    public func row(_ i: Int) -> Rect {
        guard i >= 0, i < height else { return Rect(x: x, y: y + i, width: 0, height: 0) }
        return Rect(x: x, y: y + i, width: width, height: 1)
    }

    /// Splits the height into parts proportional to `weights`, each at least `minimum` rows when
    /// there is room; the last part takes what rounding leaves.
    /// `remainderTo`: which part takes the rows the weights leave over (default: the last).
    public func splitRows(weights: [Int], minimum: Int = 0, remainderTo: Int? = nil) -> [Rect] {
        guard !weights.isEmpty else { return [] }
        let total = max(1, weights.reduce(0, +))
        var heights = weights.map { max(minimum, height * $0 / total) }
        while heights.reduce(0, +) > height, let i = heights.indices.max(by: { heights[$0] < heights[$1] }), heights[i] > 0 {
            heights[i] -= 1
        }
        heights[min(remainderTo ?? heights.count - 1, heights.count - 1)] += height - heights.reduce(0, +)
        var rects: [Rect] = []
        var top = y
        for h in heights {
            rects.append(Rect(x: x, y: top, width: width, height: h))
            top += h
        }
        return rects
    }
}
