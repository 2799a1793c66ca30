import UploadCore

/// One terminal cell: a grapheme and its style. The right half of a two-column character is a
/// continuation cell, which a backend skips (the wide character already covers it).
public struct Cell: Sendable, Hashable {
    public var character: Character
    public var style: CellStyle
    public var isContinuation: Bool

    public init(_ character: Character = " ", style: CellStyle = .plain, isContinuation: Bool = false) {
        self.character = character
        self.style = style
        self.isContinuation = isContinuation
    }

    public static let blank = Cell()
}

/// A grid of cells that views draw into; it knows display width, so a wide character takes two
/// cells and is never split at an edge (a space stands in when only one column is left).
/// Nothing here talks to a terminal: a backend copies the finished canvas out.
public struct Canvas: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]
    /// A picture over the cells below it (which stay blank): the backend draws it in colours
    /// the cell styles cannot carry.
    public var picture: CellPicture?
    /// A picture in real pixels (kitty graphics, sixel) over blank cells, for terminals that
    /// said they show them; a backend without them ignores it.
    public var pixels: PixelPicture?

    public init(width: Int, height: Int) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    public var bounds: Rect { Rect(x: 0, y: 0, width: width, height: height) }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    public func contains(x: Int, y: Int) -> Bool { x >= 0 && y >= 0 && x < width && y < height }

    /// Writes `text` on row `y` from column `x`, never past `clip` (default: the whole canvas),
    /// and returns the columns used. Control characters are shown as `?` so a file name can never
    /// move the cursor; invisible format characters (bidi overrides and the like) as `<U+202E>`,
    /// so a name can never show as another.
    @discardableResult
    public mutating func write(_ text: some StringProtocol, x: Int, y: Int, style: CellStyle = .plain, clip: Rect? = nil) -> Int {
        let area = clip ?? bounds
        guard y >= max(0, area.y), y < min(height, area.maxY) else { return 0 }
        let limit = min(width, area.maxX)
        var column = x
        for character in text {
            guard column < limit else { break }
            // A byte of a file name that is not UTF-8 is shown as what it is, `<0xE9>`.
            if let scalar = character.unicodeScalars.first, PathText.escapedByte(scalar) != nil {
                column += write(InvisibleCharacters.escape(scalar), x: column, y: y, style: style, clip: clip)
                continue
            }
            var shown = character
            var w = DisplayWidth.of(character)
            if w == 0 {
                guard let scalar = character.unicodeScalars.first else { continue }
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    shown = "?"
                    w = 1
                } else if InvisibleCharacters.isHidden(scalar) {
                    column += write(InvisibleCharacters.escape(scalar), x: column, y: y, style: style, clip: clip)
                    continue
                } else {
                    continue
                }
            }
            if column < max(0, area.x) {
                column += w
                continue
            }
            if w == 2 && column + 1 >= limit {
                put(Cell(" ", style: style), x: column, y: y)
                column += 1
                break
            }
            put(Cell(shown, style: style), x: column, y: y)
            if w == 2 { put(Cell(" ", style: style, isContinuation: true), x: column + 1, y: y) }
            column += w
        }
        return max(0, column - x)
    }

    /// Paints every cell of `rect` with `character` in `style`.
    public mutating func fill(_ rect: Rect, _ character: Character = " ", style: CellStyle = .plain) {
        let area = clipped(rect)
        guard !area.isEmpty else { return }
        for y in area.y..<area.maxY {
            for x in area.x..<area.maxX { put(Cell(character, style: style), x: x, y: y) }
        }
    }

    /// Changes the style of every cell in `rect`, keeping the characters.
    public mutating func restyle(_ rect: Rect, _ change: (inout CellStyle) -> Void) {
        let area = clipped(rect)
        guard !area.isEmpty else { return }
        for y in area.y..<area.maxY {
            for x in area.x..<area.maxX { change(&cells[y * width + x].style) }
        }
    }

    public func clipped(_ rect: Rect) -> Rect {
        let x0 = max(0, rect.x)
        let y0 = max(0, rect.y)
        let x1 = min(width, rect.maxX)
        let y1 = min(height, rect.maxY)
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// Row `y` as text, continuation cells left out.
    public func line(_ y: Int) -> String {
        var text = ""
        for x in 0..<width where !self[x, y].isContinuation { text.append(self[x, y].character) }
        return text
    }

    /// The whole canvas as text, one line per row with trailing spaces kept, for snapshots.
    public var text: String {
        (0..<height).map(line).joined(separator: "\n")
    }

    /// Sets a cell, repairing wide characters it overwrites half of.
    private mutating func put(_ cell: Cell, x: Int, y: Int) {
        guard contains(x: x, y: y) else { return }
        let index = y * width + x
        if cells[index].isContinuation, x > 0 {
            cells[index - 1] = Cell(" ", style: cells[index - 1].style)
        }
        if !cell.isContinuation, x + 1 < width, cells[index + 1].isContinuation {
            cells[index + 1] = Cell(" ", style: cells[index + 1].style)
        }
        cells[index] = cell
    }
}
