import UploadCore

/// What the response panel shows for one finished upload, formatted once when the answer
/// arrives: the headline and the body lines (JSON pretty-printed, text as is, binary as a size).
public struct AnswerDigest: Sendable, Equatable {
    public var isSuccess: Bool
    /// `200 OK`, `415 Unsupported Media Type`, `cannot connect`.
    public var headline: String
    /// Body or error lines, not yet wrapped.
    public var lines: [String]

    /// Bodies longer than this are cut for display (the full count is still shown).
    static let displayLimit = 64 * 1024

    public init(response: UploadResponse) {
        isSuccess = response.isSuccess
        headline = HTTPStatus.line(response.status, reason: response.reason)
        lines = Self.bodyLines(response)
        // The upload's status stands; that its answer is incomplete is said first.
        if let cut = response.cut { lines.insert("⚠ " + cut, at: 0) }
        if let verified = response.verifiedText { lines.insert("✓ \(verified): received exactly as sent", at: 0) }
    }

    public init(failure: UploadFailure) {
        isSuccess = false
        headline = FailureText.title(failure.kind)
        var lines = [failure.message]
        if let code = failure.code { lines.append("code \(code)") }
        self.lines = lines
    }

    static func bodyLines(_ response: UploadResponse) -> [String] {
        guard response.bodyBytesTotal > 0 else { return ["(empty body)"] }
        let shown = Array(response.body.prefix(displayLimit))
        guard let text = UploadResponse.text(of: shown, cut: response.bodyBytesTotal > Int64(shown.count)) else {
            let type = response.header("content-type").map { ", \($0)" } ?? ""
            return ["(binary body, \(ByteFormat.bytes(response.bodyBytesTotal))\(type))"]
        }
        var lines = (JSONPretty.format(text) ?? text.replacing("\r\n", with: "\n"))
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while lines.last?.isEmpty == true { lines.removeLast() }
        if response.bodyBytesTotal > Int64(shown.count) {
            lines.append("… \(ByteFormat.bytes(response.bodyBytesTotal)) in all")
        }
        return lines
    }
}

/// Short names for transport failures, as the panel title and the log say them.
public enum FailureText {
    public static func title(_ kind: UploadFailure.Kind) -> String {
        switch kind {
        case .cannotConnect: "cannot connect"
        case .certificateRejected: "certificate rejected"
        case .connectTimeout: "connect timed out"
        case .stalled: "stalled"
        case .noAnswer: "no answer"
        case .connectionLost: "connection lost"
        case .cancelled: "cancelled"
        case .fileError: "file error"
        case .tooManyRedirects: "too many redirects"
        case .answeredEarly: "answered early"
        case .integrityMismatch: "integrity mismatch"
        case .other: "failed"
        }
    }
}
