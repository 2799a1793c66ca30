/// One flat JSON object on one line, keys sorted, as `--json` prints an event: strings, integers,
/// numbers and booleans only. Written by hand because Foundation's `JSONSerialization` on a
/// `[String: Any]` cost a fifth of the CPU of sending a thousand small files.
public struct JSONLine: Sendable {
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

    static func appendString(_ string: String, to out: inout String) {
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
}
