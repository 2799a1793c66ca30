import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import UploadCore

// The channel handler of a direct upload's connection (`DirectHTTP1.swift` has the pool and the
// transport's side).

/// Runs one request at a time on its connection: the shell of `DirectConnectionMachine`, which
/// decides; this writes, runs the one clock, and reports. Lives on the channel's event loop.
final class DirectUploadHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = ByteBuffer

    private let onClose: () -> Void
    /// The connection's response parser, told of each request as it goes.
    private let parser: HTTPResponseDecoder
    private var context: ChannelHandlerContext?
    private var machine = DirectConnectionMachine()
    /// The exchange in flight, its encoded head, and who waits for its end.
    private var exchange: DirectExchange?
    private var request: ByteBuffer?
    private var promise: EventLoopPromise<DirectResult>?
    private var clock: Scheduled<Void>?

    init(parser: HTTPResponseDecoder, onClose: @escaping () -> Void) {
        self.parser = parser
        self.onClose = onClose
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func start(_ exchange: DirectExchange, _ promise: EventLoopPromise<DirectResult>) {
        guard let context, context.channel.isActive, !machine.isExchanging else {
            promise.succeed(DirectResult(failure: UploadFailure(.connectionLost, "the server closed the connection before the upload began")))
            return
        }
        var request = context.channel.allocator.buffer(capacity: 512 + exchange.body.firstPieceSize)
        var refused: UploadFailure?
        do throws(DirectRequestHead.InvalidField) {
            try DirectRequestHead.encode(exchange.head, into: &request)
        } catch {
            refused = UploadFailure(
                .other, "the request header \"\(error.name)\" cannot be sent: its name must be a token and its value free of control characters")
        }
        let expectsContinue = exchange.head.headers[canonicalForm: "Expect"].contains { $0.lowercased() == "100-continue" }
        guard
            let actions = machine.start(
                timeouts: exchange.timeouts, bodyInMemory: exchange.body.isInMemory, expectsContinue: expectsContinue,
                wantsInterim: exchange.interim != nil, idleCounts: exchange.idleCounts,
                continueWait: exchange.continueWait, refusedHead: refused,
                at: context.eventLoop.now)
        else {
            promise.succeed(DirectResult(failure: UploadFailure(.connectionLost, "the server closed the connection before the upload began")))
            return
        }
        self.exchange = exchange
        self.request = request
        self.promise = promise
        run(actions)
    }

    func cancel() {
        run(machine.cancel())
    }

    func parked(expiringIn timeout: TimeAmount) {
        run(machine.parked(expiringIn: timeout))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head) where head.status.code >= 100 && head.status.code < 200:
            run(machine.interim(head, at: context.eventLoop.now))
        case .head(let head):
            run(machine.answerHead(head))
        case .body(let part):
            run(machine.answerBody(part))
        case .end:
            run(machine.answerEnded())
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        run(machine.errorCaught(error))
    }

    func channelInactive(context: ChannelHandlerContext) {
        onClose()
        run(machine.connectionEnded())
        context.fireChannelInactive()
    }

    // MARK: The shell

    private func run(_ actions: [DirectConnectionMachine.Action]) {
        for action in actions {
            switch action {
            case .writeRequest:
                writeRequest()
            case .beginBody:
                beginBody()
            case .startClock(_, let after, let token):
                clock?.cancel()
                guard let loop = context?.eventLoop else { break }
                clock = loop.assumeIsolated().scheduleTask(in: after) { [self] in
                    run(machine.clockRanOut(token: token, at: loop.now))
                }
            case .stopClock:
                clock?.cancel()
                clock = nil
            case .reportInterim(let answer):
                exchange?.interim?(answer)
            case .reportSent(let bytes):
                exchange?.sent(bytes)
            case .finish(let result):
                let promise = self.promise
                exchange = nil
                request = nil
                self.promise = nil
                if !result.reusable { context?.close(promise: nil) }
                promise?.succeed(result)
            case .close:
                context?.close(promise: nil)
            }
        }
    }

    /// The head, and a body in memory with it: the head and the first piece (the multipart
    /// head) in one buffer, then the rest: one writev, no HTTP encoder or validator on the way.
    private func writeRequest() {
        guard let context, let exchange, var request else { return }
        self.request = nil
        parser.write(data: .head(exchange.head))
        guard case .buffers(let pieces) = exchange.body else {
            context.writeAndFlush(wrapOutboundOut(request), promise: nil)
            return
        }
        var parts = pieces[...]
        if var first = parts.popFirst() { request.writeBuffer(&first) }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(request), promise: parts.isEmpty ? written : nil)
        for (index, part) in zip(parts.indices, parts) {
            context.write(wrapOutboundOut(part), promise: index == parts.index(before: parts.endIndex) ? written : nil)
        }
        let current = machine.exchange
        let total = Int64(pieces.reduce(0) { $0 + $1.readableBytes })
        written.futureResult.assumeIsolated().whenSuccess { [self] in
            run(machine.bodyEnded(of: current, total: total))
        }
        context.flush()
        run(machine.requestWritten(at: context.eventLoop.now))
    }

    /// The streamed body, written as its producer hands it over, each piece when the socket
    /// took the last.
    private func beginBody() {
        guard let context, let exchange, case .stream(_, _, let produce) = exchange.body else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let channelLoop = context.eventLoop
        let current = machine.exchange
        let timeouts = exchange.timeouts
        let writer = HTTPClient.Body.StreamWriter { data in
            if channelLoop.inEventLoop { return bound.value.writePart(data, of: current, on: channelLoop) }
            return channelLoop.flatSubmit { bound.value.writePart(data, of: current, on: channelLoop) }
        }
        produce(writer).hop(to: channelLoop).assumeIsolated().whenComplete { [self] outcome in
            switch outcome {
            case .success:
                run(machine.bodyEnded(of: current))
            case .failure(let error):
                let failure = (error as? UploadFailure) ?? FailureClassifier.classify(error, bodySent: false, timeouts: timeouts)
                run(machine.bodyEnded(of: current, failure: failure))
            }
        }
    }

    /// One piece of a streamed body, written when the socket takes it; fails once the exchange
    /// it belongs to has ended (an early answer, a failure), which stops the producer.
    func writePart(_ data: IOData, of exchangeNumber: UInt64, on loop: EventLoop) -> EventLoopFuture<Void> {
        guard let context, machine.acceptsBody(of: exchangeNumber), case .byteBuffer(let buffer) = data else {
            return loop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        let count = Int64(buffer.readableBytes)
        run(machine.partStarted(of: exchangeNumber, at: loop.now))
        promise.futureResult.assumeIsolated().whenSuccess { [self] in
            run(machine.partWritten(count, of: exchangeNumber, at: loop.now))
        }
        context.writeAndFlush(wrapOutboundOut(buffer), promise: promise)
        return promise.futureResult
    }
}

