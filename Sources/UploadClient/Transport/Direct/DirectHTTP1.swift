import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import AsyncHTTPClient
import UploadCore

// Plain-HTTP/1.1 uploads whose whole body is already in memory (a file of up to one chunk: the
// common photo), sent on SwiftNIO directly: head, body and end leave in one flush on a
// keep-alive connection of our own pool.
//
// AsyncHTTPClient's general machinery (request validation, its pool's state machines, the head
// flushed apart from the body, a delegate behind locks, hops between the caller and the loop)
// cost more CPU per small upload than the upload itself: 1,000 photos of 64 KiB took twice
// curl's CPU. Everything it did that these uploads need is here: the connect, stall and answer
// clocks, early answers, cancellation, keep-alive reuse with idle expiry, and one retry on a
// fresh connection when a reused one turns out to have been closed (as curl does).
// TLS, streamed bodies, rate limits and resumable uploads stay with AsyncHTTPClient.

/// Where a direct upload goes: only `http` URLs with a host, straight to it, through an HTTP
/// proxy, or through a SOCKS5 tunnel.
struct DirectTarget: Sendable, Equatable {
    /// Where the connection goes: the URL's host, or the proxy.
    var peer: DirectConnections.Peer
    /// The request target: the path (at least `/`) and the query, as written in the URL; the
    /// whole URL (absolute form) through a proxy.
    let uri: String
    /// The `Host` header: the host, bracketed if IPv6, with the port unless it is 80.
    let hostHeader: String
    /// `Proxy-Authorization` for a proxy with a login.
    var proxyAuthorization: String?
    /// The proxy the request goes through, for naming it when it fails.
    var proxy: ProxyTarget?

    init?(_ endpoint: Endpoint, proxy: ProxyTarget? = nil) {
        guard let direct = DirectTarget(endpoint) else { return nil }
        guard let proxy else {
            self = direct
            return
        }
        guard proxy.kind == .http else {
            // Through SOCKS5 the connection is a tunnel to the server: the request is as sent
            // direct (`DirectConnections.connect` makes the tunnel).
            self = direct
            self.proxy = proxy
            peer = .init(host: direct.peer.host, port: direct.peer.port, tunnel: proxy)
            return
        }
        peer = .init(host: proxy.host, port: proxy.port)
        uri = "http://" + direct.hostHeader + direct.uri
        hostHeader = direct.hostHeader
        self.proxy = proxy
        proxyAuthorization = proxy.login.map { login in
            "Basic " + Data("\(login):\(proxy.password ?? "")".utf8).base64EncodedString()
        }
    }

    private init?(_ endpoint: Endpoint) {
        guard !endpoint.isSecure else { return nil }
        // The target goes on the request line as is: visible ASCII only, or not the direct way.
        guard endpoint.target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        peer = .init(host: endpoint.host, port: endpoint.port)
        uri = endpoint.target
        hostHeader = endpoint.hostField
    }
}

/// The keep-alive connections of direct uploads, idle ones kept per peer until reused, closed
/// by the server, or idle for `idleTimeout`.
final class DirectConnections: Sendable {
    /// The proxy each connection goes through, by the server's host, or none: an HTTP one is
    /// connected to as the origin (`DirectTarget`), a SOCKS5 one tunnels to it.
    let route: ProxyRoute
    let threadPool: NIOThreadPool

    init(route: ProxyRoute = ProxyRoute(), threadPool: NIOThreadPool = .singleton) {
        self.route = route
        self.threadPool = threadPool
    }

    /// Where a connection goes (host and port): the server, or the HTTP proxy in between, and
    /// the SOCKS5 proxy that tunnels to it, if one does. Not an origin in RFC 6454's sense
    /// (UploadCore's `Origin`): connections through one HTTP proxy to many servers share one.
    struct Peer: Hashable, Sendable {
        let host: String
        let port: Int
        var tunnel: ProxyTarget? = nil
    }

    /// Idle connections kept per peer; more are closed when their upload ends.
    static let idleLimit = 16
    static let idleTimeout: TimeAmount = .seconds(60)

    private let idle = NIOLockedValueBox<[Peer: [DirectConnection]]>([:])
    /// Where a request to `endpoint` goes the direct way, or nil if it cannot (not plain http).
    func target(_ endpoint: Endpoint) -> DirectTarget? {
        DirectTarget(endpoint, proxy: route.proxy(forHost: endpoint.host))
    }

    /// An idle connection to `peer`, one on `loop` if there is one.
    func take(_ peer: Peer, preferring loop: EventLoop) -> DirectConnection? {
        idle.withLockedValue { pool in
            guard var list = pool[peer] else { return nil }
            list.removeAll { !$0.channel.isActive }
            let index = list.lastIndex { $0.channel.eventLoop === loop } ?? list.indices.last
            let taken = index.map { list.remove(at: $0) }
            pool[peer] = list.isEmpty ? nil : list
            return taken
        }
    }

    /// Keeps a connection whose upload ended with the connection reusable, for `idleFor` at most.
    func park(_ connection: DirectConnection, _ peer: Peer, idleFor timeout: TimeAmount = DirectConnections.idleTimeout) {
        let kept = idle.withLockedValue { pool -> Bool in
            var list = pool[peer] ?? []
            guard list.count < Self.idleLimit else { return false }
            list.append(connection)
            pool[peer] = list
            return true
        }
        if kept { connection.parked(expiringIn: timeout) } else { connection.close() }
    }

