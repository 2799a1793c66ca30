import UploadCore

/// The ordinary upload: one multipart `POST`, sent again where a `307`/`308` points (as curl
/// `--location` does for them: same method, same body), at most `maxRedirects` times. The
/// user's headers (`-H`, `--netrc`) go only to the endpoint's origin (`Endpoint.headers`). A
/// body read from a pipe cannot be read twice: its redirect is the answer.
///
/// A redirect to another origin (scheme, host, port) is not followed unless the user said so
/// (`followsOtherOrigins`, curl's `--location`): any server could otherwise make the client send
/// the user's photo to any host and port, internal ones included. The attempt ends saying where
/// the server wanted the file to go.
///
/// A request whose credentials are part of the request itself (an S3 signature and session
/// token, made for the endpoint's origin) is `signed`: its redirects are followed only within
/// the endpoint's origin (S3's region moves), and one to another origin ends the attempt with
/// where the server wanted the file to go. Signing a request again for whatever origin a
/// `Location` names would hand that origin the user's credentials.
public struct PlainUploadMachine: Sendable {
    /// What the transport does next.
    public enum Next: Sendable {
        /// The request, to this endpoint with these of the user's headers.
        case send(Endpoint, headers: [RequestHeader])
        /// The attempt ends with this (its `bytesSent` counts every request's).
        case finish(AttemptResult)
    }

    public static let maxRedirects = 5

    private let endpoint: Endpoint
    private let headers: [RequestHeader]
    private let canSendAgain: Bool
    private let signed: Bool
    private let followsOtherOrigins: Bool
    private var current: Endpoint
    private var currentHeaders: [RequestHeader]
    private var redirects = 0
    private var bytesSent: Int64 = 0

    /// An upload to `endpoint` with the user's `headers`; `canSendAgain`: the body can be made
    /// again (a file, not a pipe); `signed`: every request carries credentials made for the
    /// endpoint's origin (S3), so no redirect leaves it.
    public init(endpoint: Endpoint, headers: [RequestHeader], canSendAgain: Bool, signed: Bool = false, followsOtherOrigins: Bool = false) {
        self.endpoint = endpoint
        self.headers = headers
        self.canSendAgain = canSendAgain
        self.signed = signed
        self.followsOtherOrigins = followsOtherOrigins
        current = endpoint
        currentHeaders = headers
    }

    /// Where the request goes now (after the redirects followed).
    public var target: Endpoint { current }

    /// Whether no request has been answered yet (the first answer may show a tus server).
    public var isFirstRequest: Bool { redirects == 0 }

    /// The first request.
    public func start() -> Next {
        .send(endpoint, headers: headers)
    }

    /// What the request came back with: its answer is the attempt's, or a redirect to follow.
    public mutating func answered(_ result: AttemptResult) -> Next {
        bytesSent += result.bytesSent
        guard let response = result.response, response.status == 307 || response.status == 308,
            let location = response.header("Location"), let next = current.resolve(location), canSendAgain
        else {
            return .finish(AttemptResult(outcome: result.outcome, response: result.response, bytesSent: bytesSent))
        }
        guard redirects < Self.maxRedirects else {
            return .finish(
                AttemptResult(
                    outcome: .failed(UploadFailure(.tooManyRedirects, "more than \(Self.maxRedirects) redirects; the last pointed to \(next.shown)")),
                    response: response, bytesSent: bytesSent))
        }
        if !endpoint.sharesCredentials(with: next), signed || !followsOtherOrigins {
            let why =
                signed
                ? Self.leftOrigin(status: response.status, to: next, from: endpoint)
                : Self.otherOrigin(status: response.status, to: next, from: endpoint)
            return .finish(AttemptResult(outcome: .failed(UploadFailure(.other, why)), response: response, bytesSent: bytesSent))
        }
        redirects += 1
        current = next
        currentHeaders = endpoint.headers(headers, to: next)
        return .send(next, headers: currentHeaders)
    }

    /// The same request once more, where it went last, after `result` (counted) was put right
    /// (a missing folder made). A pipe's body cannot be read again: `result` is the answer.
    public mutating func again(after result: AttemptResult) -> Next {
        bytesSent += result.bytesSent
        guard canSendAgain else { return .finish(AttemptResult(outcome: result.outcome, response: result.response, bytesSent: bytesSent)) }
        return .send(current, headers: currentHeaders)
    }

    /// Why an upload did not follow a redirect to another origin, and what would make it.
    static func otherOrigin(status: Int, to next: Endpoint, from endpoint: Endpoint) -> String {
        "the server answered \(status) and wanted the file at \(next.shown), another origin than the endpoint's "
            + "(\(endpoint.origin)): a redirect elsewhere is followed only when asked, as curl follows none without -L, so the file was not sent there. "
            + "Give that URL with --to, or add -L (--location) to follow redirects to other origins (your -H headers and login stay with the endpoint's)"
    }

    /// Why a signed upload did not follow a redirect to another origin, and where it was sent.
    static func leftOrigin(status: Int, to next: Endpoint, from endpoint: Endpoint) -> String {
        "the server answered \(status) and wanted the file at \(next.shown), another origin than the endpoint's "
            + "(\(endpoint.origin)): an S3 request is signed with your credentials for that origin alone, so it was not sent there. "
            + "If the bucket is served there, name that endpoint (AWS_ENDPOINT_URL_S3)"
    }
}
