import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing
import UploadCore
import UploadTesting
@testable import Receiver

/// The gate as the pipeline sees it, on an `EmbeddedChannel` with its own event loop's clock:
/// what it writes, what it passes on, what it tells the registry, when it closes.
struct UploadGateTests {
    final class Fixture {
        let registry: ConnectionRegistry
        let resumable: ResumableStore
        let gate: UploadGate
        let channel: EmbeddedChannel
        let loop = EmbeddedEventLoop()
        let lines = NIOLockedValueBox<[RequestLogLine]>([])

        init(limit: Int = 8) throws {
            var configuration = ReceiverConfiguration(path: "/photo", maxSize: 10_000)
            configuration.limits = .init(headerTimeout: .seconds(10), idleTimeout: .seconds(60), bodyStallTimeout: .seconds(30))
            let directory = TestFiles.makeTemporaryDirectory("gate")
            registry = ConnectionRegistry(limit: limit)
            resumable = ResumableStore(directory: directory, maxAge: .seconds(3600), clock: .system)
            let lines = self.lines
            gate = UploadGate(
                configuration: configuration, registry: registry, resumable: resumable,
                idempotency: IdempotencyKeys(maxAge: .seconds(3600))
            ) { line in lines.withLockedValue { $0.append(line) } }
            channel = EmbeddedChannel(handler: gate, loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "10.1.2.3", port: 4000)).wait()
            // No HTTP codec here: the test tells the gate of raw bytes itself, as the tap would.
            let tap = try channel.pipeline.syncOperations.handler(type: ByteTap.self)
            _ = channel.pipeline.syncOperations.removeHandler(tap)
            loop.run()
        }

        var id: UInt { ConnectionRegistry.id(of: channel) }

        func send(_ head: HTTPRequest) throws {
            gate.bytesArrived(200)
            try channel.writeInbound(HTTPRequestPart.head(head))
        }

        /// Everything written to the client so far.
        func written() throws -> [HTTPResponsePart] {
            var parts: [HTTPResponsePart] = []
            while let part = try channel.readOutbound(as: HTTPResponsePart.self) { parts.append(part) }
            return parts
        }

        func passedOn() throws -> [HTTPRequestPart] {
            var parts: [HTTPRequestPart] = []
            while let part = try channel.readInbound(as: HTTPRequestPart.self) { parts.append(part) }
            return parts
        }
    }

    static func head(_ method: HTTPRequest.Method = .post, _ path: String = "/photo", _ fields: [String: String] = [:]) -> HTTPRequest {
        var request = HTTPRequest(method: method, scheme: nil, authority: "uploads.example", path: path)
        request.headerFields[.contentType] = "multipart/form-data; boundary=abc"
        for (name, value) in fields { request.headerFields[HTTPField.Name(name)!] = value }
        return request
    }

    static func status(_ part: HTTPResponsePart?) -> Int? {
        guard case .head(let head)? = part else { return nil }
        return Int(head.status.code)
    }

    @Test func aRefusedHeadIsAnsweredWithoutReadingItsBodyAndTheConnectionEndsAfterTheLinger() throws {
        let fixture = try Fixture()
        try fixture.send(Self.head(.post, "/elsewhere"))
        try fixture.channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "--abc")))
        #expect(try fixture.passedOn().isEmpty)
        let answer = try fixture.written()
        #expect(answer.count == 3)
        #expect(Self.status(answer.first) == 404)
        if case .head(let head)? = answer.first { #expect(head.headerFields[.connection] == "close") }
        #expect(fixture.lines.withLockedValue { $0.map(\.status) } == [404])
        #expect(fixture.channel.isActive)
        fixture.loop.advanceTime(by: .milliseconds(999))
        #expect(fixture.channel.isActive)
        fixture.loop.advanceTime(by: .milliseconds(1))
        #expect(!fixture.channel.isActive)
        #expect(fixture.registry.openCount == 0)
    }

    @Test func anAcceptedHeadGoesOnWithContinueAndTheResponderLearnsItsClient() throws {
        let fixture = try Fixture()
        #expect(fixture.registry.openCount == 1)
        try fixture.send(Self.head(.post, "/photo", ["Expect": "100-continue"]))
        #expect(Self.status(try fixture.written().first) == 100)
        let passed = try fixture.passedOn()
        guard case .head(let head)? = passed.first else {
            Issue.record("the head is passed on")
            return
        }
        #expect(head.path == "/photo")
        // What the gate knows travels beside the request, not in its fields.
        #expect(head.headerFields.count == 2)
        #expect(fixture.registry.nextRequest(on: fixture.id) == RequestFacts(connection: fixture.id, client: "10.1.2.3", announcedToken: nil))
        try fixture.channel.close().wait()
        #expect(fixture.registry.openCount == 0)
    }

    @Test func aResumableCreationIsAnnouncedAndItsTokenGoesToTheResponderWithThatRequestOnly() throws {
        let fixture = try Fixture()
        try fixture.send(Self.head(.post, "/photo", ["Upload-Complete": "?0", "Upload-Length": "900", "Upload-Draft-Interop-Version": "8"]))
        let written = try fixture.written()
        guard case .head(let announcement)? = written.first else {
            Issue.record("104 is written before the body")
            return
        }
        #expect(announcement.status.code == 104)
        let location = try #require(announcement.headerFields[.location])
        #expect(location.hasPrefix("http://uploads.example/resumable/"))
        let token = String(location.dropFirst("http://uploads.example/resumable/".count))
        #expect(fixture.resumable.peek(token, now: Date())?.record.length == 900)
        #expect(fixture.resumable.peek(token, now: Date())?.record.client == "10.1.2.3")
        try fixture.channel.writeInbound(HTTPRequestPart.end(nil))
        // A second request on the connection, answered after the first.
        try fixture.channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .created)))
        try fixture.channel.writeOutbound(HTTPResponsePart.end(nil))
        try fixture.send(Self.head())
        #expect(fixture.registry.nextRequest(on: fixture.id).announcedToken == token)
        #expect(fixture.registry.nextRequest(on: fixture.id).announcedToken == nil)
    }

    @Test func aConnectionOverTheLimitIsAnswered503AtOnce() throws {
        let first = try Fixture(limit: 0)
        #expect(Self.status(try first.written().first) == 503)
        #expect(first.registry.openCount == 0)
        #expect(first.lines.withLockedValue { $0.isEmpty })
    }

    @Test func aHeadThatDoesNotArriveInTimeIsAnswered408AndABodyThatStallsFailsTheRequest() throws {
        let slow = try Fixture()
        slow.gate.bytesArrived(8)
        slow.loop.advanceTime(by: .seconds(10))
        #expect(Self.status(try slow.written().first) == 408)

        let stalled = try Fixture()
        try stalled.send(Self.head())
        _ = try stalled.passedOn()
        stalled.gate.readRequested()
        stalled.loop.advanceTime(by: .seconds(29))
        #expect(stalled.channel.isActive)
        stalled.loop.advanceTime(by: .seconds(1))
        #expect(throws: ConnectionInterruption.bodyStalled(.seconds(30))) { try stalled.channel.throwIfErrorCaught() }
        #expect(!stalled.channel.isActive)
    }

    @Test func anotherRequestTakingOverTheUploadEndsThisOne() throws {
        let fixture = try Fixture()
        try fixture.send(Self.head())
        fixture.registry.interrupt(fixture.id, .superseded)
        fixture.loop.run()
        #expect(throws: ConnectionInterruption.superseded) { try fixture.channel.throwIfErrorCaught() }
        #expect(!fixture.channel.isActive)
    }
}
