import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing
@testable import UploadClient
import UploadCore
import UploadProtocols
import UploadTesting

/// An origin in memory behind the exchange seam: every request is answered by `answer`, and
/// every body is read to its end, as a server would.
final class FakeExchanger: Exchanger {
    struct Seen: Sendable {
        var method: HTTPMethod
        var url: String
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    let direct: Bool
    let answer: @Sendable (Seen) -> (interim: [UploadResponse], final: UploadResponse)
    let seen = NIOLockedValueBox<[Seen]>([])

    init(direct: Bool, answer: @escaping @Sendable (Seen) -> (interim: [UploadResponse], final: UploadResponse)) {
        self.direct = direct
        self.answer = answer
    }

    func path(to endpoint: Endpoint) -> ExchangePath {
        ExchangePath(direct: direct && !endpoint.isSecure, throughHTTPProxy: false)
    }

    func exchange(_ exchange: Exchange, eventLoop: EventLoop, observer: AttemptObserver) async -> AttemptResult {
        var body: [UInt8] = []
        switch exchange.body {
        case .none:
            break
        case .buffers(let pieces):
            for piece in pieces { body += piece.readableBytesView }
        case .streamed(let streamer):
            let collected = NIOLockedValueBox<[UInt8]>([])
            let writer = HTTPClient.Body.StreamWriter { part in
                if case .byteBuffer(let buffer) = part { collected.withLockedValue { $0 += buffer.readableBytesView } }
                return eventLoop.makeSucceededVoidFuture()
            }
            do {
                try await streamer.stream(into: writer).get()
            } catch {
                return AttemptResult(outcome: .failed(UploadFailure(.fileError, "\(error)")), response: nil, bytesSent: 0)
            }
            body = collected.withLockedValue { $0 }
        }
        let request = Seen(method: exchange.method, url: exchange.endpoint.url, headers: exchange.headers, body: body)
        seen.withLockedValue { $0.append(request) }
        let (interims, final) = answer(request)
        for interim in interims { exchange.interim?(interim) }
        let sent = Int64(body.count)
        if sent > 0 { observer.progress(sent, exchange.progressBase + sent, exchange.progressTotal ?? (exchange.progressBase + sent)) }
        return AttemptResult(outcome: Exchange.outcome(final, bytesSent: sent, expected: exchange.body.length), response: final, bytesSent: sent)
    }

    var requests: [String] { seen.withLockedValue { $0.map { "\($0.method.rawValue) \($0.url)" } } }
}

/// Every protocol driven through the exchange seam with no socket: the plan, the machines and
/// the shells as one, against origins in memory.
@Suite struct FakeExchangerTests {
    static func response(_ status: Int, _ headers: [(String, String)] = [], body: String = "") -> UploadResponse {
        UploadResponse(status: status, reason: "", headers: headers, body: Array(body.utf8), bodyBytesTotal: Int64(body.utf8.count))
    }

    static func transport(_ fake: FakeExchanger, protocol: UploadProtocol = .auto, location: Bool = false) throws -> HTTPUploadTransport {
        try HTTPUploadTransport(digests: false, uploadProtocol: `protocol`, exchanger: fake, followsRedirectsElsewhere: location)
    }

    static func header(_ seen: FakeExchanger.Seen, _ name: String) -> String? { seen.headers.first(name: name) }

    /// The file part of a multipart body: between the part's head and the closing boundary.
    static func fileBytes(ofMultipart body: [UInt8], size: Int) -> [UInt8]? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let start = (0...(body.count - separator.count)).first(where: { Array(body[$0..<$0 + separator.count]) == separator }) else { return nil }
        let from = start + separator.count
        guard from + size <= body.count else { return nil }
        return Array(body[from..<from + size])
    }

