import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import AsyncHTTPClient
import UploadCore

/// The AsyncHTTPClient carrier: TLS, bodies of unknown length (a pipe), CONNECT and SOCKS5
/// proxies; its pool keeps connections alive per host.
final class ClientExchanger: Exchanger {
    /// Through the proxy, when there is one.
    let client: HTTPClient
    /// Straight to the server, for the hosts the no-proxy list names (nil when every request
    /// goes through `client`).
    let bypassClient: HTTPClient?
    let timeouts: UploadTimeouts
    /// What a certificate is checked against the time of.
    let clock: HouseClock
    /// Which proxy each request goes through, by its host.
    let route: ProxyRoute
    /// AsyncHTTPClient's way through a SOCKS5 proxy, or nil.
    let socksBridge: SOCKSBridge?
    /// What a refused certificate is checked against to say why (nil under `--insecure`).
    let certificateRoots: CertificateInspection.Roots?

    /// A client that verifies certificates as `tls` says, within `timeouts`, through the proxy
    /// `route` names for each request's host.
    init(tls: TLSOptions, timeouts: UploadTimeouts, route: ProxyRoute, eventLoopGroup: EventLoopGroup, threadPool: NIOThreadPool, clock: HouseClock) throws {
        self.clock = clock
        self.timeouts = timeouts
        self.route = route
        let proxy = route.proxy
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        var certificateRoots: CertificateInspection.Roots? = tls.insecure ? nil : .system
        if let path = tls.caCertificatePath {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw UploadInputError.cannotRead(path: path, reason: "the CA certificate file is missing or unreadable")
            }
            // Read now, so a file that holds no certificate is refused up front with its name
            // rather than surfacing later as a baffling handshake failure.
            let roots = (try? NIOSSLCertificate.fromPEMFile(path)) ?? []
            guard !roots.isEmpty else {
                throw UploadInputError.cannotRead(path: path, reason: "it holds no PEM certificate (the CA file must be PEM: -----BEGIN CERTIFICATE-----)")
            }
            tlsConfiguration.trustRoots = .certificates(roots)
            if !tls.insecure { certificateRoots = .file(path, certificates: roots) }
        }
        if tls.insecure {
            tlsConfiguration.certificateVerification = .none
        }
        var pool = HTTPClient.Configuration.ConnectionPool()
        // A refused connection must surface at once as "cannot connect", not be retried silently
        // until the connect timeout: the queue's own retry policy decides about trying again.
        pool.retryConnectionEstablishment = false
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tlsConfiguration,
            redirectConfiguration: .disallow,
            timeout: .init(connect: timeouts.connect, read: timeouts.answer),
            connectionPool: pool
        )
        configuration.httpVersion = .http1Only
        if let proxy, proxy.kind == .socks5 {
            let bridge = try SOCKSBridge(proxy: proxy, group: eventLoopGroup, timeout: timeouts.connect, threadPool: threadPool)
            socksBridge = bridge
            configuration.proxy = .socksServer(host: "127.0.0.1", port: bridge.port)
        } else {
            socksBridge = nil
            configuration.proxy = proxy.map(HTTPClient.Configuration.Proxy.init(httpProxy:))
        }
        client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        if route.bypassesSome {
            configuration.proxy = nil
            bypassClient = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        } else {
            bypassClient = nil
        }
        self.certificateRoots = certificateRoots
    }

    func shutdown() async throws {
        try await client.shutdown()
        try await bypassClient?.shutdown()
        socksBridge?.close()
    }

    func path(to endpoint: Endpoint) -> ExchangePath {
        ExchangePath(direct: false, throughHTTPProxy: route.proxy(forHost: endpoint.host)?.kind == .http)
    }

    /// `exchange` and its answer, with the stall watchdog and the answer clock.
    func exchange(_ exchange: Exchange, eventLoop: EventLoop, observer: AttemptObserver) async -> AttemptResult {
        let url = exchange.endpoint.url
        let proxy = route.proxy(forHost: exchange.endpoint.host)
        let client = proxy == nil ? bypassClient ?? self.client : self.client
        let progressBase = exchange.progressBase
        let progressTotal = exchange.progressTotal
        let length = exchange.body.length
        let body: HTTPClient.Body?
        let watch: WriteWatch
        if case .streamed(let streamer) = exchange.body { watch = streamer.watch } else { watch = WriteWatch() }
        switch exchange.body {
        case .none:
            body = nil
        case .buffers(let pieces):
            if pieces.count == 1 {
                body = .byteBuffer(pieces[0])
            } else {
                var joined = ByteBufferAllocator().buffer(capacity: Int(length ?? 0))
                for piece in pieces { joined.writeImmutableBuffer(piece) }
                body = .byteBuffer(joined)
            }
        case .streamed(let streamer):
            body = streamer.makeBody()
        }
        // The answer clock covers the whole answer: AsyncHTTPClient's read timeout restarts at
        // every byte, so a server trickling its answer a byte a second would hold us forever.
        let answerDeadline = NIOLockedValueBox<(scheduled: Scheduled<Void>?, hit: Bool, task: HTTPClient.Task<UploadResponse>?)>((nil, false, nil))
        let answerLimit = timeouts.answer
        let report = observer.progress
        var progress = report
        if progressBase != 0 || progressTotal != nil {
            progress = { @Sendable bytes, total, expected in
                let whole: Int64? = progressTotal ?? expected.map { progressBase + $0 }
                report(bytes, progressBase + total, whole)
            }
        }
        let delegate = UploadDelegate(
            expected: length, onProgress: progress,
            onBodySent: {
                watch.bodyEnded()
                let scheduled = eventLoop.scheduleTask(in: answerLimit) {
                    let task = answerDeadline.withLockedValue { state -> HTTPClient.Task<UploadResponse>? in
                        state.hit = true
                        return state.task
                    }
                    task?.cancel()
                }
                answerDeadline.withLockedValue { $0.scheduled = scheduled }
            })
        let request: HTTPClient.Request
        do {
            request = try HTTPClient.Request(url: url, method: exchange.method, headers: exchange.headers, body: body)
        } catch {
            return AttemptResult(outcome: .failed(UploadFailure(.other, "cannot build a request for \(url): \(error)")), response: nil, bytesSent: 0)
        }
        // `.delegate(on:)`, not `.delegateAndChannel(on:)`: AsyncHTTPClient closes a connection
        // pinned to an event loop as soon as no request for that loop waits, so pinning the
        // channel would cost every upload a fresh TCP (and TLS) handshake. The body streamer and
        // the delegate stay on `eventLoop`; the pool lends any idle keep-alive connection.
        let task = client.execute(request: request, delegate: delegate, eventLoop: .delegate(on: eventLoop))
        answerDeadline.withLockedValue { $0.task = task }
        defer { answerDeadline.withLockedValue { $0.scheduled?.cancel() } }
        let stalled = NIOLockedValueBox(false)
        let watchdog = StallWatchdog(watch: watch, limit: timeouts.stall, eventLoop: eventLoop) {
            stalled.withLockedValue { $0 = true }
            task.cancel()
        }
        defer { watchdog.cancel() }
        do {
            let response = try await withTaskCancellationHandler {
                try await task.futureResult.get()
            } onCancel: {
                task.cancel()
            }
            return AttemptResult(
                outcome: Exchange.outcome(response, bytesSent: delegate.bytesSent, expected: length),
                response: response, bytesSent: delegate.bytesSent)
        } catch {
            let stalledOut = stalled.withLockedValue { $0 }
            let deadlineHit = answerDeadline.withLockedValue { $0.hit }
            let cancelled = error is CancellationError || (error as? HTTPClientError) == .cancelled
            // What arrived of the answer is what happened (its status at least); that its end
            // did not arrive is said with it.
            let captured = delegate.answer
            let arrived: Result<UploadResponse, UploadFailure>? =
                stalledOut
                ? nil
                : error is AnswerCapture.KeptEnough
                    ? captured.whenEnoughWasKept.map { .success($0) }
                    : deadlineHit
                        ? captured.whenTheAnswerClockRanOut(timeouts)
                        : cancelled
                            ? nil
                            : captured.whenTheConnectionEnded.map { .success($0) }
            if case .success(let answer) = arrived {
                return AttemptResult(
                    outcome: Exchange.outcome(answer, bytesSent: delegate.bytesSent, expected: length),
                    response: answer, bytesSent: delegate.bytesSent)
            }
            var failure =
                deadlineHit
                ? FailureClassifier.noAnswer(timeouts)
                : stalledOut
                    ? FailureClassifier.stalled(timeouts)
                    : proxy.flatMap {
                        delegate.bodySent
                            ? nil : FailureClassifier.throughProxy(error, proxy: $0, timeouts: timeouts, bridge: socksBridge, endpoint: exchange.endpoint)
                    }
                        ?? FailureClassifier.classify(error, bodySent: delegate.bodySent, timeouts: timeouts)
            if failure.kind == .certificateRejected {
                failure = await explainCertificate(failure, endpoint: exchange.endpoint, eventLoop: eventLoop)
            }
            return AttemptResult(outcome: .failed(failure), response: nil, bytesSent: delegate.bytesSent)
        }
    }

    /// Replaces BoringSSL's one-size message with what is wrong with the certificate, found by
    /// one more connection that takes the certificates and sends nothing. When that cannot
    /// tell (the server is gone, or every check passes), the original message stays.
    private func explainCertificate(_ failure: UploadFailure, endpoint: Endpoint, eventLoop: EventLoop) async -> UploadFailure {
        guard let roots = certificateRoots else { return failure }
        guard
            let problems = await CertificateInspection.problems(
                host: endpoint.host, port: endpoint.port, roots: roots, eventLoop: eventLoop, timeout: timeouts.connect, now: clock.wall())
        else { return failure }
        return UploadFailure(.certificateRejected, CertificateProblem.describe(problems))
    }
}
