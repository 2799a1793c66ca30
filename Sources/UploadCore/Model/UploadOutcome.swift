/// Why an upload did not get an answer from the server.
public struct UploadFailure: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kind of failure, which decides whether a retry may help and how it is shown.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Refused, DNS, TLS handshake, unreachable: the request never reached the server.
        case cannotConnect
        /// The server's TLS certificate was not accepted (untrusted issuer, expired or not yet
        /// valid, made out for another name). Trying again cannot change that.
        case certificateRejected
        /// The connection was not established within the connect timeout.
        case connectTimeout
        /// Nothing could be written for the stall timeout while sending the body.
        case stalled
        /// The body was sent but no answer came within the answer timeout.
        case noAnswer
        /// The connection closed or reset while the request or answer was in flight.
        case connectionLost
        case cancelled
        /// The file vanished, could not be read, or changed size during the upload.
        case fileError
        /// Reading the file before sending it (opening, checking, stripping the location) took
        /// longer than its limit: a network file system that stopped answering, or a file made
        /// to hold a reader (`PreparationThreads`).
        case preparationStalled
        /// More than the allowed number of 307/308 redirects.
        case tooManyRedirects
        /// The server answered with a success before the whole body was sent: whatever it
        /// stored, it is not the file.
        case answeredEarly
        /// The server's digest of what it received (RFC 9530 `Repr-Digest`) is not that of what
        /// was sent: something between changed the bytes. Sent again.
        case integrityMismatch
        /// Anything the client library reported that fits none of the above.
        case other
    }

    public let kind: Kind
    public let message: String
    /// The underlying error number (errno) or library code, when there is one.
    public let code: Int32?

    public init(_ kind: Kind, _ message: String, code: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.code = code
    }

    public var description: String {
        code.map { "\(message) (code \($0))" } ?? message
    }

    /// Failures worth trying again automatically: the server may be back, the line may recover.
    public var isTransient: Bool {
        switch kind {
        case .cannotConnect, .connectTimeout, .connectionLost, .stalled, .noAnswer, .integrityMismatch: return true
        case .certificateRejected, .cancelled, .fileError, .preparationStalled, .tooManyRedirects, .answeredEarly, .other: return false
        }
    }
}

/// How an upload ended: the server answered (any status), or it failed before an answer.
public enum UploadOutcome: Sendable, Hashable, Codable {
    case answered(status: Int)
    case failed(UploadFailure)

    /// Success means exactly a 2xx answer.
    public var isSuccess: Bool {
        if case .answered(let status) = self { return (200..<300).contains(status) }
        return false
    }
}

extension UploadOutcome {
    /// The outcome of an answer with `status`, weighed against the body: a success that came
    /// before the whole body was sent is not one, the server cannot have the file. (Any other
    /// early answer, a 413 say, is the answer and says so itself.)
    public static func answer(_ status: Int, bytesSent: Int64, expected: Int64?) -> UploadOutcome {
        guard (200..<300).contains(status), let expected, bytesSent < expected else { return .answered(status: status) }
        return .failed(
            UploadFailure(
                .answeredEarly,
                "answered \(status) after \(ByteFormat.bytes(bytesSent)) of \(ByteFormat.bytes(expected)): the file did not arrive whole"))
    }
}

extension UploadOutcome {
    /// The outcome in words, the one way every view says it: `201 Created`,
    /// `413 Payload Too Large`, `cannot connect: Connection refused (code 111)`. `reason` is the
    /// reason phrase the server sent, when there was an answer.
    public func words(reason: String?) -> String {
        switch self {
        case .answered(let status): HTTPStatus.line(status, reason: reason)
        case .failed(let failure): failure.description
        }
    }
}
