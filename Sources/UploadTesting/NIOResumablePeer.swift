import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix
import NIOResumableUpload

/// An independent server of resumable uploads for tests: SwiftNIO's `NIOResumableUpload`
/// (interop versions 3, 5 and 6, state in memory) in front of a handler that keeps each
/// complete request body whole and answers `200 {"bytes": N}`. It is not ours, so a client
/// that gets along with it speaks the draft and not only our receiver's reading of it.
public final class NIOResumablePeer: Sendable {
    public let port: Int
    private let channel: any Channel
    private let bodies: NIOLockedValueBox<[[UInt8]]>
    private let context: NIOLockedValueBox<HTTPResumableUploadContext?>

    /// Every complete body received, in order.
    public var received: [[UInt8]] { bodies.withLockedValue { $0 } }
    public var url: String { "http://127.0.0.1:\(port)/photo" }

    public init() throws {
        let bodies = NIOLockedValueBox<[[UInt8]]>([])
        let context = NIOLockedValueBox<HTTPResumableUploadContext?>(nil)
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.configureHTTPServerPipeline()
                    try sync.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try sync.addHandler(
                        HTTPResumableUploadHandler(
                            context: context.withLockedValue { $0! }, handlers: [KeepBody(bodies: bodies)]))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        let port = channel.localAddress!.port!
        context.withLockedValue { $0 = HTTPResumableUploadContext(origin: "http://127.0.0.1:\(port)") }
        self.port = port
        self.channel = channel
        self.bodies = bodies
        self.context = context
    }

    /// Names another origin in the upload URLs it gives out (a relay in front of it), before
    /// the first upload.
    public func advertise(origin: String) {
        context.withLockedValue { $0 = HTTPResumableUploadContext(origin: origin) }
    }

    public func stop() {
        try? channel.close().wait()
    }
}

/// The application behind the resumable-upload handler: one request's body, kept whole.
private final class KeepBody: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    let bodies: NIOLockedValueBox<[[UInt8]]>
    var body: [UInt8] = []
    var method: HTTPRequest.Method = .get

    init(bodies: NIOLockedValueBox<[[UInt8]]>) {
        self.bodies = bodies
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            method = head.method
            body = []
        case .body(let buffer):
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard method == .post else {
                answer(context, .notImplemented, "")
                return
            }
            bodies.withLockedValue { $0.append(body) }
            answer(context, .ok, #"{"bytes": \#(body.count)}"#)
        }
    }

    private func answer(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status, _ text: String) {
        var head = HTTPResponse(status: status)
        head.headerFields[.contentLength] = String(text.utf8.count)
        head.headerFields[.contentType] = "application/json"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !text.isEmpty { context.write(wrapOutboundOut(.body(ByteBuffer(string: text))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
