import NIOCore
import NIOHTTP1
import UploadCore
import UploadProtocols

/// One request as a carrier takes it: where it goes, its head, its body, and how its progress
/// is reported (from `progressBase`, a resumed body's offset, of `progressTotal`).
struct Exchange: Sendable {
    var method: HTTPMethod
    var endpoint: Endpoint
    var headers: HTTPHeaders
    var body: ExchangeBody = .none
    var progressBase: Int64 = 0
    var progressTotal: Int64? = nil
    /// How long a body waits for `100 Continue` after a head that asks for it (nil: as the
    /// carrier does by default).
    var continueWait: TimeAmount? = nil
    /// Interim answers (a `104` naming an upload resource) as they come; only a carrier that
    /// parses answers itself sees them (`ExchangePath.seesInterimAnswers`).
    var interim: (@Sendable (UploadResponse) -> Void)? = nil

    /// What an answer means for the upload. A success before the whole body was sent is not
    /// one, unless the server says it repeats the answer to an upload it already has
    /// (`Idempotent-Replayed`: the same Idempotency-Key completed before).
    static func outcome(_ response: UploadResponse, bytesSent: Int64, expected: Int64?) -> UploadOutcome {
        if response.header("Idempotent-Replayed")?.lowercased() == "true" { return .answered(status: response.status) }
        return .answer(response.status, bytesSent: bytesSent, expected: expected)
    }
}

/// A request's body.
enum ExchangeBody: Sendable {
    /// None (`HEAD`, `GET`, `OPTIONS`, `DELETE`).
    case none
    /// In memory, in pieces (multipart head, file, tail; a chunk of a stream), written as one.
    case buffers([ByteBuffer])
    /// Read from the file (or the pipe) as the connection takes it.
    case streamed(BodyStreamer)

    /// Bytes it carries; nil for none, or a pipe's of unknown length.
    var length: Int64? {
        switch self {
        case .none: nil
        case .buffers(let pieces): Int64(pieces.reduce(0) { $0 + $1.readableBytes })
        case .streamed(let streamer): streamer.length
        }
    }

    var isNone: Bool {
        if case .none = self { return true }
        return false
    }
}

/// How requests to an endpoint go, as far as the attempt's plan needs to know.
struct ExchangePath: Sendable, Equatable {
    /// On this client's own connections (plain `http`, the direct way on).
    var direct: Bool
    /// Through an HTTP proxy (which may take a `104` for the answer).
    var throughHTTPProxy: Bool
}

/// The one seam between deciding and sending: send this head and body, report progress, give
/// the attempt's result — the answer, or the failure ranked once (`FailureClassifier`). The
/// direct HTTP/1 connections and AsyncHTTPClient conform; `Carriers` picks between them; a fake
/// drives every protocol in tests without sockets.
protocol Exchanger: Sendable {
    func exchange(_ exchange: Exchange, eventLoop: EventLoop, observer: AttemptObserver) async -> AttemptResult
    /// How requests to `endpoint` go.
    func path(to endpoint: Endpoint) -> ExchangePath
}

/// The carriers a transport has: its own HTTP/1 connections where they can take a request
/// (`AttemptPlan.carrier`), AsyncHTTPClient otherwise.
struct Carriers: Exchanger {
    /// nil: the direct way is off.
    let direct: DirectExchanger?
    let client: ClientExchanger

    func path(to endpoint: Endpoint) -> ExchangePath {
        guard let target = direct?.connections.target(endpoint) else { return ExchangePath(direct: false, throughHTTPProxy: false) }
        return ExchangePath(direct: true, throughHTTPProxy: target.proxy?.kind == .http)
    }

    func exchange(_ exchange: Exchange, eventLoop: EventLoop, observer: AttemptObserver) async -> AttemptResult {
        if let direct, let target = direct.connections.target(exchange.endpoint),
            AttemptPlan.carrier(directPossible: true, bodyLength: exchange.body.length, hasBody: !exchange.body.isNone) == .direct
        {
            return await direct.exchange(exchange, to: target, eventLoop: eventLoop, observer: observer)
        }
        return await client.exchange(exchange, eventLoop: eventLoop, observer: observer)
    }
}