    @Test func aSmallPhotoIsOnePostInOneWrite() async throws {
        let path = try await TestFiles.image("small.jpg", size: 64 * 1024, in: "fake-plain")
        let fake = FakeExchanger(direct: true) { _ in ([], Self.response(201, body: #"{"filename":"small.jpg"}"#)) }
        let transport = try Self.transport(fake)
        let result = await transport.perform(try UploadRequest.forPath(path, url: "http://photos.test/photo"), observer: AttemptObserver())
        try await transport.shutdown()
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(fake.requests == ["POST http://photos.test/photo"])
        let seen = try #require(fake.seen.withLockedValue { $0.first })
        #expect(Self.fileBytes(ofMultipart: seen.body, size: 64 * 1024) == Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    @Test func aRedirectIsFollowedAndTheTokenStaysHome() async throws {
        let path = try await TestFiles.image("moved.jpg", size: 3_000, in: "fake-redirect")
        let fake = FakeExchanger(direct: true) { seen in
            seen.url.hasPrefix("http://photos.test/")
                ? ([], Self.response(307, [("Location", "http://cdn.test:8080/in")]))
                : ([], Self.response(201, body: "{}"))
        }
        let transport = try Self.transport(fake, location: true)
        var request = try UploadRequest.forPath(path, url: "http://photos.test/photo")
        request.headers = [RequestHeader(name: "Authorization", value: "Bearer s3cret")]
        let result = await transport.perform(request, observer: AttemptObserver())
        try await transport.shutdown()
        #expect(result.response?.status == 201)
        #expect(fake.requests == ["POST http://photos.test/photo", "POST http://cdn.test:8080/in"])
        let seen = fake.seen.withLockedValue { $0 }
        #expect(Self.header(seen[0], "Authorization") == "Bearer s3cret")
        #expect(Self.header(seen[1], "Authorization") == nil)
    }

    /// A tus origin: asked once, created, then the file in one PATCH whose bytes are the file's.
    @Test func aTusOriginGetsTheFileByTus() async throws {
        let size = 3_000_000
        let path = try await TestFiles.image("tus.jpg", size: Int64(size), in: "fake-tus")
        let stored = NIOLockedValueBox<[UInt8]>([])
        let tus = [("Tus-Resumable", "1.0.0")]
        let fake = FakeExchanger(direct: false) { seen in
            switch seen.method {
            case .OPTIONS: ([], Self.response(204, tus + [("Tus-Version", "1.0.0"), ("Tus-Extension", "creation")]))
            case .POST: ([], Self.response(201, tus + [("Location", "/files/1"), ("Upload-Offset", "0")]))
            case .PATCH:
                (
                    [],
                    Self.response(
                        204,
                        tus + [
                            (
                                "Upload-Offset",
                                String(
                                    stored.withLockedValue {
                                        $0 += seen.body
                                        return $0.count
                                    })
                            )
                        ])
                )
            default: ([], Self.response(405))
            }
        }
        let transport = try Self.transport(fake)
        let result = await transport.perform(try UploadRequest.forPath(path, url: "https://tus.test/files/"), observer: AttemptObserver())
        try await transport.shutdown()
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(fake.requests == ["OPTIONS https://tus.test/files/", "POST https://tus.test/files/", "PATCH https://tus.test/files/1"])
        #expect(stored.withLockedValue { $0 } == Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// The draft over TLS: created empty (careful), then the body appended whole.
    @Test func aDraftOriginOverTLSGetsACarefulCreationAndOneAppend() async throws {
        let path = try await TestFiles.image("draft.jpg", size: 2_000_000, in: "fake-draft")
        let version = [("Upload-Draft-Interop-Version", String(ResumableFields.currentVersion))]
        let fake = FakeExchanger(direct: false) { seen in
            switch seen.method {
            case .OPTIONS: ([], Self.response(204, version + [("Upload-Limit", "max-size=100000000")]))
            case .POST: ([], Self.response(201, version + [("Location", "/uploads/7"), ("Upload-Offset", "0")]))
            case .PATCH: ([], Self.response(201, body: #"{"filename":"draft.jpg"}"#))
            default: ([], Self.response(405))
            }
        }
        let transport = try Self.transport(fake)
        let result = await transport.perform(try UploadRequest.forPath(path, url: "https://draft.test/photo"), observer: AttemptObserver())
        try await transport.shutdown()
        #expect(result.response?.status == 201, "\(result.outcome)")
        #expect(fake.requests == ["OPTIONS https://draft.test/photo", "POST https://draft.test/photo", "PATCH https://draft.test/uploads/7"])
        let seen = fake.seen.withLockedValue { $0 }
        #expect(seen[1].body.isEmpty && Self.header(seen[1], "Upload-Complete") == "?0")
        #expect(Self.fileBytes(ofMultipart: seen[2].body, size: 2_000_000) == Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// The draft where interim answers are seen: the body in the creation request, its `104`
    /// making the upload resumable before the answer.
    @Test func aDraftOriginOverPlainHTTPGetsTheBodyInTheCreation() async throws {
        let path = try await TestFiles.image("optimistic.jpg", size: 2_000_000, in: "fake-optimistic")
        let version = [("Upload-Draft-Interop-Version", String(ResumableFields.currentVersion))]
        let fake = FakeExchanger(direct: true) { seen in
            switch seen.method {
            case .OPTIONS: ([], Self.response(204, version + [("Upload-Limit", "max-size=100000000")]))
            case .POST: ([Self.response(104, version + [("Location", "/uploads/9")])], Self.response(201, body: "{}"))
            default: ([], Self.response(405))
            }
        }
        let announced = NIOLockedValueBox<[String]>([])
        let observer = AttemptObserver(resumable: { point, _ in if let point { announced.withLockedValue { $0.append(point.uploadURL) } } })
        let transport = try Self.transport(fake)
        let result = await transport.perform(try UploadRequest.forPath(path, url: "http://draft.test/photo"), observer: observer)
        try await transport.shutdown()
        #expect(result.response?.status == 201, "\(result.outcome)")
        #expect(fake.requests == ["OPTIONS http://draft.test/photo", "POST http://draft.test/photo"])
        #expect(announced.withLockedValue { $0 }.first == "http://draft.test/uploads/9")
        let seen = fake.seen.withLockedValue { $0 }
        #expect(Self.header(seen[1], "Upload-Complete") == "?1")
        #expect(Self.fileBytes(ofMultipart: seen[1].body, size: 2_000_000) == Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// A tus server refusing a multipart body: asked what it offers, and the file goes by tus.
    @Test func aTusRefusalOfTheMultipartBodyTurnsTheSameAttemptToTus() async throws {
        let path = try await TestFiles.image("turn.jpg", size: 10_000, in: "fake-turn")
        let tus = [("Tus-Resumable", "1.0.0")]
        let fake = FakeExchanger(direct: true) { seen in
            switch seen.method {
            case .POST where Self.header(seen, "Upload-Length") == nil: ([], Self.response(412, tus + [("Tus-Version", "1.0.0")]))
            case .OPTIONS: ([], Self.response(204, tus + [("Tus-Version", "1.0.0"), ("Tus-Extension", "creation,creation-with-upload")]))
            case .POST: ([], Self.response(201, tus + [("Location", "/files/2"), ("Upload-Offset", String(seen.body.count))]))
            default: ([], Self.response(405))
            }
        }
        let transport = try Self.transport(fake)
        let result = await transport.perform(try UploadRequest.forPath(path, url: "http://turn.test/files/"), observer: AttemptObserver())
        try await transport.shutdown()
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(fake.requests == ["POST http://turn.test/files/", "OPTIONS http://turn.test/files/", "POST http://turn.test/files/"])
        #expect(fake.seen.withLockedValue { $0 }.last?.body == Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// `--put`: the raw bytes, to the folder URL and the file's name, typed from the file unless
    /// the user says otherwise.
    @Test func aPutSendsTheRawFileToTheFolderURLAndItsName() async throws {
        for (size, userType) in [(50_000, nil), (3_000_000, "application/octet-stream")] as [(Int, String?)] {
            let path = try await TestFiles.image("holiday photo.jpg", size: Int64(size), in: "fake-put")
            let fake = FakeExchanger(direct: true) { _ in ([], Self.response(201)) }
            let transport = try Self.transport(fake, protocol: .put)
            var request = try UploadRequest.forPath(path, url: "http://bucket.test/photos/?X-Amz-Signature=abc")
            if let userType { request.headers = [RequestHeader(name: "Content-Type", value: userType)] }
            let result = await transport.perform(request, observer: AttemptObserver())
            try await transport.shutdown()
            #expect(result.outcome.isSuccess, "\(result.outcome)")
            #expect(fake.requests == ["PUT http://bucket.test/photos/holiday%20photo.jpg?X-Amz-Signature=abc"])
            let seen = try #require(fake.seen.withLockedValue { $0.first })
            #expect(seen.body == Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(Self.header(seen, "Content-Type") == userType ?? "image/jpeg")
            #expect(seen.headers["Content-Type"].count == 1)
        }
    }
}
