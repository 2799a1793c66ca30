import Foundation
import Glibc
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import UploadCore

/// A SOCKS5 front on loopback for AsyncHTTPClient, whose own SOCKS client offers no login and
/// always lets the proxy resolve names. AsyncHTTPClient talks SOCKS5 without a login to this
/// bridge; for each connection the bridge opens one through the real proxy with
/// `SOCKS5Connector` (the proxy URL's login, names resolved here for `socks5://`), answers, and
/// then passes bytes both ways untouched (TLS runs end to end through it). Why a proxy refused
/// is kept per server, so the failure says it rather than AsyncHTTPClient's reply code.
final class SOCKSBridge: Sendable {
    let proxy: ProxyTarget
    /// The loopback port AsyncHTTPClient is pointed at.
    let port: Int
    private let listener: EventLoopFuture<Channel>
    private let refusals: NIOLockedValueBox<[String: UploadFailure]>

    init(proxy: ProxyTarget, group: EventLoopGroup, timeout: TimeAmount, threadPool: NIOThreadPool = .singleton) throws {
        self.proxy = proxy
        let refusals = NIOLockedValueBox<[String: UploadFailure]>([:])
        self.refusals = refusals
        // The socket is bound and listening here, so the port is known at once without waiting
        // on a future (this runs on an event loop): connections wait in its backlog until the
        // loop takes the socket over.
        let socket = try Self.listeningSocket()
        let port = socket.port
        self.port = port
        listener = ServerBootstrap(group: group)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                // Any user of the machine can reach a loopback port, and this one logs in with
                // the proxy URL's credentials: only this process's own connections are served.
                // The whole connection is matched (both ends' addresses and ports), not its ports.
                let peer = LoopbackPeer.End(channel.remoteAddress)
                let server = LoopbackPeer.End(channel.localAddress)
                return threadPool.runIfActive(eventLoop: channel.eventLoop) {
                    guard let peer, let server else { return false }
                    return LoopbackPeer.isThisProcess(peer: peer, server: server)
                }
                .flatMapThrowing { ours in
                    guard ours else { throw ChannelError.ioOnClosedChannel }
                    try channel.pipeline.syncOperations.addHandler(
                        BridgeHandler(proxy: proxy, timeout: timeout, threadPool: threadPool, refusals: refusals))
                }
                .flatMapError { error in
                    channel.close(promise: nil)
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
            .withBoundSocket(socket.descriptor)
    }

    /// A TCP socket listening on 127.0.0.1 on a port the kernel picks.
    private static func listeningSocket() throws -> (descriptor: CInt, port: Int) {
        let descriptor = Glibc.socket(AF_INET, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw UploadFailure(.other, "cannot open a socket for the SOCKS5 proxy's bridge (errno \(errno))", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                Glibc.bind(descriptor, raw, length) == 0 && Glibc.listen(descriptor, 128) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            Glibc.close(descriptor)
            throw UploadFailure(.other, "cannot listen on loopback for the SOCKS5 proxy's bridge (errno \(code))", code: code)
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Why the proxy last refused a connection to `host`:`port`, if it did.
    func refusal(host: String, port: Int) -> UploadFailure? {
        refusals.withLockedValue { $0[Self.key(host, port)] }
    }

    static func key(_ host: String, _ port: Int) -> String {
        let bare = HostName.bare(host)
        return "\(bare.lowercased()):\(port)"
    }

    func close() {
        listener.whenSuccess { $0.close(promise: nil) }
    }
}

/// One connection from AsyncHTTPClient: its SOCKS5 greeting (no login) and CONNECT, read here
/// (RFC 1928's client side is all it sends), then the tunnel through the real proxy.
private final class BridgeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let proxy: ProxyTarget
    let timeout: TimeAmount
    let threadPool: NIOThreadPool
    let refusals: NIOLockedValueBox<[String: UploadFailure]>
    private var received: [UInt8] = []
    private var greeted = false
    private var connecting = false

    init(proxy: ProxyTarget, timeout: TimeAmount, threadPool: NIOThreadPool, refusals: NIOLockedValueBox<[String: UploadFailure]>) {
        self.proxy = proxy
        self.timeout = timeout
        self.threadPool = threadPool
        self.refusals = refusals
    }

    /// A greeting and a request take at most 257 + 262 bytes; more before the tunnel is open
    /// is not SOCKS5.
    static let handshakeLimit = 1024

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        received += buffer.readBytes(length: buffer.readableBytes) ?? []
        guard received.count <= Self.handshakeLimit else {
            context.close(promise: nil)
            return
        }
        guard !connecting else { return }
        if !greeted {
            // VER, NMETHODS, METHODS: "no login" must be among them.
            guard received.count >= 2, received.count >= 2 + Int(received[1]) else { return }
            let methods = received[2..<(2 + Int(received[1]))]
            guard received[0] == 5, methods.contains(0) else {
                reply(context, [5, 0xFF], close: true)
                return
            }
            received.removeFirst(2 + Int(received[1]))
            greeted = true
            reply(context, [5, 0], close: false)
        }
        // VER, CMD, RSV, ATYP, DST.ADDR, DST.PORT
        guard received.count >= 5 else { return }
        let end: Int
        let destination: SOCKS5Handshake.Destination
        let port: Int
        switch SOCKS5Handshake.addressField(received, at: 3) {
        case .incomplete:
            return
        case .unknownType:
            refuse(context, 8)
            return
        case .complete(let fieldEnd, let named, let number):
            (end, destination, port) = (fieldEnd, named, Int(number))
        }
        guard received[0] == 5, received[1] == 1 else {
            refuse(context, 7)
            return
        }
        received.removeFirst(end)
        let host: String
        switch destination {
        case .name(let name): host = name
        case .ipv4(let bytes), .ipv6(let bytes):
            host = (try? SocketAddress(packedIPAddress: ByteBuffer(bytes: bytes), port: port).ipAddress) ?? ""
        }
        connecting = true
        connect(context, host: host, port: port)
    }

    private func connect(_ context: ChannelHandlerContext, host: String, port: Int) {
        let key = SOCKSBridge.key(host, port)
        let downstream = context.channel
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let refusals = self.refusals
        SOCKS5Connector.connect(proxy, to: host, port: port, on: context.eventLoop, timeout: timeout, threadPool: threadPool)
            .whenComplete { result in
                let (handler, context) = loopBound.value
                switch result {
                case .success(let upstream):
                    refusals.withLockedValue { $0[key] = nil }
                    handler.splice(context, downstream: downstream, upstream: upstream)
                case .failure(let error):
                    let refused = error as? SOCKS5Connector.Refused
                    let failure =
                        refused?.failure
                        ?? (error as? UploadFailure)
                        ?? UploadFailure(.cannotConnect, "cannot reach the SOCKS5 proxy \(handler.proxy.display): \(error)")
                    refusals.withLockedValue { $0[key] = failure }
                    if case .connectFailed(let reply) = refused?.refusal {
                        handler.refuse(context, reply)
                    } else {
                        handler.refuse(context, 1)
                    }
                }
            }
    }

    /// RFC 1928's reply, with a zero bound address (nobody uses it).
    private static func answer(_ code: UInt8) -> [UInt8] { [5, code, 0, 1, 0, 0, 0, 0, 0, 0] }

    private func refuse(_ context: ChannelHandlerContext, _ code: UInt8) {
        reply(context, Self.answer(code), close: true)
    }

    private func reply(_ context: ChannelHandlerContext, _ bytes: [UInt8], close: Bool) {
        let channel = context.channel
        let written = context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)))
        if close { written.whenComplete { _ in channel.close(promise: nil) } }
    }

    /// Success said, then bytes pass both ways.
    private func splice(_ context: ChannelHandlerContext, downstream: Channel, upstream: Channel) {
        guard downstream.isActive else {
            upstream.close(promise: nil)
            return
        }
        let (toServer, toClient) = GlueHandler.matchedPair()
        do {
            try upstream.pipeline.syncOperations.addHandler(toClient)
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: Self.answer(0))), promise: nil)
            try downstream.pipeline.syncOperations.addHandler(toServer)
            // What came after CONNECT (nothing, normally: TLS starts after the answer) follows.
            if !received.isEmpty {
                upstream.writeAndFlush(upstream.allocator.buffer(bytes: received), promise: nil)
                received = []
            }
            downstream.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            upstream.close(promise: nil)
            downstream.close(promise: nil)
        }
    }
}