    /// Forgets a connection that closed.
    func remove(_ channel: Channel) {
        idle.withLockedValue { pool in
            for (peer, list) in pool where list.contains(where: { $0.channel === channel }) {
                let rest = list.filter { $0.channel !== channel }
                pool[peer] = rest.isEmpty ? nil : rest
            }
        }
    }

    func closeAll() {
        let all = idle.withLockedValue { pool -> [DirectConnection] in
            defer { pool = [:] }
            return pool.values.flatMap { $0 }
        }
        for connection in all { connection.close() }
    }

    /// Opens a connection to `peer` on `loop`; the returned future fails as the connect does.
    func connect(_ peer: Peer, on loop: EventLoop, timeout: TimeAmount) -> EventLoopFuture<DirectConnection> {
        let initializer: @Sendable (Channel) -> EventLoopFuture<Void> = { [weak self] channel in
            channel.eventLoop.makeCompletedFuture {
                // Interim answers reach the handler: a 104 names the upload resource.
                let parser = HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DirectResponseDecoder(parser: parser)))
                try channel.pipeline.syncOperations.addHandler(DirectUploadHandler(parser: parser, onClose: { self?.remove(channel) }))
            }
        }
        let connecting: EventLoopFuture<Channel>
        if let proxy = peer.tunnel {
            connecting = SOCKS5Connector.connect(
                proxy, to: peer.host, port: peer.port, on: loop, timeout: timeout,
                threadPool: threadPool, initializer: initializer)
        } else {
            let bootstrap = ClientBootstrap(group: loop)
                .connectTimeout(timeout)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer(initializer)
            // An address given as numbers needs no resolver and no Happy Eyeballs race (their
            // first use was a tenth of a one-file send's CPU).
            connecting =
                (try? SocketAddress(ipAddress: peer.host, port: peer.port))
                .map { bootstrap.connect(to: $0) } ?? bootstrap.connect(host: peer.host, port: peer.port)
        }
        return
            connecting
            .flatMapThrowing { channel in
                let handler = try channel.pipeline.syncOperations.handler(type: DirectUploadHandler.self)
                return DirectConnection(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop))
            }
    }
}

/// One keep-alive connection and its handler.
struct DirectConnection: Sendable {
    let channel: Channel
    let handler: NIOLoopBound<DirectUploadHandler>

    /// Sends one request and reads its answer; the future never fails (failures are results).
    func run(_ exchange: DirectExchange) -> EventLoopFuture<DirectResult> {
        let promise = channel.eventLoop.makePromise(of: DirectResult.self)
        let handler = self.handler
        if channel.eventLoop.inEventLoop {
            handler.value.start(exchange, promise)
        } else {
            channel.eventLoop.execute { handler.value.start(exchange, promise) }
        }
        return promise.futureResult
    }

    func cancel() {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.cancel() }
    }

    func parked(expiringIn timeout: TimeAmount) {
        let handler = self.handler
        channel.eventLoop.execute { handler.value.parked(expiringIn: timeout) }
    }

    func close() { channel.close(promise: nil) }
}

/// What one request sends and how long it may take.
struct DirectExchange: Sendable {
    let head: HTTPRequestHead
    let body: DirectBody
    let timeouts: UploadTimeouts
    /// Called as the body reaches the socket, with the bytes written so far.
    let sent: @Sendable (Int64) -> Void
    /// Called with each interim answer but `100 Continue` (a `104 Upload Resumption Supported`
    /// names the upload resource while the body is still going out). When set, a body that
    /// fails here (a file that changed, a cancel) before any interim answer came waits a moment
    /// for one: the resource it names can then be removed rather than left on the server.
    var interim: (@Sendable (UploadResponse) -> Void)? = nil
    /// How long a body held for `100 Continue` waits (nil: a second, as curl).
    var continueWait: TimeAmount? = nil

    /// Whether time with no write in flight counts as a stall (`StallClock`): not for a paced
    /// body.
    var idleCounts: Bool {
        if case .stream(_, let idleCounts, _) = body { return idleCounts }
        return true
    }
}

/// A request's body on a direct connection.
enum DirectBody: Sendable {
    /// In memory, in pieces (multipart head, file, multipart tail), written in one `writev`: no
    /// copy of the file into a buffer of its own.
    case buffers([ByteBuffer])
    /// Produced as the socket takes it: `produce` writes into the writer (each write's future
    /// completes once the socket took it) and completes when all `length` bytes are written.
    /// `idleCounts`: time between writes counts as a stall (a file's body, not paced).
    case stream(length: Int64, idleCounts: Bool, produce: @Sendable (HTTPClient.Body.StreamWriter) -> EventLoopFuture<Void>)
}

/// What one request ended with. A response may come with a failure's circumstances (an early
/// answer, then the connection closed): the response is what happened.
struct DirectResult: Sendable, Equatable {
    var response: UploadResponse?
    var failure: UploadFailure?
    var bytesSent: Int64 = 0
    var bodySent = false
    /// Whether any byte of an answer arrived (a reused connection that died before one is retried).
    var receivedAnything = false
    /// Whether the connection can carry the next request.
    var reusable = false
}
