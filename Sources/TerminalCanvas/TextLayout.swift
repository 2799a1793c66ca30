/// Fitting text into columns by display width: truncation with an ellipsis, padding, wrapping.
public enum TextLayout {
    /// `text` cut to at most `width` columns, ending in `ellipsis` when something was cut.
    public static func truncate(_ text: String, width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        if DisplayWidth.of(text) <= width { return text }
        let room = width - DisplayWidth.of(ellipsis)
        guard room >= 0 else { return String(repeating: ".", count: width) }
        var result = ""
        var used = 0
        for character in text {
            let w = DisplayWidth.of(character)
            if used + w > room { break }
            result.append(character)
            used += w
        }
        return result + ellipsis
    }

    /// `text` cut to at most `width` columns by dropping its start: `…/photos/2024` for paths.
    public static func truncateHead(_ text: String, width: Int, ellipsis: String = "…") -> String {
        guard width > 0 else { return "" }
        if DisplayWidth.of(text) <= width { return text }
        let room = width - DisplayWidth.of(ellipsis)
        guard room >= 0 else { return String(repeating: ".", count: width) }
        var result: [Character] = []
        var used = 0
        for character in text.reversed() {
            let w = DisplayWidth.of(character)
            if used + w > room { break }
            result.append(character)
            used += w
        }
        return ellipsis + String(result.reversed())
    }

    /// `text` truncated to `width`, then padded with spaces to exactly `width` columns.
    public static func fit(_ text: String, width: Int, ellipsis: String = "…") -> String {
        let cut = truncate(text, width: width, ellipsis: ellipsis)
        return cut + String(repeating: " ", count: max(0, width - DisplayWidth.of(cut)))
    }

    /// Right-aligned to `width` columns (truncated when longer).
    public static func pad(left text: String, width: Int) -> String {
        let cut = truncate(text, width: width)
        return String(repeating: " ", count: max(0, width - DisplayWidth.of(cut))) + cut
    }

    /// Wraps each line of `text` to `width` columns, breaking at spaces when it can and inside
    /// words when a word is longer than a line.
    public static func wrap(_ text: String, width: Int, limit: Int = .max) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if lines.count >= limit { break }
            var line = ""
            var used = 0
            var lastSpace: (index: String.Index, used: Int)?
            for character in paragraph.replacingTabs() {
                let w = DisplayWidth.of(character)
                if used + w > width {
                    if let space = lastSpace, character != " " {
                        let rest = String(line[line.index(after: space.index)...])
                        lines.append(String(line[..<space.index]))
                        line = rest
                        used = DisplayWidth.of(rest)
                    } else {
                        lines.append(line)
                        line = ""
                        used = 0
                    }
                    lastSpace = nil
                    if character == " " { continue }
                }
                if character == " " { lastSpace = (line.endIndex, used) }
                line.append(character)
                used += w
            }
            lines.append(line)
        }
        return Array(lines.prefix(limit))
    }
}

extension Substring {
    fileprivate func replacingTabs() -> String {
        contains("\t") ? String(replacing("\t", with: "    ")) : String(self)
    }
}
