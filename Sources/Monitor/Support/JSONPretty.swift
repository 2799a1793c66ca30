/// Re-indents JSON text two spaces per level, keeping the server's key order and string
/// contents exactly (a dictionary round trip would reorder keys). Returns `nil` when the text
/// is not a JSON object or array, so the caller shows it as plain text.
public enum JSONPretty {
    public static func format(_ text: String) -> String? {
        let trimmed = Array(text.utf8).drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = trimmed.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 2)
        var depth = 0
        var inString = false
        var escaped = false
        var closedAll = false
        func newline() {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: depth * 2))
        }
        for byte in trimmed {
            if inString {
                out.append(byte)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            if closedAll {
                if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { continue }
                return nil
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                out.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                out.append(byte)
                newline()
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                guard depth >= 0 else { return nil }
                // An empty container stays on one line: `{}` and `[]`.
                if let open = out.lastIndex(where: { $0 != 0x20 && $0 != 0x0A }),
                   out[open] == UInt8(ascii: "{") || out[open] == UInt8(ascii: "[") {
                    out.removeSubrange((open + 1)...)
                } else {
                    newline()
                }
                out.append(byte)
                if depth == 0 { closedAll = true }
            case UInt8(ascii: ","):
                out.append(byte)
                newline()
            case UInt8(ascii: ":"):
                out.append(contentsOf: [UInt8(ascii: ":"), 0x20])
            case 0x20, 0x0A, 0x0D, 0x09:
                continue
            default:
                out.append(byte)
            }
        }
        guard closedAll, !inString else { return nil }
        return String(validating: out, as: UTF8.self)
    }
}
