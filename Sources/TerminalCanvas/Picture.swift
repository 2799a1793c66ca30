/// A colour as 8-bit red, green, blue.
public struct RGB: Sendable, Hashable {
    public var r: UInt8
    public var g: UInt8
    public var b: UInt8

    public init(_ r: UInt8, _ g: UInt8, _ b: UInt8) {
        self.r = r
        self.g = g
        self.b = b
    }

    /// Perceived brightness, 0…255 (Rec. 601 weights).
    public var luma: Int { (299 * Int(r) + 587 * Int(g) + 114 * Int(b)) / 1000 }
}

/// How many colours the terminal shows, which decides how a picture is drawn.
public enum ColorDepth: Sendable, Equatable {
    /// 24-bit colour (`COLORTERM=truecolor`, terminfo `RGB`/`Tc`).
    case trueColor
    /// The xterm 256-colour palette.
    case palette256
    /// Eight colours or none (`NO_COLOR`): no picture in colour.
    case none
}

/// One text cell of a picture: the upper half block `▀` in the upper pixel's colour over the
/// lower pixel's (nil below the last row of a picture with an odd number of rows).
public struct PictureCell: Sendable, Hashable {
    public var top: RGB
    public var bottom: RGB?

    public init(top: RGB, bottom: RGB?) {
        self.top = top
        self.bottom = bottom
    }
}

/// A picture drawn as text cells, two pixels per cell, at a place on the canvas. Terminals
/// over SSH, in tmux and in screen all show it: it is characters and colours, nothing else.
public struct CellPicture: Sendable, Equatable {
    public var x: Int
    public var y: Int
    public let columns: Int
    public let rows: Int
    public let cells: [PictureCell]

    public init(x: Int, y: Int, columns: Int, rows: Int, cells: [PictureCell]) {
        precondition(cells.count == columns * rows, "one cell per column and row")
        self.x = x
        self.y = y
        self.columns = columns
        self.rows = rows
        self.cells = cells
    }

    /// Cells from pixels (`width` x `height`, RGB, rows top to bottom): each cell takes two rows.
    public init(x: Int, y: Int, width: Int, height: Int, rgb: [UInt8]) {
        precondition(rgb.count == width * height * 3, "three bytes per pixel")
        let rows = (height + 1) / 2
        var cells: [PictureCell] = []
        cells.reserveCapacity(width * rows)
        for row in 0..<rows {
            for column in 0..<width {
                let top = (2 * row * width + column) * 3
                let lower = 2 * row + 1 < height ? ((2 * row + 1) * width + column) * 3 : nil
                cells.append(
                    PictureCell(
                        top: RGB(rgb[top], rgb[top + 1], rgb[top + 2]),
                        bottom: lower.map { RGB(rgb[$0], rgb[$0 + 1], rgb[$0 + 2]) }))
            }
        }
        self.init(x: x, y: y, columns: width, rows: rows, cells: cells)
    }

    public subscript(column: Int, row: Int) -> PictureCell { cells[row * columns + column] }

    public var bounds: Rect { Rect(x: x, y: y, width: columns, height: rows) }
}

/// The bytes that draw a picture's rows: cursor placed at each row's start, colours set only
/// where they change, attributes reset at the end of every row so nothing leaks past it.
public enum PictureEncoder {
    public static let upperHalfBlock = "▀"

    /// Rows `rows` of `picture` (all by default), for a terminal of `depth` colours.
    public static func bytes(_ picture: CellPicture, depth: ColorDepth, rows: Range<Int>? = nil) -> [UInt8] {
        guard depth != .none else { return [] }
        var out: [UInt8] = []
        out.reserveCapacity(picture.columns * picture.rows * 24)
        let block = Array(upperHalfBlock.utf8)
        for row in (rows ?? 0..<picture.rows).clamped(to: 0..<picture.rows) {
            out += Array("\u{1B}[\(picture.y + row + 1);\(picture.x + 1)H".utf8)
            // Compared as written: in the palette, neighbours often share a colour.
            var foreground: String?
            var background: String?
            for column in 0..<picture.columns {
                let cell = picture[column, row]
                let top = "38;" + colour(cell.top, depth)
                let bottom = cell.bottom.map { "48;" + colour($0, depth) } ?? "49"
                var codes: [String] = []
                if foreground != top { codes.append(top) }
                if background != bottom { codes.append(bottom) }
                if !codes.isEmpty { out += Array("\u{1B}[\(codes.joined(separator: ";"))m".utf8) }
                foreground = top
                background = bottom
                out += block
            }
            out += Array("\u{1B}[0m".utf8)
        }
        return out
    }

    static func colour(_ rgb: RGB, _ depth: ColorDepth) -> String {
        switch depth {
        case .trueColor: "2;\(rgb.r);\(rgb.g);\(rgb.b)"
        case .palette256, .none: "5;\(palette256(rgb))"
        }
    }

    /// The nearest of the xterm palette's 6x6x6 cube (16…231) and grey ramp (232…255).
    public static func palette256(_ rgb: RGB) -> Int {
        let levels = [0, 95, 135, 175, 215, 255]
        func nearestLevel(_ v: UInt8) -> Int {
            var best = 0
            for i in 1..<levels.count where abs(levels[i] - Int(v)) < abs(levels[best] - Int(v)) { best = i }
            return best
        }
        func distance(_ a: (Int, Int, Int), _ b: RGB) -> Int {
            let dr = a.0 - Int(b.r)
            let dg = a.1 - Int(b.g)
            let db = a.2 - Int(b.b)
            return dr * dr + dg * dg + db * db
        }
        let (ri, gi, bi) = (nearestLevel(rgb.r), nearestLevel(rgb.g), nearestLevel(rgb.b))
        let cube = (levels[ri], levels[gi], levels[bi])
        let average = (Int(rgb.r) + Int(rgb.g) + Int(rgb.b)) / 3
        let greyIndex = max(0, min(23, (average - 8 + 5) / 10))
        let grey = 8 + 10 * greyIndex
        return distance((grey, grey, grey), rgb) < distance(cube, rgb) ? 232 + greyIndex : 16 + 36 * ri + 6 * gi + bi
    }

    /// A character for a brightness, for terminals without colour: the picture as shading.
    public static func shade(_ luma: Int) -> Character {
        let ramp: [Character] = [" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"]
        return ramp[max(0, min(ramp.count - 1, luma * ramp.count / 256))]
    }
}