/// Passes bytes read on one channel to its partner, reading only while the partner can take
/// them; either closing closes both.
private final class GlueHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false

    static func matchedPair() -> (GlueHandler, GlueHandler) {
        let first = GlueHandler()
        let second = GlueHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    private func partnerWrite(_ data: NIOAny) { context?.write(data, promise: nil) }
    private func partnerFlush() { context?.flush() }
    private func partnerClose() { context?.close(promise: nil) }
    private var partnerWritable: Bool { context?.channel.isWritable ?? false }

    private func partnerBecameWritable() {
        if pendingRead {
            pendingRead = false
            context?.read()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.partnerWrite(data) }
    func channelReadComplete(context: ChannelHandlerContext) { partner?.partnerFlush() }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.partnerClose()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        partner?.partnerClose()
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if partner?.partnerWritable ?? false {
            context.read()
        } else {
            pendingRead = true
        }
    }
}

/// Whether a loopback TCP connection is this process's own (Linux): `/proc/net/tcp` names the
/// connection from local port `peerPort` to `serverPort` by its socket's inode, and
/// `/proc/self/fd` lists the sockets this process holds.
enum LoopbackPeer {
    /// One end of a TCP connection as `/proc/net/tcp` writes it: the IPv4 address as the kernel
    /// holds it (network order, printed as a native number) and the port.
    struct End: Equatable {
        let address: UInt32
        let port: Int

