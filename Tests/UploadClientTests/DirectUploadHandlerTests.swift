import AsyncHTTPClient
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@testable import UploadClient
import UploadCore

/// The direct connection's handler on an `EmbeddedChannel`, as async-http-client tests its
/// handlers: the bytes it writes, the answers fed to it byte for byte, its clocks advanced by
/// hand. No socket, no server, no wall clock.
@Suite struct DirectUploadHandlerTests {
    let timeouts = UploadTimeouts(connect: .seconds(1), stall: .seconds(2), answer: .seconds(3))

    struct Connection {
        let channel: EmbeddedChannel
        let handler: DirectUploadHandler
        let closed: Box

        final class Box: @unchecked Sendable { var value = false }

        init() throws {
            let parser = HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)
            let closed = Box()
            let handler = DirectUploadHandler(parser: parser, onClose: { closed.value = true })
            channel = EmbeddedChannel()
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(DirectResponseDecoder(parser: parser)))
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
            self.handler = handler
            self.closed = closed
        }

        func run(_ exchange: DirectExchange) -> EventLoopFuture<DirectResult> {
            let promise = channel.eventLoop.makePromise(of: DirectResult.self)
            handler.start(exchange, promise)
            return promise.futureResult
        }

        /// Everything written so far, as text.
        func written() throws -> String {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            return text
        }

        func answer(_ text: String) throws {
            try channel.writeInbound(ByteBuffer(string: text))
        }

        func result(_ future: EventLoopFuture<DirectResult>) -> DirectResult? {
            var result: DirectResult?
            future.whenSuccess { result = $0 }
            channel.embeddedEventLoop.run()
            return result
        }
    }

    func head(_ method: HTTPMethod = .POST, uri: String = "/photo", _ fields: [(String, String)]) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: uri)
        head.headers.add(name: "Host", value: "h")
        for (name, value) in fields { head.headers.add(name: name, value: value) }
        return head
    }

    func inMemory(_ body: String) -> DirectExchange {
        DirectExchange(
            head: head(.POST, [("Content-Length", String(body.utf8.count))]), body: .buffers([ByteBuffer(string: body)]),
            timeouts: timeouts, sent: { _ in })
    }

    @Test func aBodyInMemoryGoesInOneWriteAndTheConnectionCarriesTheNextRequest() throws {
        let connection = try Connection()
        let first = connection.run(inMemory("photo-bytes"))
        #expect(try connection.written() == "POST /photo HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nphoto-bytes")
        try connection.answer("HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n{\"filename\":\"x\"}")
        try connection.answer("\n")
        let answered = try #require(connection.result(first))
        #expect(answered.response?.status == 200 && answered.reusable && answered.bytesSent == 11)
        #expect(String(decoding: answered.response?.body ?? [], as: UTF8.self) == "{\"filename\":\"x\"}\n")

        let second = connection.run(inMemory("more"))
        #expect(try connection.written().hasSuffix("\r\n\r\nmore"))
        try connection.answer("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
        #expect(connection.result(second)?.response?.status == 201)
        #expect(connection.channel.isActive)
    }

    @Test func aStreamedBodyWaitsForOneHundredContinue() throws {
        let connection = try Connection()
        let exchange = DirectExchange(
            head: head(.PATCH, uri: "/files/1", [("Expect", "100-continue"), ("Content-Length", "6")]),
            body: .stream(
                length: 6, idleCounts: true,
                produce: { writer in
                    writer.write(.byteBuffer(ByteBuffer(string: "abc"))).flatMap { writer.write(.byteBuffer(ByteBuffer(string: "def"))) }
                }),
            timeouts: timeouts, sent: { _ in })
        let future = connection.run(exchange)
        #expect(try connection.written() == "PATCH /files/1 HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 6\r\n\r\n")
        try connection.answer("HTTP/1.1 100 Continue\r\n\r\n")
        #expect(try connection.written() == "abcdef")
        try connection.answer("HTTP/1.1 204 No Content\r\n\r\n")
        let ended = try #require(connection.result(future))
        #expect(ended.response?.status == 204 && ended.bytesSent == 6 && ended.reusable)
    }

    @Test func aRefusalBeforeOneHundredContinueGetsNoBodyByte() throws {
        let connection = try Connection()
        let exchange = DirectExchange(
            head: head(.PATCH, uri: "/files/1", [("Expect", "100-continue"), ("Content-Length", "3")]),
            body: .stream(length: 3, idleCounts: true, produce: { writer in writer.write(.byteBuffer(ByteBuffer(string: "abc"))) }),
            timeouts: timeouts, sent: { _ in })
        let future = connection.run(exchange)
        _ = try connection.written()
        try connection.answer("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
        let ended = try #require(connection.result(future))
        #expect(ended.response?.status == 503 && !ended.reusable && ended.bytesSent == 0)
        #expect(try connection.written() == "", "no body byte")
        #expect(!connection.channel.isActive && connection.closed.value)
    }

    @Test func aServerThatIgnoresExpectGetsTheBodyWhenTheWaitIsOver() throws {
        let connection = try Connection()
        let exchange = DirectExchange(
            head: head(.PATCH, uri: "/files/1", [("Expect", "100-continue"), ("Content-Length", "3")]),
            body: .stream(length: 3, idleCounts: true, produce: { writer in writer.write(.byteBuffer(ByteBuffer(string: "abc"))) }),
            timeouts: timeouts, sent: { _ in })
        _ = connection.run(exchange)
        _ = try connection.written()
        // A second, as curl waits, however long the answer may take.
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(try connection.written() == "")
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(try connection.written() == "abc")
    }

    @Test func aBodyThatStopsMovingStallsAndTheConnectionCloses() throws {
        let connection = try Connection()
        let never = connection.channel.eventLoop.makePromise(of: Void.self)
        let exchange = DirectExchange(
            head: head(.POST, [("Content-Length", "3")]), body: .stream(length: 3, idleCounts: true, produce: { _ in never.futureResult }),
            timeouts: timeouts, sent: { _ in })
        let future = connection.run(exchange)
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        let ended = try #require(connection.result(future))
        #expect(ended.failure?.kind == .stalled && !ended.reusable)
        #expect(!connection.channel.isActive)
        never.fail(ChannelError.ioOnClosedChannel)
    }

    @Test func theAnswerClockKeepsWhatArrivedOfAnAnswer() throws {
        let connection = try Connection()
        let future = connection.run(inMemory("x"))
        try connection.answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\npart")
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        let ended = try #require(connection.result(future))
        #expect(ended.response?.status == 200 && ended.response?.bodyBytesTotal == 4)
        #expect(ended.response?.cut?.contains("4 B of 10 B arrived") == true)
        #expect(!connection.channel.isActive)
    }

    @Test func bytesOnAnIdleConnectionCloseItAndSoDoesItsIdleClock() throws {
        let unsolicited = try Connection()
        try unsolicited.answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(!unsolicited.channel.isActive)

        let parked = try Connection()
        parked.handler.parked(expiringIn: .seconds(60))
        parked.channel.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(parked.channel.isActive)
        let next = parked.run(inMemory("y"))
        parked.channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(parked.channel.isActive, "a request on it stopped the idle clock")
        try parked.answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(parked.result(next)?.reusable == true)
    }

    @Test func aClosedConnectionRefusesTheNextRequestWithoutTouchingIt() throws {
        let connection = try Connection()
        try connection.channel.close().wait()
        let refused = connection.result(connection.run(inMemory("z")))
        #expect(refused?.failure?.message == "the server closed the connection before the upload began")
    }
}
