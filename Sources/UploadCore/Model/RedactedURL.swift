import Foundation

/// A URL as it may be shown or logged: credentials in the userinfo (`http://user:pw@host/`) and
/// the values of query parameters that commonly carry secrets (`token`, `signature`,
/// `X-Amz-Signature`, …) become `***`. The URL itself is kept, unchanged, for sending; this is
/// only ever applied to what a person or a log sees. Everything else stays byte for byte.
public enum RedactedURL {
    /// Query parameter names (compared without case) whose values are secrets.
    public static let secretParameters: Set<String> = [
        "token", "access_token", "id_token", "refresh_token", "auth", "authorization", "key", "api_key", "apikey",
        "api-key", "password", "passwd", "pwd", "secret", "client_secret", "signature", "sig", "code",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential",
    ]

    /// `url` as it may be shown or logged: userinfo and the values of secret-looking query parameters replaced.
    public static func display(_ url: String) -> String {
        // Most URLs carry neither credentials nor a query: nothing to hide, no Characters to walk.
        guard url.utf8.contains(where: { $0 == UInt8(ascii: "@") || $0 == UInt8(ascii: "?") }) else { return url }
        var text = url
        if let schemeEnd = text.firstRange(of: "://") {
            let authorityEnd = text[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
            let authority = text[schemeEnd.upperBound..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                text.replaceSubrange(schemeEnd.upperBound..<at, with: "***")
            }
        }
        guard let questionMark = text.firstIndex(of: "?") else { return text }
        let queryEnd = text[questionMark...].firstIndex(of: "#") ?? text.endIndex
        let query = text[text.index(after: questionMark)..<queryEnd]
        let redacted = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<equals])
            let decoded = (name.removingPercentEncoding ?? name).lowercased()
            return secretParameters.contains(decoded) ? name + "=***" : String(pair)
        }.joined(separator: "&")
        text.replaceSubrange(text.index(after: questionMark)..<queryEnd, with: redacted)
        return text
    }
}
