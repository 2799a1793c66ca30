import Foundation

/// The server's answer as the client kept it: the head, and the first `bodyLimit` bytes of the body.
public struct UploadResponse: Sendable, Hashable, Codable {
    public let status: Int
    public let reason: String
    public let headers: [(String, String)]
    /// The first bytes of the body, at most the client's limit (1 MiB).
    public let body: [UInt8]
    /// How many body bytes arrived in all, kept or not.
    public let bodyBytesTotal: Int64
    /// Why the answer's body stopped before its end (the answer timeout, a closed connection);
    /// nil when it arrived whole. The status still says what happened to the upload.
    public var cut: String?
    /// The digest algorithm (`sha-256`) by which the server's `Repr-Digest` proved it received
    /// exactly what was sent (RFC 9530); nil when the server said nothing of the kind.
    public var verified: String?

    public init(status: Int, reason: String, headers: [(String, String)], body: [UInt8], bodyBytesTotal: Int64, cut: String? = nil) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.bodyBytesTotal = bodyBytesTotal
        self.cut = cut
    }

    /// Whether the body that arrived is all the head declared (false without a declared length).
    public var isWholeByItsLength: Bool {
        header("Content-Length").flatMap { BoundedNumber.decimal($0) } == bodyBytesTotal
    }

    /// This answer as an attempt ended before its end was read: cut by the answer timeout of
    /// `timeout` seconds, or (nil) ended by the connection closing, which cut it unless all the
    /// declared body had arrived. The one rule both ways a request goes apply.
    public func endedEarly(answerTimeout timeout: Double?) -> UploadResponse {
        timeout == nil && isWholeByItsLength ? self : cutShort(byTimeout: timeout)
    }

    /// This answer as far as it arrived, said to be cut: by the answer timeout of `timeout`
    /// seconds, or (nil) by the server closing the connection.
    public func cutShort(byTimeout timeout: Double?) -> UploadResponse {
        var copy = self
        let declared = header("Content-Length").flatMap { BoundedNumber.decimal($0) }
        let arrived = ByteFormat.bytes(bodyBytesTotal) + (declared.map { " of " + ByteFormat.bytes($0) } ?? "")
        copy.cut =
            timeout.map { "answer cut off: \(arrived) arrived within the \(DurationText.describe($0)) answer timeout" }
            ?? "answer cut off: the server closed the connection after \(arrived)"
        return copy
    }

    public var isSuccess: Bool { (200..<300).contains(status) }

    /// `verified (sha-256)`: how every view says the answer proved the upload intact.
    public var verifiedText: String? { isSuccess ? verified.map { "verified (\($0))" } : nil }

    private enum CodingKeys: String, CodingKey { case status, reason, headers, body, bodyBytesTotal, cut, verified }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        status = try c.decode(Int.self, forKey: .status)
        reason = try c.decode(String.self, forKey: .reason)
        headers = try c.decode([[String]].self, forKey: .headers).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        body = Array(try c.decode(Data.self, forKey: .body))
        bodyBytesTotal = try c.decode(Int64.self, forKey: .bodyBytesTotal)
        cut = try c.decodeIfPresent(String.self, forKey: .cut)
        verified = try c.decodeIfPresent(String.self, forKey: .verified)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(status, forKey: .status)
        try c.encode(reason, forKey: .reason)
        try c.encode(headers.map { [$0.0, $0.1] }, forKey: .headers)
        try c.encode(Data(body), forKey: .body)
        try c.encode(bodyBytesTotal, forKey: .bodyBytesTotal)
        try c.encodeIfPresent(cut, forKey: .cut)
        try c.encodeIfPresent(verified, forKey: .verified)
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// Answer headers whose values are credentials (a session cookie the server sets, say).
    public static let secretHeaders: Set<String> = [
        "set-cookie", "set-cookie2", "cookie", "authorization", "proxy-authorization",
        "x-amz-security-token", "x-api-key", "x-auth-token",
    ]

    /// The answer as it may be kept and shown: the values of `secretHeaders` become `***`.
    public func redactingSecrets() -> UploadResponse {
        guard headers.contains(where: { Self.secretHeaders.contains($0.0.lowercased()) }) else { return self }
        var redacted = UploadResponse(
            status: status, reason: reason,
            headers: headers.map { Self.secretHeaders.contains($0.0.lowercased()) ? ($0.0, "***") : $0 },
            body: body, bodyBytesTotal: bodyBytesTotal, cut: cut)
        redacted.verified = verified
        return redacted
    }

    /// The body as text, or nil when it is binary: the one rule every view applies. Binary is
    /// bytes that are not UTF-8 (a character cut at the kept part's end does not count) or
    /// that hold a control character other than tab, line feed and carriage return.
    public var textBody: String? { Self.text(of: body, cut: bodyBytesTotal > Int64(body.count)) }

    public static func text(of bytes: [UInt8], cut: Bool) -> String? {
        var text = String(validating: bytes, as: UTF8.self)
        // A multi-byte character cut where the kept part ends is up to three bytes.
        if text == nil, cut {
            for drop in 1...3 where bytes.count >= drop {
                if let shorter = String(validating: bytes.dropLast(drop), as: UTF8.self) {
                    text = shorter
                    break
                }
            }
        }
        guard let text else { return nil }
        // Control characters other than line breaks and tabs make it binary. In UTF-8 every byte
        // below 0x80 is the character itself, so the bytes say it.
        let control = text.utf8.contains { $0 < 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 || $0 == 0x7F }
        return control ? nil : text
    }

    public static func == (lhs: UploadResponse, rhs: UploadResponse) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason && lhs.body == rhs.body
            && lhs.bodyBytesTotal == rhs.bodyBytesTotal && lhs.cut == rhs.cut && lhs.verified == rhs.verified
            && lhs.headers.map { "\($0.0):\($0.1)" } == rhs.headers.map { "\($0.0):\($0.1)" }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(body)
    }
}
