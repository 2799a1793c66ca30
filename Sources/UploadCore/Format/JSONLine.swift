/// One flat JSON object on one line, keys sorted, as `--json` prints an event: strings, integers,
/// numbers and booleans only. Written by hand because Foundation's `JSONSerialization` on a
/// `[String: Any]` cost a fifth of the CPU of sending a thousand small files.
public struct JSONLine: Sendable {
    /// A member's value.
    public enum Value: Sendable, Equatable {
        case string(String)
        case int(Int64)
        case number(Double)
        case bool(Bool)
    }

    private var fields: [(key: String, value: Value)] = []

    public init() {}

    public subscript(key: String) -> Value? {
        get { fields.first { $0.key == key }?.value }
        set {
            fields.removeAll { $0.key == key }
            if let newValue { fields.append((key, newValue)) }
        }
    }

    public var text: String {
        var out = "{"
        for (index, field) in fields.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out += "," }
            Self.appendString(field.key, to: &out)
            out += ":"
            switch field.value {
            case .string(let string): Self.appendString(string, to: &out)
            case .int(let int): out += String(int)
            case .bool(let bool): out += bool ? "true" : "false"
            case .number(let number):
                if !number.isFinite {
                    out += "null"
                } else if number == number.rounded(), abs(number) < 1e15 {
                    out += String(Int64(number))
                } else {
                    out += "\(number)"
                }
            }
        }
        return out + "}"
    }

    /// `string` as a JSON string literal: quotes, backslashes, control and invisible characters
    /// escaped.
    public static func appendString(_ string: String, to out: inout String) {
        if string.utf8.allSatisfy({ $0 < 0x80 }) {
            appendASCII(string, to: &out)
            return
        }
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where InvisibleCharacters.isHidden(scalar):
                // Valid JSON either way; escaped, a line shown on a terminal cannot reorder itself.
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    /// `appendString` for ASCII, by bytes (every `--json` line's keys and most of its values):
    /// the same escapes, without decoding scalars one by one.
    private static func appendASCII(_ string: String, to out: inout String) {
        var bytes: [UInt8] = [0x22]
        bytes.reserveCapacity(string.utf8.count + 8)
        let hex = Array("0123456789abcdef".utf8)
        for byte in string.utf8 {
            switch byte {
            case 0x22: bytes += [0x5C, 0x22]
            case 0x5C: bytes += [0x5C, 0x5C]
            case 0x0A: bytes += [0x5C, 0x6E]
            case 0x0D: bytes += [0x5C, 0x72]
            case 0x09: bytes += [0x5C, 0x74]
            case 0..<0x20, 0x7F:
                bytes += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(0x22)
        out += String(decoding: bytes, as: UTF8.self)
    }
}
