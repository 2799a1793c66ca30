import UploadCore

/// What the response panel shows for one finished upload, formatted once when the answer
/// arrives: the headline and the body lines (JSON pretty-printed, text as is, binary as a size).
public struct AnswerDigest: Sendable, Equatable {
    public var isSuccess: Bool
    /// Cancelled (by the user, or Ctrl-C): neither an answer nor a failure of the server's.
    public var isCancelled = false
    /// `200 OK`, `415 Unsupported Media Type`, `cannot connect`.
    public var headline: String

    /// The panel's title: `OK 200`, `FAILED 415 Unsupported Media Type`, `FAILED cannot
    /// connect`; `CANCELLED`, and a bare `FAILED` where the kind would only repeat it.
    public var verdict: String {
        if isCancelled { return "CANCELLED" }
        if !isSuccess && headline == FailureText.title(.other) { return "FAILED" }
        return HTTPStatus.verdict(success: isSuccess, headline)
    }
    /// Body or error lines, not yet wrapped.
    public var lines: [String]

    /// Bodies longer than this are cut for display (the full count is still shown).
    static let displayLimit = 64 * 1024

    /// The answer an upload finished with, as the response panel shows it: its failure, or
    /// else the server's answer; nil while it has neither. Made on every frame that shows it,
    /// from the record alone: `lineLimit` bounds the body lines made (the panel's height).
    public init?(record: UploadRecord, lineLimit: Int = .max) {
        if let failure = record.failure {
            self.init(failure: failure)
        } else if let response = record.response {
            self.init(response: response, lineLimit: lineLimit)
        } else {
            return nil
        }
    }

    public init(response: UploadResponse, lineLimit: Int = .max) {
        isSuccess = response.isSuccess
        headline = HTTPStatus.line(response.status, reason: response.reason)
        lines = Self.bodyLines(response, limit: lineLimit)
        // The upload's status stands; that its answer is incomplete is said first.
        if let cut = response.cut { lines.insert("⚠ " + cut, at: 0) }
        if let verified = response.verifiedText { lines.insert("✓ \(verified): received exactly as sent", at: 0) }
    }

    public init(failure: UploadFailure) {
        isSuccess = false
        isCancelled = failure.kind == .cancelled
        headline = FailureText.title(failure.kind)
        var lines = [failure.message]
        if let code = failure.code { lines.append("code \(code)") }
        self.lines = lines
    }

    /// The body's lines, at most `limit` of them (blank lines at the end are not lines).
    static func bodyLines(_ response: UploadResponse, limit: Int) -> [String] {
        guard response.bodyBytesTotal > 0 else { return ["(empty body)"] }
        let shown = Array(response.body.prefix(displayLimit))
        let cut = response.bodyBytesTotal > Int64(shown.count)
        guard let text = UploadResponse.text(of: shown, cut: cut) else {
            let type = response.header("content-type").map { ", \($0)" } ?? ""
            return ["(binary body, \(ByteFormat.bytes(response.bodyBytesTotal))\(type))"]
        }
        var lines = JSONPretty.lines(text.utf8, limit: limit) ?? plainLines(text, limit: limit)
        if cut, lines.count < limit {
            lines.append("… \(ByteFormat.bytes(response.bodyBytesTotal)) in all")
        }
        return lines
    }

    /// Text split into lines (CRLF or LF), the first `limit` that are followed by more than
    /// blank lines.
    static func plainLines(_ text: String, limit: Int) -> [String] {
        var lines: [String] = []
        var blanks = 0
        let utf8 = text.utf8
        var start = utf8.startIndex
        while lines.count < limit {
            let end = utf8[start...].firstIndex(of: 0x0A)
            var piece = utf8[start..<(end ?? utf8.endIndex)]
            // CRLF ends a line as LF does; a lone CR stays.
            if end != nil, piece.last == 0x0D { piece = piece.dropLast() }
            if piece.isEmpty {
                blanks += 1
            } else {
                lines += repeatElement("", count: min(blanks, limit - lines.count))
                blanks = 0
                if lines.count < limit { lines.append(String(decoding: piece, as: UTF8.self)) }
            }
            guard let end else { break }
            start = utf8.index(after: end)
        }
        return lines
    }
}