        init(address: UInt32, port: Int) {
            self.address = address
            self.port = port
        }

        init?(_ socketAddress: SocketAddress?) {
            guard case .v4(let v4)? = socketAddress else { return nil }
            address = v4.address.sin_addr.s_addr
            port = Int(UInt16(bigEndian: v4.address.sin_port))
        }

        /// `0100007F:1F90`.
        init?(proc field: Substring) {
            let parts = field.split(separator: ":")
            guard parts.count == 2, parts[0].count == 8, let address = UInt32(parts[0], radix: 16), let port = Int(parts[1], radix: 16) else { return nil }
            self.address = address
            self.port = port
        }
    }

    /// Whether the connection from `peer` to `server` is one of this process's own sockets:
    /// the row whose local end is the peer and whose remote end is the server, both address
    /// and port (another user may bind another loopback address to the same port), owned by
    /// this user, with a socket inode this process holds open.
    static func isThisProcess(peer: End, server: End, table: String = "/proc/net/tcp", uid: uid_t = getuid()) -> Bool {
        // Read to its end: a /proc file says it is empty, so nothing may go by its size.
        guard let handle = FileHandle(forReadingAtPath: table) else { return false }
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        try? handle.close()
        var inode: Substring?
        for line in text.split(separator: "\n").dropFirst() {
            // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
            let fields = line.split(separator: " ")
            // An earlier connection between the same ends, closed and waiting out its time,
            // has no socket any more (inode 0): the live one is further on.
            guard fields.count > 9, fields[9] != "0", End(proc: fields[1]) == peer, End(proc: fields[2]) == server else { continue }
            guard UInt32(fields[7]) == uid else { return false }
            inode = fields[9]
            break
        }
        guard let inode else { return false }
        let socket = "socket:[\(inode)]"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return false }
        return descriptors.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == socket }
    }
}
