import NIOCore

/// The first handler of a connection's pipeline: tells the gate about raw reads and about each
/// request for more data, then passes everything on untouched.
final class ByteTap: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let gate: UploadGate

    init(gate: UploadGate) {
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        gate.bytesArrived(unwrapInboundIn(data).readableBytes)
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        gate.readRequested()
        context.read()
    }
}
