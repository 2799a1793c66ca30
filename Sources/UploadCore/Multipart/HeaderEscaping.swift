import Foundation

/// Escaping of `name` and `filename` values in `Content-Disposition`, the way browsers
/// (WHATWG HTML) and curl 7.81+ do it: `"` becomes `%22`, CR `%0D`, LF `%0A`; every other
/// UTF-8 byte is sent as it is.
public enum HeaderEscaping {
    public static func escapeQuoted(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The inverse of `escapeQuoted`, as a receiver applies it to what it parsed.
    public static func unescapeQuoted(_ value: String) -> String {
        guard value.utf8.contains(UInt8(ascii: "%")) else { return value }
        return value.replacingOccurrences(of: "%22", with: "\"")
            .replacingOccurrences(of: "%0D", with: "\r")
            .replacingOccurrences(of: "%0A", with: "\n")
    }
}
