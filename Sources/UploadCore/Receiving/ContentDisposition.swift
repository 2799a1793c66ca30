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
        // Scanned by Unicode scalars: the delimiters are ASCII, and walking Characters (grapheme
        // breaking at every step) made this a tenth of the receiver's CPU for small files.
        let scalars = Array(header.unicodeScalars)
        var i = 0
        func skipSpaces() { while i < scalars.count, scalars[i] == " " || scalars[i] == "\t" { i += 1 } }
        func take(until stop: (Unicode.Scalar) -> Bool) -> String {
            let start = i
            while i < scalars.count, !stop(scalars[i]) { i += 1 }
            return String(String.UnicodeScalarView(scalars[start..<i]))
        }
        skipSpaces()
        let type = take { $0 == ";" }.trimmingSpaces().lowercased()
        guard !type.isEmpty else { return nil }
        var parameters: [String: String] = [:]
        while i < scalars.count, scalars[i] == ";" {
            i += 1
            skipSpaces()
            let key = take { $0 == "=" || $0 == ";" }.trimmingSpaces().lowercased()
            guard i < scalars.count, scalars[i] == "=" else { continue }
            i += 1
            skipSpaces()
            var value: String
            if i < scalars.count, scalars[i] == "\"" {
                i += 1
                var quoted = String.UnicodeScalarView()
                var escaped = false
                while i < scalars.count {
                    let c = scalars[i]
                    i += 1
                    if escaped {
                        quoted.append(c)
                        escaped = false
                        continue
                    }
                    if c == "\\" {
                        escaped = true
                        continue
                    }
                    if c == "\"" { break }
                    quoted.append(c)
                }
                value = HeaderEscaping.unescapeQuoted(String(quoted))
                while i < scalars.count, scalars[i] != ";" { i += 1 }
            } else {
                value = take { $0 == ";" }.trimmingSpaces()
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