/// NIO's HTTP/1 response parser without its place on the way out: requests leave as bytes we
/// encode (`DirectRequestHead`), straight to the socket, and the parser is told each request's
/// head directly (it needs the method to know which answers have no body).
struct DirectResponseDecoder: ByteToMessageDecoder {
    typealias InboundOut = HTTPClientResponsePart
    let parser: HTTPResponseDecoder

    mutating func decoderAdded(context: ChannelHandlerContext) { parser.decoderAdded(context: context) }
    mutating func decoderRemoved(context: ChannelHandlerContext) { parser.decoderRemoved(context: context) }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        do {
            return try parser.decode(context: context, buffer: &buffer)
        } catch {
            throw Self.named(error, buffer)
        }
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        do {
            return try parser.decodeLast(context: context, buffer: &buffer, seenEOF: seenEOF)
        } catch {
            throw Self.named(error, buffer)
        }
    }

    /// A head the parser refused for a character, with the field it is in: the parser keeps a
    /// head's bytes in the buffer until the head is whole, so they are still there to read.
    static func named(_ error: any Error, _ buffer: ByteBuffer) -> any Error {
        guard let parsing = error as? HTTPParserError, parsing == .invalidHeaderToken || parsing == .invalidCharactersUsed,
            let found = MalformedAnswer.find(in: buffer.readableBytesView)
        else { return error }
        return found
    }
}

/// A request head as HTTP/1.1 bytes, refused (as NIO's validator would) when a field's name is
/// not a token or its value holds a control character other than tab.
enum DirectRequestHead {
    struct InvalidField: Error {
        let name: String
    }

    static func encode(_ head: HTTPRequestHead, into buffer: inout ByteBuffer) throws(InvalidField) {
        buffer.writeString(head.method.rawValue)
        buffer.writeStaticString(" ")
        buffer.writeString(head.uri)
        buffer.writeStaticString(" HTTP/1.1\r\n")
        for (name, value) in head.headers {
            guard RequestHeader.isToken(name), value.utf8.allSatisfy(isValueByte) else {
                throw InvalidField(name: name)
            }
            buffer.writeString(name)
            buffer.writeStaticString(": ")
            buffer.writeString(value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
    }

    static func isValueByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte != 0x7F)
    }
}

extension DirectBody {
    /// Whether the whole body is in memory (written at once, and again at no cost).
    var isInMemory: Bool {
        if case .buffers = self { return true }
        return false
    }

    /// The size of the piece that goes in one buffer with the request head.
    var firstPieceSize: Int {
        if case .buffers(let pieces) = self { return pieces.first?.readableBytes ?? 0 }
        return 0
    }
}
