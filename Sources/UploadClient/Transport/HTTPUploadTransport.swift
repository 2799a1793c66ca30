import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import AsyncHTTPClient
import UploadCore
import UploadProtocols

/// The real transport: one shared AsyncHTTPClient (keep-alive reuse per host), bodies streamed
/// from disk by `BodyStreamer`, progress from `didSendRequestPart`.
public final class HTTPUploadTransport: UploadTransport {
    public static let defaultChunkSize = 256 * 1024
    public static let maxRedirects = PlainUploadMachine.maxRedirects

    let client: HTTPClient
    let threadPool: NIOThreadPool
    let chunkSize: Int
    let timeouts: UploadTimeouts
    let rateLimit: Int64?
    /// A limit shared with other transports (the agent's total rate), or nil.
    let sharedLimit: SharedRateLimit?
    /// What a refused certificate is checked against to say why (nil under `--insecure`).
    let certificateRoots: CertificateInspection.Roots?
    /// Whether uploads continue where a server that resumes has them (`--no-resume`: false).
    let resume: Bool
    /// Whether photos are sent without where they were taken (`--strip-location`).
    let stripLocation: Bool
    /// Whether uploads carry their digest and ask for the server's (`--no-digest`: false).
    let digests: Bool
    /// Whether each upload works out its file's SHA-256 as it is read ("already sent" by
    /// content, the `content` event), with digests on. `send` leaves it to later (the journal
    /// keeps what was sent by path and stamps, hashed when "already sent" is asked): a second
    /// SHA-256 of every byte on the way would cost more than sending them on a fast link.
    let contentIdentity: Bool
    /// The protocol uploads speak (`--protocol`).
    let uploadProtocol: UploadProtocol
    /// Bytes per tus `PATCH` at most (`--chunk-size`), or nil for the rest in one.
    let tusChunkSize: Int64?
    /// The proxy every request goes through, or nil.
    let proxy: ProxyTarget?
    /// The URLs requests go to, parsed.
    let endpoints = ParsedEndpoints()
    /// Which origins resume uploads, found out once per origin.
    let support = ResumeSupport()
    /// What requests to each origin showed of the link (tus chunks are sized from it).
    let links = NIOLockedValueBox<[String: LinkEstimate]>([:])
    /// Whether small plain-HTTP bodies go the direct way (`DirectHTTP1.swift`) rather than
    /// through AsyncHTTPClient.
    let direct: Bool
    /// The direct way's keep-alive connections (to the proxy, when there is an HTTP one).
    let connections: DirectConnections
    /// AsyncHTTPClient's way through a SOCKS5 proxy, or nil.
    let socksBridge: SOCKSBridge?
    /// The event loops as task executors, handed out in turn.
    let loopExecutors: EventLoopTaskExecutors

