import Foundation

/// A parsed `Content-Disposition` header: `form-data; name="photo"; filename="x.jpg"`.
///
/// Accepts what browsers and curl send (`%22`/`%0D`/`%0A` inside quotes), older senders'
/// backslash escapes, unquoted tokens, and RFC 5987 `filename*=UTF-8''…`, which wins over `filename`.
public struct ContentDisposition: Sendable, Equatable {
    public let type: String
    public let parameters: [String: String]

    public var name: String? { parameters["name"] }
    public var filename: String? { parameters["filename*"] ?? parameters["filename"] }

    public init?(parsing header: String) {
        var scanner = Substring(header)
        func skipSpaces() { scanner = scanner.drop { $0 == " " || $0 == "\t" } }
        skipSpaces()
        let type = scanner.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
        guard !type.isEmpty else { return nil }
        scanner = scanner.dropFirst(scanner.prefix { $0 != ";" }.count)
        var parameters: [String: String] = [:]
        while scanner.first == ";" {
            scanner = scanner.dropFirst()
            skipSpaces()
            let key = scanner.prefix { $0 != "=" && $0 != ";" }.trimmingCharacters(in: .whitespaces).lowercased()
            scanner = scanner.dropFirst(scanner.prefix { $0 != "=" && $0 != ";" }.count)
            guard scanner.first == "=" else { continue }
            scanner = scanner.dropFirst()
            skipSpaces()
            var value = ""
            if scanner.first == "\"" {
                scanner = scanner.dropFirst()
                var escaped = false
                while let c = scanner.first {
                    scanner = scanner.dropFirst()
                    if escaped { value.append(c); escaped = false; continue }
                    if c == "\\" { escaped = true; continue }
                    if c == "\"" { break }
                    value.append(c)
                }
                value = HeaderEscaping.unescapeQuoted(value)
                scanner = scanner.drop { $0 != ";" }
            } else {
                value = scanner.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
                scanner = scanner.dropFirst(scanner.prefix { $0 != ";" }.count)
            }
            if key.hasSuffix("*") {
                guard let decoded = Self.decodeExtended(value) else { continue }
                value = decoded
            }
            if !key.isEmpty { parameters[key] = value }
        }
        self.type = type
        self.parameters = parameters
    }

    /// `UTF-8''na%C3%AFve.jpg` → `naïve.jpg` (RFC 5987 / RFC 8187).
    static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].lowercased() == "utf-8" else { return nil }
        return String(parts[2]).removingPercentEncoding
    }
}
