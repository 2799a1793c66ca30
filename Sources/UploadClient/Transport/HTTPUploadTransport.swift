import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import UploadCore
import UploadProtocols

/// The real transport: each attempt prepares the file, follows its `AttemptPlan` (ask, tus, the
/// draft, multipart) through the protocols' machines, and hands every request to the exchanger
/// (this client's own HTTP/1 connections where they can, AsyncHTTPClient otherwise); bodies are
/// streamed from disk by `BodyStreamer`.
public final class HTTPUploadTransport: UploadTransport {
    public static let defaultChunkSize = 256 * 1024
    public static let maxRedirects = PlainUploadMachine.maxRedirects

    /// AsyncHTTPClient's carrier (closed with the transport).
    let carrier: ClientExchanger
    let eventLoopGroup: EventLoopGroup
    /// What carries each request: the direct way or AsyncHTTPClient (`Carriers`), or what a test gives.
    let exchanger: any Exchanger
    let threadPool: NIOThreadPool
    let chunkSize: Int
    let timeouts: UploadTimeouts
    let rateLimit: Int64?
    /// A limit shared with other transports (the agent's total rate), or nil.
    let sharedLimit: SharedRateLimit?
    /// Whether uploads continue where a server that resumes has them (`--no-resume`: false).
    let resume: Bool
    /// Whether photos are sent without where they were taken (`--strip-location`).
    let stripLocation: Bool
    /// What photos are made into before they are sent (`--convert`, `--max-dimension`,
    /// `--max-bytes`), or nil.
    let conversion: PhotoConversion?
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
    /// `PUT`: missing WebDAV folders are made (`--create-dirs`).
    let createDirs: Bool
    /// A redirect to another origin is followed (`--location`).
    let followsRedirectsElsewhere: Bool
    /// Which proxy each request goes through, by its host.
    let proxyRoute: ProxyRoute
    /// Where a file is read before its upload, and for how long at most (`PreparationThreads`).
    let preparation: PreparationThreads
    /// Files made ready ahead of their uploads' turn (`prepareAhead`).
    let ahead = PreparedAhead()
    let preparationLimit: TimeAmount
    /// The URLs requests go to, parsed.
    let endpoints = ParsedEndpoints()
    /// How `s3://` uploads are signed, read from the environment and the AWS files when first needed.
    let s3Access: S3AccessSource
    /// Which origins resume uploads, found out once per origin.
    let support: ResumeSupport
    /// What the transport reads the time from (remembered answers' ages, S3 signatures,
    /// certificate checks, the link's pace).
    let clock: HouseClock
    /// What requests to each origin showed of the link (tus chunks are sized from it).
    let links = NIOLockedValueBox<[String: LinkEstimate]>([:])
    /// The direct way's keep-alive connections (to the proxy, when there is an HTTP one).
    let connections: DirectConnections
    /// The event loops as task executors, handed out in turn.
    let loopExecutors: EventLoopTaskExecutors

    public convenience init(
        tls: TLSOptions = TLSOptions(),
        timeouts: UploadTimeouts = UploadTimeouts(),
        chunkSize: Int = HTTPUploadTransport.defaultChunkSize,
        rateLimit: Int64? = nil,
        sharedLimit: SharedRateLimit? = nil,
        resume: Bool = true,
        stripLocation: Bool = false,
        proxy: ProxyTarget? = nil,
        noProxy: String? = nil,
        digests: Bool = true,
        contentIdentity: Bool = true,
        uploadProtocol: UploadProtocol = .auto,
        tusChunkSize: Int64? = nil,
        createDirs: Bool = false,
        direct: Bool = true,
        eventLoopGroup: EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        threadPool: NIOThreadPool = .singleton,
        clock: HouseClock = .system,
        followsRedirectsElsewhere: Bool = false,
        conversion: PhotoConversion? = nil
    ) throws {
        try self.init(
            tls: tls, timeouts: timeouts, chunkSize: chunkSize, rateLimit: rateLimit, sharedLimit: sharedLimit, resume: resume,
            stripLocation: stripLocation, proxy: proxy, noProxy: noProxy, digests: digests, contentIdentity: contentIdentity,
            uploadProtocol: uploadProtocol, tusChunkSize: tusChunkSize, createDirs: createDirs, direct: direct, eventLoopGroup: eventLoopGroup,
            threadPool: threadPool, exchanger: nil, clock: clock, followsRedirectsElsewhere: followsRedirectsElsewhere,
            conversion: conversion)
    }