    public init(
        tls: TLSOptions = TLSOptions(),
        timeouts: UploadTimeouts = UploadTimeouts(),
        chunkSize: Int = HTTPUploadTransport.defaultChunkSize,
        rateLimit: Int64? = nil,
        sharedLimit: SharedRateLimit? = nil,
        resume: Bool = true,
        stripLocation: Bool = false,
        proxy: ProxyTarget? = nil,
        digests: Bool = true,
        contentIdentity: Bool = true,
        uploadProtocol: UploadProtocol = .auto,
        tusChunkSize: Int64? = nil,
        direct: Bool = true,
        eventLoopGroup: EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        threadPool: NIOThreadPool = .singleton
    ) throws {
        self.resume = resume
        self.stripLocation = stripLocation
        self.digests = digests
        self.contentIdentity = contentIdentity
        self.uploadProtocol = uploadProtocol
        self.tusChunkSize = tusChunkSize
        // Through an HTTP proxy, plain-HTTP requests go the direct way as absolute-form requests
        // to the proxy (as curl sends them: many proxies allow CONNECT to port 443 only), and
        // through SOCKS5 in a tunnel of the direct way's own; TLS goes AsyncHTTPClient's way
        // (CONNECT, or SOCKS5 by the loopback bridge, which logs in and resolves as asked).
        self.direct = direct
        self.proxy = proxy
        connections = DirectConnections(proxy: proxy, threadPool: threadPool)
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
        self.client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration)
        self.loopExecutors = EventLoopTaskExecutors(eventLoopGroup)
        self.threadPool = threadPool
        self.chunkSize = chunkSize
        self.rateLimit = rateLimit
        self.sharedLimit = sharedLimit
        self.timeouts = timeouts
        self.certificateRoots = certificateRoots
    }

    /// A transport that sends as `settings` say, within `sharedLimit` if given.
    public convenience init(settings: TransportSettings, sharedLimit: SharedRateLimit? = nil, contentIdentity: Bool = true) throws {
        try self.init(
            tls: TLSOptions(caCertificatePath: settings.caCertificatePath, insecure: settings.insecure),
            timeouts: UploadTimeouts(
                connect: .nanoseconds(DurationRule.nanoseconds(settings.connectTimeout)),
                stall: .nanoseconds(DurationRule.nanoseconds(settings.stallTimeout)),
                answer: .nanoseconds(DurationRule.nanoseconds(settings.answerTimeout))
            ),
            rateLimit: settings.rateLimit,
            sharedLimit: sharedLimit,
            resume: settings.resume,
            stripLocation: settings.stripLocation,
            proxy: try settings.proxy.map { text throws(UploadInputError) in try ProxyTarget(parsing: text) },
            digests: settings.digests,
            contentIdentity: contentIdentity,
            uploadProtocol: settings.uploadProtocol,
            tusChunkSize: settings.chunkSize
        )
    }

    public func shutdown() async throws {
        connections.closeAll()
        try await client.shutdown()
        socksBridge?.close()
    }

    public func beginAttempt() -> (any TaskExecutor)? {
        loopExecutors.acquire()
    }

    public func endAttempt(on executor: (any TaskExecutor)?) {
        loopExecutors.release(executor)
    }

    public func perform(_ request: UploadRequest, observer: AttemptObserver) async -> AttemptResult {
        // The loop the attempt runs on when the queue gave it one (`beginAttempt`).
        let eventLoop = client.eventLoopGroup.any()
        let prepared: Prepared
        do throws(UploadFailure) {
            prepared = try await prepare(request, eventLoop: eventLoop)
        } catch {
            return AttemptResult(outcome: .failed(error), response: nil, bytesSent: 0)
        }
        let origin = prepared.endpoint.origin.description
        let target = direct ? connections.target(prepared.endpoint) : nil
        var plan = AttemptPlan(
            asked: uploadProtocol, resume: resume, point: request.resume?.kind, handedOut: request.uploadURL != nil,
            size: prepared.source.isPipe ? nil : prepared.source.size,
            directPossible: target != nil, throughHTTPProxy: target?.proxy?.kind == .http,
            bodyInMemory: prepared.preloaded != nil && rateLimit == nil && sharedLimit == nil,
            known: await support.known(origin))
        while true {
            switch plan.route {
            case .ask where plan.askAfresh:
                // A tus server refused the multipart body (it takes no other): what it offers.
                let capabilities = await askSupport(request, eventLoop: eventLoop).tusCapabilities ?? .assumed
                support.learned(origin, .tus(capabilities))
                plan.learnt(.tus(capabilities))
            case .ask:
                plan.learnt(await support.answer(for: origin) { [self] in await askSupport(request, eventLoop: eventLoop) }.0)
            case .tus(let capabilities):
                let result = await sendTus(request, prepared, capabilities: capabilities, eventLoop: eventLoop, observer: observer)
                guard plan.tusAttemptRefused(result) else { return result }
                support.refused(origin)
            case .draft(let optimistic):
                if let result = await performResumable(request, prepared, optimistic: optimistic, eventLoop: eventLoop, observer: observer) {
                    return result
                }
                plan.draftWentPlain()
            case .multipart(let inOneWrite):
                if let result = await sendMultipart(request, prepared, inOneWrite: inOneWrite, plan: &plan, eventLoop: eventLoop, observer: observer) {
                    return result
                }
            }
        }
    }

    func makeStreamer(
        _ layout: MultipartLayout, _ prepared: Prepared, pipePrefix: ByteBuffer?, startOffset: Int64 = 0, digest: BodyDigest? = nil,
        eventLoop: EventLoop
    ) -> BodyStreamer {
        BodyStreamer(
            layout: layout, source: prepared.source, pipePrefix: pipePrefix, preloaded: prepared.preloaded,
            chunkSize: streamChunkSize,
            threadPool: threadPool, eventLoop: eventLoop,
            watch: WriteWatch(idleCounts: !prepared.source.isPipe && rateLimit == nil && sharedLimit == nil),
            rateLimit: rateLimit, sharedLimit: sharedLimit,
            startOffset: startOffset, digest: digest
        )
    }

    /// Bytes per body write: smaller under a rate limit (a twentieth of a second's worth of the
    /// lower of this upload's and the shared limit), so the pacing is smooth and a file smaller
    /// than one chunk cannot go out in one burst.
    var streamChunkSize: Int {
        let limits = [rateLimit, sharedLimit?.bytesPerSecond].compactMap { $0 }
        return limits.min().map { Int(min(Int64(chunkSize), max($0 / 20, 4096))) } ?? chunkSize
    }

    /// The headers of a request that carries the whole upload: the user's, the body's type and
    /// the upload's `Idempotency-Key` (unless the user gave one).
    func uploadHeaders(_ headers: [RequestHeader], _ layout: MultipartLayout, idempotencyKey: String?) -> HTTPHeaders {
        var fields = baseHeaders(headers)
        fields.replaceOrAdd(name: "Content-Type", value: layout.contentTypeHeader)
        if let key = idempotencyKey, fields["Idempotency-Key"].isEmpty {
            fields.add(name: "Idempotency-Key", value: "\"\(key)\"")
        }
        return fields
    }

    /// The user's headers (`-H`) and our User-Agent; the body's own headers are set per request.
    func baseHeaders(_ headers: [RequestHeader]) -> HTTPHeaders {
        var httpHeaders = HTTPHeaders()
        for header in headers where header.name.lowercased() != "content-type" && header.name.lowercased() != "content-length" {
            httpHeaders.add(name: header.name, value: header.value)
        }
        if httpHeaders["User-Agent"].isEmpty {
            httpHeaders.add(name: "User-Agent", value: "uploadmon/\(UploadmonVersion.current)")
        }
        return httpHeaders
    }

    /// One request and its answer, with the stall watchdog and the answer clock. `length` is the
    /// body's; progress is reported from `progressBase` (a resumed body's offset) of `progressTotal`.
    func exchange(
        url: String, method: HTTPMethod, headers httpHeaders: HTTPHeaders, body: HTTPClient.Body?, length: Int64?,
        watch: WriteWatch = WriteWatch(), progressBase: Int64 = 0, progressTotal: Int64? = nil,
        eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
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
        let delegate = UploadDelegate(expected: length, onProgress: progress, onBodySent: {
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
            request = try HTTPClient.Request(url: url, method: method, headers: httpHeaders, body: body)
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
            return AttemptResult(outcome: Self.outcome(response, bytesSent: delegate.bytesSent, expected: length),
                                 response: response, bytesSent: delegate.bytesSent)
        } catch {
            let stalledOut = stalled.withLockedValue { $0 }
            let deadlineHit = answerDeadline.withLockedValue { $0.hit }
            let cancelled = error is CancellationError || (error as? HTTPClientError) == .cancelled
            // What arrived of the answer is what happened (its status at least); that its end
            // did not arrive is said with it.
            let captured = delegate.answer
            let arrived: Result<UploadResponse, UploadFailure>? = stalledOut ? nil
                : error is AnswerCapture.KeptEnough ? captured.whenEnoughWasKept.map { .success($0) }
                : deadlineHit ? captured.whenTheAnswerClockRanOut(timeouts)
                : cancelled ? nil
                : captured.whenTheConnectionEnded.map { .success($0) }
            if case .success(let answer) = arrived {
                return AttemptResult(outcome: Self.outcome(answer, bytesSent: delegate.bytesSent, expected: length),
                                     response: answer, bytesSent: delegate.bytesSent)
            }
            var failure = deadlineHit ? FailureClassifier.noAnswer(timeouts)
                : stalledOut ? FailureClassifier.stalled(timeouts)
                : proxy.flatMap { delegate.bodySent ? nil : FailureClassifier.throughProxy(error, proxy: $0, timeouts: timeouts, bridge: socksBridge, endpoint: endpoints(url)) }
                    ?? FailureClassifier.classify(error, bodySent: delegate.bodySent, timeouts: timeouts)
            if failure.kind == .certificateRejected {
                failure = await explainCertificate(failure, url: url, eventLoop: eventLoop)
            }
            return AttemptResult(outcome: .failed(failure), response: nil, bytesSent: delegate.bytesSent)
        }
    }

    /// What an answer means for the upload. A success before the whole body was sent is not
    /// one, unless the server says it repeats the answer to an upload it already has
    /// (`Idempotent-Replayed`: the same Idempotency-Key completed before).
    static func outcome(_ response: UploadResponse, bytesSent: Int64, expected: Int64?) -> UploadOutcome {
        if response.header("Idempotent-Replayed")?.lowercased() == "true" { return .answered(status: response.status) }
        return .answer(response.status, bytesSent: bytesSent, expected: expected)
    }

    /// Replaces BoringSSL's one-size message with what is wrong with the certificate, found by
    /// one more connection that takes the certificates and sends nothing. When that cannot
    /// tell (the server is gone, or every check passes), the original message stays.
    private func explainCertificate(_ failure: UploadFailure, url: String, eventLoop: EventLoop) async -> UploadFailure {
        guard let roots = certificateRoots, let endpoint = endpoints(url) else { return failure }
        guard let problems = await CertificateInspection.problems(
            host: endpoint.host, port: endpoint.port, roots: roots, eventLoop: eventLoop, timeout: timeouts.connect, now: Date())
        else { return failure }
        return UploadFailure(.certificateRejected, CertificateProblem.describe(problems))
    }
}
