extension Canvas {
    /// Draws a frame around `rect` with `title` in its top edge and returns the inside.
    /// Too small for a frame (under 2×2): draws nothing and returns an empty rect.
    @discardableResult
    public mutating func frame(_ rect: Rect, title: String = "", style: CellStyle = .plain, titleStyle: CellStyle? = nil, glyphs: Glyphs) -> Rect {
        guard rect.width >= 2, rect.height >= 2 else { return Rect(x: rect.x, y: rect.y, width: 0, height: 0) }
        let top = rect.y
        let bottom = rect.maxY - 1
        let left = rect.x
        let right = rect.maxX - 1
        for x in left...right {
            write(String(glyphs.horizontal), x: x, y: top, style: style)
            write(String(glyphs.horizontal), x: x, y: bottom, style: style)
        }
        for y in top...bottom {
            write(String(glyphs.vertical), x: left, y: y, style: style)
            write(String(glyphs.vertical), x: right, y: y, style: style)
        }
        write(String(glyphs.topLeft), x: left, y: top, style: style)
        write(String(glyphs.topRight), x: right, y: top, style: style)
        write(String(glyphs.bottomLeft), x: left, y: bottom, style: style)
        write(String(glyphs.bottomRight), x: right, y: bottom, style: style)
        if !title.isEmpty, rect.width > 4 {
            let shown = TextLayout.truncate(" \(title) ", width: rect.width - 2, ellipsis: glyphs.ellipsis)
            write(shown, x: left + 1, y: top, style: titleStyle ?? style)
        }
        return rect.inset(1)
    }

    /// A progress bar filling `width` cells from `x`: whole cells plus an eighth-cell edge when
    /// the glyphs have them. `fraction` nil draws an empty track.
    public mutating func progressBar(x: Int, y: Int, width: Int, fraction: Double?, fill: CellStyle, track: CellStyle, glyphs: Glyphs) {
        guard width > 0 else { return }
        let f = min(max(fraction ?? 0, 0), 1)
        let eighths = glyphs.barEighths.isEmpty ? 1 : 8
        let units = Int((f * Double(width * eighths)).rounded(.down))
        let full = units / eighths
        let part = units % eighths
        var column = x
        for _ in 0..<full {
            write(String(glyphs.barFull), x: column, y: y, style: fill)
            column += 1
        }
        if part > 0 && column < x + width {
            write(String(glyphs.barEighths[part - 1]), x: column, y: y, style: fill)
            column += 1
        }
        while column < x + width {
            write(String(glyphs.barEmpty), x: column, y: y, style: track)
            column += 1
        }
    }

    /// Writes `text` centred in `rect`'s row `y`.
    public mutating func writeCentered(_ text: String, in rect: Rect, y: Int, style: CellStyle = .plain) {
        let shown = TextLayout.truncate(text, width: rect.width)
        let x = rect.x + max(0, (rect.width - DisplayWidth.of(shown)) / 2)
        write(shown, x: x, y: y, style: style, clip: rect)
    }
}

/// Which slice of a long list is on screen: keeps the selection visible and moves the window
/// only as far as needed, as file managers do.
public enum ScrollWindow {
    public static func offset(selected: Int, count: Int, visible: Int, current: Int) -> Int {
        guard visible > 0, count > visible else { return 0 }
        var offset = min(max(0, current), count - visible)
        if selected < offset { offset = selected }
        if selected >= offset + visible { offset = selected - visible + 1 }
        return min(max(0, offset), count - visible)
    }
}
