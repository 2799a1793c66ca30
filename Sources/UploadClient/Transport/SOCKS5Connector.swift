import Foundation
import Glibc
import NIOCore
import NIOPosix
import UploadCore

/// TCP connections through a SOCKS5 proxy: connect to the proxy, run `SOCKS5Handshake` (with the
/// proxy URL's login when it has one), and hand over a channel that reaches the server. Used by
/// the direct HTTP/1 path itself and, through `SOCKSBridge`, by AsyncHTTPClient (whose own SOCKS
/// client offers no login and always lets the proxy resolve).
enum SOCKS5Connector {
    /// The proxy refused, or could not reach the server.
    struct Refused: Error, Sendable {
        let proxy: ProxyTarget
        let refusal: SOCKS5Handshake.Refusal

        /// What the upload fails with: final unless the proxy only could not reach the server.
        var failure: UploadFailure {
            UploadFailure(refusal.isTransient ? .cannotConnect : .other, "the SOCKS5 proxy \(proxy.display) refused: \(refusal)")
        }
    }

    /// A channel to `host`:`port` through `proxy`, its handshake done; `initializer` adds the
    /// handlers that use it before any byte of the server's arrives. A name is resolved here
    /// first when the proxy URL says `socks5://`, at the proxy for `socks5h://`. The whole of it
    /// (connect, resolve, handshake) is bounded by `timeout`.
    static func connect(
        _ proxy: ProxyTarget, to host: String, port: Int, on loop: EventLoop, timeout: TimeAmount,
        threadPool: NIOThreadPool = .singleton,
        initializer: @escaping @Sendable (Channel) -> EventLoopFuture<Void> = { $0.eventLoop.makeSucceededVoidFuture() }
    ) -> EventLoopFuture<Channel> {
        destination(host, port: port, resolvingHere: !proxy.resolvesAtProxy, on: loop, threadPool: threadPool)
            .flatMap { destination in
                let handshake = SOCKS5Handshake(
                    destination: destination, port: UInt16(port),
                    login: proxy.login.map { (user: $0, password: proxy.password ?? "") })
                let established = loop.makePromise(of: Void.self)
                let bootstrap = ClientBootstrap(group: loop)
                    .connectTimeout(timeout)
                    .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                SOCKS5HandshakeHandler(handshake, proxy: proxy, timeout: timeout, established: established))
                        }
                    }
                let connecting =
                    (try? SocketAddress(ipAddress: proxy.host, port: proxy.port))
                    .map { bootstrap.connect(to: $0) } ?? bootstrap.connect(host: proxy.host, port: proxy.port)
                return connecting.flatMap { channel in
                    established.futureResult
                        .flatMap { initializer(channel) }
                        .map { channel }
                        .flatMapErrorThrowing { error in
                            channel.close(promise: nil)
                            throw error
                        }
                }
            }
    }

    /// What the proxy is asked to connect to: an address as is; a name as is, or resolved here.
    static func destination(
        _ host: String, port: Int, resolvingHere: Bool, on loop: EventLoop, threadPool: NIOThreadPool
    ) -> EventLoopFuture<SOCKS5Handshake.Destination> {
        if let address = address(host) { return loop.makeSucceededFuture(address) }
        guard resolvingHere else { return loop.makeSucceededFuture(.name(host)) }
        return threadPool.runIfActive(eventLoop: loop) {
            let resolved: SocketAddress
            do {
                resolved = try SocketAddress.makeAddressResolvingHost(host, port: port)
            } catch {
                throw UploadFailure(
                    .cannotConnect, "cannot resolve \(host) here (a socks5:// proxy is given addresses; socks5h:// lets the proxy resolve names)")
            }
            guard let ip = resolved.ipAddress, let address = address(ip) else {
                throw UploadFailure(.cannotConnect, "cannot resolve \(host) to an IP address")
            }
            return address
        }
    }

    /// The bytes of an IPv4 or IPv6 address written as text, or nil for a name.
    static func address(_ text: String) -> SOCKS5Handshake.Destination? {
        let bare = HostName.bare(text)
        var v4 = in_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 {
            return .ipv4(withUnsafeBytes(of: &v4) { Array($0) })
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, bare, &v6) == 1 {
            return .ipv6(withUnsafeBytes(of: &v6) { Array($0) })
        }
        return nil
    }
}

/// Runs a `SOCKS5Handshake` on a new connection to the proxy: writes what it says, completes
/// `established` when the tunnel is open (then passes bytes through untouched), fails it with
/// the refusal, the proxy closing, or the clock running out.
final class SOCKS5HandshakeHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var handshake: SOCKS5Handshake
    private let proxy: ProxyTarget
    private let timeout: TimeAmount
    private let established: EventLoopPromise<Void>
    private var open = false
    private var settled = false
    private var started = false
    private var clock: Scheduled<Void>?

    init(_ handshake: SOCKS5Handshake, proxy: ProxyTarget, timeout: TimeAmount, established: EventLoopPromise<Void>) {
        self.handshake = handshake
        self.proxy = proxy
        self.timeout = timeout
        self.established = established
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        let proxy = self.proxy
        let timeout = self.timeout
        let channel = context.channel
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        clock = context.eventLoop.scheduleTask(in: timeout) {
            handler.value.fail(
                UploadFailure(.connectTimeout, "the SOCKS5 proxy \(proxy.display) did not finish its handshake within \(Double(timeout.nanoseconds) / 1e9) s"))
            channel.close(promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: handshake.greeting)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !open else {
            context.fireChannelRead(data)
            return
        }
        var buffer = unwrapInboundIn(data)
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        switch handshake.receive(bytes) {
        case .wait:
            break
        case .send(let reply):
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: reply)), promise: nil)
        case .established(let leftover):
            open = true
            settled = true
            clock?.cancel()
            // The caller's handlers are added as this completes (same loop), so what came after
            // the proxy's answer reaches them.
            established.succeed(())
            if !leftover.isEmpty { context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: leftover))) }
        case .failed(let refusal):
            fail(SOCKS5Connector.Refused(proxy: proxy, refusal: refusal))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(UploadFailure(.cannotConnect, "the SOCKS5 proxy \(proxy.display) closed the connection during its handshake"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if !open {
            fail(error)
            context.close(promise: nil)
            return
        }
        context.fireErrorCaught(error)
    }

    /// Fails the handshake, once.
    private func fail(_ error: Error) {
        guard !settled else { return }
        settled = true
        clock?.cancel()
        established.fail(error)
    }
}
