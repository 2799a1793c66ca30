/// Standard reason phrases, for statuses whose answer did not carry one we can show.
public enum HTTPStatus {
    /// How an ended upload reads without colour: `OK 201 Created`, `FAILED 404 Not Found`, and
    /// `OK 200` rather than `OK 200 OK` (a word said once).
    public static func verdict(success: Bool, _ words: String) -> String {
        let word = success ? "OK" : "FAILED"
        if words.hasSuffix(" " + word) { return word + " " + words.dropLast(word.count + 1) }
        return word + " " + words
    }

    public static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 411: "Length Required"
        case 413: "Payload Too Large"
        case 415: "Unsupported Media Type"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }

    /// `415 Unsupported Media Type`: the server's reason phrase, or the standard one when the
    /// server sent none; just the number for a status without a known phrase.
    public static func line(_ status: Int, reason: String?) -> String {
        let phrase = reason.flatMap { $0.isEmpty ? nil : $0 } ?? Self.reason(status)
        return phrase.isEmpty ? "\(status)" : "\(status) \(phrase)"
    }

    /// Answers that a later attempt may turn into a success: curl's `--retry` list (500
    /// included: a server's passing fault; the upload carries an Idempotency-Key, so a server
    /// that stored it before failing can say so rather than store it twice).
    public static func isRetryable(_ status: Int) -> Bool {
        [408, 429, 500, 502, 503, 504].contains(status)
    }
}
