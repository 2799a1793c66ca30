import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import UploadCore

/// The direct carrier (`DirectHTTP1.swift`): plain-HTTP/1.1 requests on this client's own
/// keep-alive connections, written and parsed by `DirectConnectionMachine`.
final class DirectExchanger: Exchanger {
    let connections: DirectConnections
    let timeouts: UploadTimeouts

    init(connections: DirectConnections, timeouts: UploadTimeouts) {
        self.connections = connections
        self.timeouts = timeouts
    }

    func path(to endpoint: Endpoint) -> ExchangePath {
        let target = connections.target(endpoint)
        return ExchangePath(direct: target != nil, throughHTTPProxy: target?.proxy?.kind == .http)
    }

    func exchange(_ exchange: Exchange, eventLoop: EventLoop, observer: AttemptObserver) async -> AttemptResult {
        guard let target = connections.target(exchange.endpoint) else {
            return AttemptResult(
                outcome: .failed(UploadFailure(.other, "\(exchange.endpoint.shown) cannot be reached the direct way (not plain http)")),
                response: nil, bytesSent: 0)
        }
        return await self.exchange(exchange, to: target, eventLoop: eventLoop, observer: observer)
    }

    /// `exchange` on a connection to `target`.
    func exchange(_ exchange: Exchange, to target: DirectTarget, eventLoop: EventLoop, observer: AttemptObserver) async -> AttemptResult {
        let body: DirectBody
        let length: Int64?
        switch exchange.body {
        case .none:
            (body, length) = (.buffers([]), nil)
        case .buffers(let pieces):
            (body, length) = (.buffers(pieces), exchange.body.length)
        case .streamed(let streamer):
            (body, length) = (streamer.directBody, streamer.length)
        }
        return await send(
            target, method: exchange.method, headers: exchange.headers, body: body, length: length,
            progressBase: exchange.progressBase, progressTotal: exchange.progressTotal,
            eventLoop: eventLoop, observer: observer, interim: exchange.interim, continueWait: exchange.continueWait)
    }

    /// One request on a direct connection, and its answer: `length` body bytes (nil: none, as
    /// for `HEAD`), progress reported from `progressBase` (a resumed body's offset) of
    /// `progressTotal`; `interim` gets the interim answers (a `104`) as they come.
    func send(
        _ target: DirectTarget, method: HTTPMethod = .POST, headers: HTTPHeaders, body: DirectBody, length: Int64?,
        progressBase: Int64 = 0, progressTotal: Int64? = nil,
        eventLoop: EventLoop, observer: AttemptObserver, interim: (@Sendable (UploadResponse) -> Void)? = nil,
        continueWait: TimeAmount? = nil
    ) async -> AttemptResult {
        var fields = headers
        if fields["Host"].isEmpty { fields.add(name: "Host", value: target.hostHeader) }
        if let login = target.proxyAuthorization { fields.replaceOrAdd(name: "Proxy-Authorization", value: login) }
        if let length { fields.replaceOrAdd(name: "Content-Length", value: String(length)) }
        let progress = observer.progress
        let reported = NIOLockedValueBox<Int64>(0)
        let whole = progressTotal ?? length.map { progressBase + $0 }
        let exchange = DirectExchange(
            head: HTTPRequestHead(version: .http1_1, method: method, uri: target.uri, headers: fields),
            body: body, timeouts: timeouts,
            sent: { count in
                guard count > 0 else { return }
                let delta = reported.withLockedValue { before in
                    defer { before = count }
                    return count - before
                }
                progress(delta, progressBase + count, whole)
            }, interim: interim, continueWait: continueWait)
        for _ in 0..<2 {
            let connection: DirectConnection
            let reused: Bool
            if let idle = connections.take(target.peer, preferring: eventLoop) {
                connection = idle
                reused = true
            } else {
                do {
                    connection = try await connect(target.peer, eventLoop: eventLoop)
                } catch {
                    let failure =
                        target.proxy.flatMap { FailureClassifier.throughProxy(error, proxy: $0, timeouts: timeouts) }
                        ?? FailureClassifier.classify(error, bodySent: false, timeouts: timeouts)
                    return AttemptResult(outcome: .failed(failure), response: nil, bytesSent: 0)
                }
                reused = false
            }
            let result = await withTaskCancellationHandler {
                (try? await connection.run(exchange).get()) ?? DirectResult(failure: UploadFailure(.other, "the connection's event loop is gone"))
            } onCancel: {
                connection.cancel()
            }
            if result.reusable { connections.park(connection, target.peer) }
            if Task.isCancelled, result.failure != nil {
                return AttemptResult(outcome: .failed(FailureClassifier.cancelled(bodySent: result.bodySent)), response: nil, bytesSent: result.bytesSent)
            }
            if let failure = result.failure, failure.kind == .connectionLost, reused, !result.receivedAnything, !Task.isCancelled,
                body.isInMemory || result.bytesSent == 0
            {
                // The server closed the idle connection as it was taken: once more on a new one.
                // Not a streamed body some of which went out (a link cut under a resumable
                // append): the attempt ends, and the next asks the server where it got to.
                continue
            }
            if let response = result.response {
                if response.status == 407, let proxy = target.proxy, proxy.kind == .http {
                    // The proxy's answer, not the server's.
                    return AttemptResult(outcome: .failed(FailureClassifier.proxyWantsLogin(proxy)), response: nil, bytesSent: result.bytesSent)
                }
                return AttemptResult(
                    outcome: Exchange.outcome(response, bytesSent: result.bytesSent, expected: length),
                    response: response, bytesSent: result.bytesSent)
            }
            return AttemptResult(
                outcome: .failed(result.failure ?? UploadFailure(.other, "the upload ended without an answer")),
                response: nil, bytesSent: result.bytesSent)
        }
        return AttemptResult(
            outcome: .failed(UploadFailure(.connectionLost, "the server closed the connection before the upload began")),
            response: nil, bytesSent: 0)
    }

    /// A new connection; cancelling the task gives up at once (a connect in flight is closed
    /// when it completes).
    private func connect(_ peer: DirectConnections.Peer, eventLoop: EventLoop) async throws -> DirectConnection {
        let connecting = connections.connect(peer, on: eventLoop, timeout: timeouts.connect)
        let ready = eventLoop.makePromise(of: DirectConnection.self)
        connecting.cascade(to: ready)
        return try await withTaskCancellationHandler {
            try await ready.futureResult.get()
        } onCancel: {
            ready.fail(FailureClassifier.cancelled(bodySent: false))
            connecting.whenSuccess { $0.close() }
        }
    }

}
