import NIOCore

/// Lets a connection read the request body in chunks of up to 512 KiB instead of NIO's default
/// 64 KiB, at most 4 reads per readable event. Every chunk crosses from the event loop to the
/// task that stores it, so fewer, larger chunks mean fewer thread hand-offs per gigabyte
/// (bench/throughput, receiver alone: 1.1 → 1.65 GiB/s). 1 MiB chunks were faster still
/// (1.9 GiB/s) but took the receiver's peak RSS to 63 MiB; 512 KiB keeps it at 48 MiB.
/// Memory per connection stays bounded: the body stream's back-pressure (4 chunks) plus one
/// read burst.
final class ReceiveBufferSizing: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Never

    static let maximumChunk = 512 * 1024
    static let readsPerEvent: UInt = 4

    func handlerAdded(context: ChannelHandlerContext) {
        if let options = context.channel.syncOptions {
            let allocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: Self.maximumChunk)
            try? options.setOption(ChannelOptions.recvAllocator, value: allocator)
            try? options.setOption(ChannelOptions.maxMessagesPerRead, value: Self.readsPerEvent)
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