    /// `exchanger`: what carries the requests (nil: the direct way where it can, AsyncHTTPClient otherwise).
    init(
        tls: TLSOptions = TLSOptions(),
        timeouts: UploadTimeouts = UploadTimeouts(),
        chunkSize: Int = HTTPUploadTransport.defaultChunkSize,
        rateLimit: Int64? = nil,
        sharedLimit: SharedRateLimit? = nil,
        resume: Bool = true,
        stripLocation: Bool = false,
        proxy: ProxyTarget? = nil,
        noProxy: String? = nil,
        digests: Bool = true,
        contentIdentity: Bool = true,
        uploadProtocol: UploadProtocol = .auto,
        tusChunkSize: Int64? = nil,
        createDirs: Bool = false,
        direct: Bool = true,
        eventLoopGroup: EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        threadPool: NIOThreadPool = .singleton,
        exchanger: (any Exchanger)?,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        preparationLimit: TimeAmount = PreparationThreads.defaultLimit,
        preparation: PreparationThreads = .shared,
        clock: HouseClock = .system,
        followsRedirectsElsewhere: Bool = false,
        conversion: PhotoConversion? = nil
    ) throws {
        self.conversion = conversion
        self.followsRedirectsElsewhere = followsRedirectsElsewhere
        self.preparation = preparation
        self.preparationLimit = preparationLimit
        s3Access = S3AccessSource(environment: environment)
        self.clock = clock
        support = ResumeSupport(clock: clock)
        self.resume = resume
        self.stripLocation = stripLocation
        self.digests = digests
        self.contentIdentity = contentIdentity
        self.uploadProtocol = uploadProtocol
        self.tusChunkSize = tusChunkSize
        self.createDirs = createDirs
        // Through an HTTP proxy, plain-HTTP requests go the direct way as absolute-form requests
        // to the proxy (as curl sends them: many proxies allow CONNECT to port 443 only), and
        // through SOCKS5 in a tunnel of the direct way's own; TLS goes AsyncHTTPClient's way
        // (CONNECT, or SOCKS5 by the loopback bridge, which logs in and resolves as asked).
        // Each request's own host decides whether it goes through the proxy (`ProxyRoute`).
        proxyRoute = ProxyRoute(proxy: proxy, bypass: noProxy)
        connections = DirectConnections(route: proxyRoute, threadPool: threadPool)
        let carrier = try ClientExchanger(tls: tls, timeouts: timeouts, route: proxyRoute, eventLoopGroup: eventLoopGroup, threadPool: threadPool, clock: clock)
        self.carrier = carrier
        self.eventLoopGroup = eventLoopGroup
        self.exchanger =
            exchanger
            ?? Carriers(
                direct: direct ? DirectExchanger(connections: connections, timeouts: timeouts) : nil,
                client: carrier)
        self.loopExecutors = EventLoopTaskExecutors(eventLoopGroup)
        self.threadPool = threadPool
        self.chunkSize = chunkSize
        self.rateLimit = rateLimit
        self.sharedLimit = sharedLimit
        self.timeouts = timeouts
    }

    /// A transport that sends as `settings` say, within `sharedLimit` if given.
    /// `preparationLimit`: how long reading a file before its upload may take.
    public convenience init(
        settings: TransportSettings, sharedLimit: SharedRateLimit? = nil, contentIdentity: Bool = true,
        preparationLimit: TimeAmount = PreparationThreads.defaultLimit, clock: HouseClock = .system
    ) throws {
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
            proxy: try settings.proxyRoute().proxy,
            noProxy: settings.noProxy,
            digests: settings.digests,
            contentIdentity: contentIdentity,
            uploadProtocol: settings.uploadProtocol,
            tusChunkSize: settings.chunkSize,
            createDirs: settings.createDirs,
            exchanger: nil,
            preparationLimit: preparationLimit,
            clock: clock,
            followsRedirectsElsewhere: settings.followsRedirectsElsewhere,
            conversion: settings.conversion
        )
    }

    /// Closes its connections and HTTP clients.
    public func shutdown() async throws {
        connections.closeAll()
        try await carrier.shutdown()
    }

    public func beginAttempt() -> (any TaskExecutor)? {
        loopExecutors.acquire()
    }

    public func endAttempt(on executor: (any TaskExecutor)?) {
        loopExecutors.release(executor)
    }

    public func perform(_ request: UploadRequest, observer: AttemptObserver) async -> AttemptResult {
        // The loop the attempt runs on when the queue gave it one (`beginAttempt`).
        let eventLoop = eventLoopGroup.any()
        let prepared: Prepared
        do throws(UploadFailure) {
            prepared = try await prepare(request, eventLoop: eventLoop)
        } catch {
            return AttemptResult(outcome: .failed(error), response: nil, bytesSent: 0)
        }
        let origin = prepared.endpoint.origin.description
        let path = exchanger.path(to: prepared.endpoint)
        var plan = AttemptPlan(
            asked: prepared.s3 == nil ? uploadProtocol : .put, resume: resume, point: request.resume?.kind, handedOut: request.uploadURL != nil,
            size: prepared.source.isPipe ? nil : prepared.source.size,
            directPossible: path.direct, throughHTTPProxy: path.throughHTTPProxy,
            // A shared limit not in force right now (the agent always has one) does not keep a
            // small file from going out in one write: under one, the chunk is smaller and little is preloaded.
            bodyInMemory: prepared.preloaded != nil && rateLimit == nil && sharedLimit?.bytesPerSecond == nil,
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
            case .put(let inOneWrite):
                return await sendPut(request, prepared, inOneWrite: inOneWrite, eventLoop: eventLoop, observer: observer)
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
}
