/// Re-indents JSON text two spaces per level, keeping the server's key order and string
/// contents exactly (a dictionary round trip would reorder keys). Returns `nil` when the text
/// is not a JSON object or array, so the caller shows it as plain text.
public enum JSONPretty {
    public static func format(_ text: String) -> String? {
        lines(Array(text.utf8))?.joined(separator: "\n")
    }

    /// The re-indented text's first `limit` lines. The whole text is still read (whether it is
    /// JSON at all depends on its end), but only what is shown is built: a 64 KiB answer costs
    /// a scan, not a copy, on every frame that shows it.
    public static func lines(_ bytes: some Collection<UInt8>, limit: Int = .max) -> [String]? {
        let scanned = bytes.withContiguousStorageIfAvailable { scan($0, limit: limit) }
        return scanned ?? Array(bytes).withUnsafeBufferPointer { scan($0, limit: limit) }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> [String]? {
        var start = 0
        while start < bytes.count, isSpace(bytes[start]) { start += 1 }
        guard start < bytes.count, bytes[start] == UInt8(ascii: "{") || bytes[start] == UInt8(ascii: "[") else { return nil }
        var lines: [String] = []
        var line: [UInt8] = []
        var depth = 0
        var inString = false
        var escaped = false
        var closedAll = false
        // A line break is owed after `{`, `[` or `,`, written when the next token comes: an
        // empty container stays on one line (`{}`, `[]`).
        var breakOwed = false
        var lastWasOpen = false
        var full = limit <= 0
        func endLine(indent: Int) {
            guard !full else { return }
            lines.append(String(decoding: line, as: UTF8.self))
            full = lines.count >= limit
            line.removeAll(keepingCapacity: true)
            if !full { line.append(contentsOf: repeatElement(0x20, count: indent * 2)) }
        }
        func emit(_ byte: UInt8) { if !full { line.append(byte) } }
        func settleBreak() {
            if breakOwed { endLine(indent: depth) }
            breakOwed = false
        }
        for index in start..<bytes.count {
            let byte = bytes[index]
            if inString {
                // A raw line break inside a string (not JSON, but kept as the server sent it)
                // starts a line of its own.
                if byte == 0x0A { endLine(indent: 0) } else { emit(byte) }
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            if isSpace(byte) { continue }
            if closedAll { return nil }
            switch byte {
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                guard depth >= 0 else { return nil }
                if breakOwed && lastWasOpen {
                    breakOwed = false
                } else {
                    settleBreak()
                    endLine(indent: depth)
                }
                emit(byte)
                lastWasOpen = false
                if depth == 0 { closedAll = true }
            default:
                settleBreak()
                lastWasOpen = false
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                    emit(byte)
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    emit(byte)
                    breakOwed = true
                    lastWasOpen = true
                case UInt8(ascii: ","):
                    emit(byte)
                    breakOwed = true
                case UInt8(ascii: ":"):
                    emit(byte)
                    emit(0x20)
                default:
                    emit(byte)
                }
            }
        }
        guard closedAll, !inString else { return nil }
        if !full { lines.append(String(decoding: line, as: UTF8.self)) }
        return lines
    }
}
