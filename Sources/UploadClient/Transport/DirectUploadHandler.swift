import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import UploadCore

// The channel handler of a direct upload's connection (`DirectHTTP1.swift` has the pool and the
// transport's side).

/// Runs one request at a time on its connection. Lives on the channel's event loop.
final class DirectUploadHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = ByteBuffer

    private let onClose: () -> Void
    /// The connection's response parser, told of each request as it goes.
    private let parser: HTTPResponseDecoder
    private var context: ChannelHandlerContext?
    private var exchange: DirectExchange?
    private var promise: EventLoopPromise<DirectResult>?
    private var result = DirectResult()
    private var head: HTTPResponseHead?
    private var body: [UInt8] = []
    private var bodyTotal: Int64 = 0
    private var error: Error?
    /// The stall clock while the body is written, then the answer clock.
    private var clock: Scheduled<Void>?
    /// Which exchange on this connection is current: callbacks of an ended one do nothing.
    private var number: UInt64 = 0
    /// An interim answer came in this exchange.
    private var sawInterim = false
    /// The body failed here before any interim answer came; the exchange ends with this once
    /// one comes (or the answer, or the connection ends, or `announcementWait` passes).
    private var heldFailure: UploadFailure?
    static let announcementWait: TimeAmount = .seconds(1)
    private var idleClock: Scheduled<Void>?
    /// The body's start, held while a request with `Expect: 100-continue` waits for the
    /// server's `100` (or its final answer, then no body goes; or the answer timeout, then it
    /// goes: servers that ignore `Expect` exist). Asked only where a server may be busy with
    /// the upload for a while (a tus upload resumed after a cut: tuspyserver waits up to 30 s
    /// for the cut request to let go), so the wait is the answer timeout's, not curl's second:
    /// the `100` is an answer.
    private var awaitingContinue: (() -> Void)?

    init(parser: HTTPResponseDecoder, onClose: @escaping () -> Void) {
        self.parser = parser
        self.onClose = onClose
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func start(_ exchange: DirectExchange, _ promise: EventLoopPromise<DirectResult>) {
        idleClock?.cancel()
        idleClock = nil
        guard let context, context.channel.isActive, self.exchange == nil else {
            promise.succeed(DirectResult(failure: UploadFailure(.connectionLost, "the server closed the connection before the upload began")))
            return
        }
        self.exchange = exchange
        self.promise = promise
        result = DirectResult()
        head = nil
        body = []
        bodyTotal = 0
        error = nil
        sawInterim = false
        heldFailure = nil
        awaitingContinue = nil
        var request = context.channel.allocator.buffer(capacity: 512 + exchange.body.firstPieceSize)
        do throws(DirectRequestHead.InvalidField) {
            try DirectRequestHead.encode(exchange.head, into: &request)
        } catch {
            finish(failure: UploadFailure(.other, "the request header \"\(error.name)\" cannot be sent: its name must be a token and its value free of control characters"))
            return
        }
        parser.write(data: .head(exchange.head))
        number &+= 1
        switch exchange.body {
        case .buffers(let pieces):
            sendAtOnce(pieces, request, context: context, exchange: exchange)
        case .stream(_, let produce):
            context.writeAndFlush(wrapOutboundOut(request), promise: nil)
            let current = number
            let begin = { [self] in
                guard let context = self.context, self.exchange != nil, number == current else { return }
                streamBody(produce, exchange, context: context)
            }
            guard exchange.head.headers[canonicalForm: "Expect"].contains(where: { $0.lowercased() == "100-continue" }) else {
                begin()
                return
            }
            awaitingContinue = begin
            clock = context.eventLoop.assumeIsolated().scheduleTask(in: exchange.timeouts.answer) { [self] in
                guard number == current, let go = awaitingContinue else { return }
                awaitingContinue = nil
                go()
            }
        }
    }

    /// The streamed body, written as its producer hands it over, each piece when the socket
    /// took the last.
    private func streamBody(_ produce: @escaping @Sendable (HTTPClient.Body.StreamWriter) -> EventLoopFuture<Void>,
                            _ exchange: DirectExchange, context: ChannelHandlerContext) {
        armStall(exchange)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let channelLoop = context.eventLoop
        let current = number
        let writer = HTTPClient.Body.StreamWriter { data in
            if channelLoop.inEventLoop { return bound.value.writePart(data, of: current, on: channelLoop) }
            return channelLoop.flatSubmit { bound.value.writePart(data, of: current, on: channelLoop) }
        }
        produce(writer).hop(to: channelLoop).assumeIsolated().whenComplete { [self] outcome in
            guard self.exchange != nil, number == current else { return }
            switch outcome {
            case .success:
                bodyWritten(exchange)
            case .failure(let error):
                failBody((error as? UploadFailure)
                    ?? FailureClassifier.classify(error, bodySent: false, timeouts: exchange.timeouts))
            }
        }
    }

    /// The body in memory: the head and the first piece (the multipart head) in one buffer, then
    /// the rest: one writev, no HTTP encoder or validator on the way.
    private func sendAtOnce(_ pieces: [ByteBuffer], _ head: ByteBuffer, context: ChannelHandlerContext, exchange: DirectExchange) {
        var request = head
        var parts = pieces[...]
        if var first = parts.popFirst() { request.writeBuffer(&first) }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(request), promise: parts.isEmpty ? written : nil)
        for (index, part) in zip(parts.indices, parts) {
            context.write(wrapOutboundOut(part), promise: index == parts.index(before: parts.endIndex) ? written : nil)
        }
        context.flush()
        let current = number
        written.futureResult.assumeIsolated().whenComplete { [self] outcome in
            guard self.exchange != nil, number == current, case .success = outcome else { return }
            result.bytesSent = Int64(pieces.reduce(0) { $0 + $1.readableBytes })
            exchange.sent(result.bytesSent)
            bodyWritten(exchange)
        }
        // The stall clock only for a body the socket did not take at once (a small one mostly
        // goes in the flush above): one scheduled task per upload, not two.
        if self.exchange != nil, !result.bodySent { armStall(exchange) }
    }

    /// One piece of a streamed body, written when the socket takes it; fails once the exchange
    /// it belongs to has ended (an early answer, a failure), which stops the producer.
    func writePart(_ data: IOData, of exchangeNumber: UInt64, on loop: EventLoop) -> EventLoopFuture<Void> {
        guard let context, let exchange, exchangeNumber == number, heldFailure == nil, case .byteBuffer(let buffer) = data else {
            return loop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        let count = Int64(buffer.readableBytes)
        context.writeAndFlush(wrapOutboundOut(buffer), promise: promise)
        promise.futureResult.assumeIsolated().whenSuccess { [self] in
            guard self.exchange != nil, number == exchangeNumber else { return }
            result.bytesSent += count
            exchange.sent(result.bytesSent)
            armStall(exchange)
        }
        return promise.futureResult
    }

    /// Nothing written for the stall timeout fails the upload.
    private func armStall(_ exchange: DirectExchange) {
        guard let context else { return }
        clock?.cancel()
        let current = number
        clock = context.eventLoop.assumeIsolated().scheduleTask(in: exchange.timeouts.stall) { [self] in
            guard self.exchange != nil, number == current, !result.bodySent else { return }
            finish(failure: FailureClassifier.stalled(exchange.timeouts))
        }
    }

    /// The whole body reached the socket: the answer clock starts.
    private func bodyWritten(_ exchange: DirectExchange) {
        guard let context else { return }
        result.bodySent = true
        clock?.cancel()
        let current = number
        clock = context.eventLoop.assumeIsolated().scheduleTask(in: exchange.timeouts.answer) { [self] in
            guard self.exchange != nil, number == current else { return }
            if let answer = answerSoFar {
                finish(answer: answer.endedEarly(answerTimeout: exchange.timeouts.answerSeconds), reusable: false)
            } else {
                finish(failure: FailureClassifier.noAnswer(exchange.timeouts))
            }
        }
    }

    func cancel() {
        guard exchange != nil else { return }
        failBody(FailureClassifier.cancelled(bodySent: result.bodySent))
    }

    /// The body cannot go on. Where an interim answer may still name an upload resource (and
    /// none has yet), the exchange waits for it a moment before ending, so the resource can be
    /// removed; the body stops at once either way.
    private func failBody(_ failure: UploadFailure) {
        guard let exchange, let context, heldFailure == nil else { return }
        guard exchange.interim != nil, !sawInterim, !result.bodySent else {
            finish(failure: failure)
            return
        }
        heldFailure = failure
        clock?.cancel()
        let current = number
        clock = context.eventLoop.assumeIsolated().scheduleTask(in: Self.announcementWait) { [self] in
            guard self.exchange != nil, number == current, let held = heldFailure else { return }
            finish(failure: held)
        }
    }

    func parked(expiringIn timeout: TimeAmount) {
        guard exchange == nil, let context else { return }
        idleClock?.cancel()
        idleClock = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            if exchange == nil { self.context?.close(promise: nil) }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard exchange != nil else {
            // Bytes nobody asked for on an idle connection: it cannot be trusted with the next request.
            context.close(promise: nil)
            return
        }
        result.receivedAnything = true
        switch unwrapInboundIn(data) {
        case .head(let head) where head.status.code >= 100 && head.status.code < 200:
            // An interim answer (the parser forwards them): 100 lets a body that waits for it go;
            // 104 names the upload resource.
            if head.status.code == 100, let go = awaitingContinue {
                awaitingContinue = nil
                clock?.cancel()
                go()
            } else if head.status.code != 100 {
                sawInterim = true
                exchange?.interim?(UploadResponse(status: Int(head.status.code), reason: head.status.reasonPhrase,
                                                  headers: head.headers.map { ($0.name, $0.value) }, body: [], bodyBytesTotal: 0))
                if let held = heldFailure { finish(failure: held) }
            }
        case .head(let head):
            // A final answer to a request whose body waited for `100`: the body does not go,
            // and the connection ends with the exchange (its framing is unfinished).
            awaitingContinue = nil
            if let held = heldFailure {
                finish(failure: held)
                return
            }
            self.head = head
        case .body(let part):
            bodyTotal += Int64(part.readableBytes)
            let room = UploadDelegate.bodyLimit - body.count
            if room > 0 { body.append(contentsOf: part.readableBytesView.prefix(room)) }
        case .end:
            guard let answer = answerSoFar, let head else { return }
            // An answer before the whole body went out (a 413 at once) ends the connection: the
            // rest of the body is still on its way.
            finish(answer: answer, reusable: result.bodySent && head.isKeepAlive)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if self.error == nil { self.error = error }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleClock?.cancel()
        onClose()
        if exchange != nil {
            if let held = heldFailure {
                finish(failure: held)
            } else if let answer = answerSoFar {
                // What arrived of the answer is what happened (its status at least); that its
                // end did not arrive is said with it.
                finish(answer: answer.endedEarly(answerTimeout: nil), reusable: false)
            } else if let error {
                finish(failure: FailureClassifier.classify(error, bodySent: result.bodySent, timeouts: exchange!.timeouts))
            } else {
                finish(failure: UploadFailure(.connectionLost, result.bodySent
                    ? "the server closed the connection without answering"
                    : "the server closed the connection during the upload"))
            }
        }
        context.fireChannelInactive()
    }

    private var answerSoFar: UploadResponse? {
        head.map { head in
            UploadResponse(status: Int(head.status.code), reason: head.status.reasonPhrase,
                           headers: head.headers.map { ($0.name, $0.value) }, body: body, bodyBytesTotal: bodyTotal)
        }
    }

    private func finish(answer: UploadResponse, reusable: Bool) {
        result.response = answer
        result.reusable = reusable
        complete()
    }

    private func finish(failure: UploadFailure) {
        result.failure = failure
        result.reusable = false
        complete()
    }

    private func complete() {
        clock?.cancel()
        clock = nil
        let promise = self.promise
        let result = self.result
        awaitingContinue = nil
        exchange = nil
        self.promise = nil
        if !result.reusable { context?.close(promise: nil) }
        promise?.succeed(result)
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
        try parser.decode(context: context, buffer: &buffer)
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try parser.decodeLast(context: context, buffer: &buffer, seenEOF: seenEOF)
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
