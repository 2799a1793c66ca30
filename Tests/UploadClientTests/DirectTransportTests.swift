import Foundation
import NIOConcurrencyHelpers
import Glibc
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// Counts a raw server's connections and the requests each carried.
final class ConnectionLog: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [Int] = []

    /// A new connection's number.
    func opened() -> Int {
        lock.lock()
        defer { lock.unlock() }
        requests.append(0)
        return requests.count - 1
    }
    func request(on connection: Int) {
        lock.lock()
        requests[connection] += 1
        lock.unlock()
    }
    var perConnection: [Int] {
        lock.lock()
        defer { lock.unlock() }
        return requests
    }
}

/// A keep-alive HTTP/1.1 server on a raw socket: `answer` is given each request and the number
/// of requests before it on the connection; it returns the bytes to send back and whether to
/// close after them (nil: close without answering).
func keepAliveServer(
    log: ConnectionLog, answer: @escaping @Sendable (_ request: CapturedRequest, _ index: Int) -> (text: String, close: Bool)?
) throws -> RawServer {
    try RawServer { connection in
        let number = log.opened()
        var index = 0
        while true {
            let request = readRequest(connection)
            guard request.head.hasPrefix("POST") else { break }
            log.request(on: number)
            guard let (text, close) = answer(request, index) else { break }
            connection.write(text)
            if close { break }
            index += 1
        }
        connection.close()
    }
}

/// Small files over plain HTTP go the direct way (`DirectHTTP1.swift`): these are the things it
/// does that AsyncHTTPClient did for it.
@Suite(.serialized, .timeLimit(.minutes(2))) struct DirectTransportTests {
    let folder = TestFiles.makeTemporaryDirectory("direct")

    func photos(_ count: Int, url: String) throws -> [UploadRequest] {
        try (0..<count).map { i in
            try UploadRequest.forPath(try TestFiles.writeImage(at: folder + "/p\(i).jpg", size: 20_000 + Int64(i)), url: url)
        }
    }

    static let ok = "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}"

    @Test func oneConnectionCarriesOneUploadAfterAnother() async throws {
        let log = ConnectionLog()
        let hosts = Captures()
        let server = try keepAliveServer(log: log) { request, _ in
            hosts.add(request)
            return (Self.ok, false)
        }
        defer { server.stop() }
        let run = try await UploadRun.run(try photos(5, url: server.url), concurrency: 1)
        for id in 1...5 { #expect(run.outcome(id) == .answered(status: 201)) }
        #expect(log.perConnection == [5])
        // What AsyncHTTPClient wrote for us: the Host with its port, the exact length.
        for request in hosts.all {
            #expect(request.header("Host") == "127.0.0.1:\(server.port)")
            #expect(request.contentLength == request.body.count)
            #expect(request.head.hasPrefix("POST /photo HTTP/1.1\r\n"))
        }
    }

    @Test func anAnswerThatSaysCloseEndsTheConnection() async throws {
        let log = ConnectionLog()
        // The server says close but keeps the connection open: reusing it would hang.
        let server = try keepAliveServer(log: log) { _, _ in
            ("HTTP/1.1 201 Created\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", false)
        }
        defer { server.stop() }
        let run = try await UploadRun.run(try photos(3, url: server.url), concurrency: 1)
        for id in 1...3 { #expect(run.outcome(id) == .answered(status: 201)) }
        #expect(log.perConnection == [1, 1, 1])
    }

    @Test func aReusedConnectionClosedUnderTheUploadIsRetriedOnceOnANewOne() async throws {
        let log = ConnectionLog()
        // Every connection answers its first request, then drops the next one unanswered, as a
        // server does that closes idle connections at the moment the client reuses one.
        let server = try keepAliveServer(log: log) { _, index in index == 0 ? (Self.ok, false) : nil }
        defer { server.stop() }
        let run = try await UploadRun.run(try photos(3, url: server.url), concurrency: 1)
        for id in 1...3 {
            #expect(run.outcome(id) == .answered(status: 201))
            #expect(run.attempts(id) == 1, "the queue saw no failed attempt")
        }
        // Connection 1 carried upload 1 and dropped upload 2, which went again on connection 2, …
        #expect(log.perConnection == [2, 2, 1])
    }

    @Test func interimAnswersBeforeTheFinalOneAreSkipped() async throws {
        let log = ConnectionLog()
        // RFC 9110 §15.2: a client must read 1xx answers it did not ask for and wait for the final
        // one (the parser drops them; this keeps it so).
        let server = try keepAliveServer(log: log) { _, _ in
            ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n" + Self.ok, false)
        }
        defer { server.stop() }
        let run = try await UploadRun.run(try photos(3, url: server.url), concurrency: 1)
        for id in 1...3 { #expect(run.outcome(id) == .answered(status: 201)) }
        #expect(log.perConnection == [3])
    }

    @Test func aHeaderWithAControlCharacterIsRefusedAndNothingIsSent() async throws {
        let log = ConnectionLog()
        let captured = Captures()
        let server = try keepAliveServer(log: log) { request, _ in
            captured.add(request)
            return (Self.ok, false)
        }
        defer { server.stop() }
        var request = try photos(1, url: server.url)[0]
        request.headers = [try RequestHeader(parsing: "X-Note: a\u{01}b")]
        let run = try await UploadRun.run([request])
        #expect(run.failure()?.message.contains("\"X-Note\" cannot be sent") == true, "\(String(describing: run.failure()))")
        #expect(captured.all.isEmpty)
    }

    @Test func aNewConnectionThatDiesIsNotRetried() async throws {
        let log = ConnectionLog()
        let server = try keepAliveServer(log: log) { _, _ in nil }
        defer { server.stop() }
        let run = try await UploadRun.run(try photos(1, url: server.url))
        #expect(run.failure() == UploadFailure(.connectionLost, "the server closed the connection without answering"))
        #expect(log.perConnection == [1])
    }

    @Test func anIdleConnectionIsClosedAfterItsIdleTimeAndLeavesThePool() async throws {
        let closedByClient = Captures()
        let done = DispatchSemaphore(value: 0)
        let server = try RawServer { connection in
            if connection.readUntilClosed(timeout: 10).closed { closedByClient.add(CapturedRequest(head: "closed", body: [])) }
            done.signal()
        }
        defer { server.stop() }
        let pool = DirectConnections()
        let origin = DirectConnections.Peer(host: "127.0.0.1", port: server.port)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let connection = try await pool.connect(origin, on: loop, timeout: .seconds(5)).get()
        pool.park(connection, origin, idleFor: .milliseconds(200))
        _ = try await offPool { done.wait(timeout: .now() + 15) }
        #expect(closedByClient.all.count == 1, "the client closed the idle connection")
        try await connection.channel.closeFuture.get()
        #expect(pool.take(origin, preferring: loop) == nil)
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080/photo", "127.0.0.1", 8080, "/photo", "127.0.0.1:8080"),
        ("http://example.com/up?x=1&y=%20", "example.com", 80, "/up?x=1&y=%20", "example.com"),
        ("http://[::1]:3000", "::1", 3000, "/", "[::1]:3000"),
        ("HTTP://Host:81/a%2Fb", "host", 81, "/a%2Fb", "host:81"),
    ])
    func targets(url: String, host: String, port: Int, uri: String, hostHeader: String) throws {
        let endpoint = try Endpoint(parsing: url)
        let target = try #require(DirectTarget(endpoint))
        #expect(target.peer == DirectConnections.Peer(host: host, port: port))
        #expect(target.uri == uri)
        #expect(target.hostHeader == hostHeader)
    }

    @Test func onlyPlainHTTPGoesDirect() {
        #expect(Endpoint("https://127.0.0.1/photo").flatMap { DirectTarget($0) } == nil)
        #expect(Endpoint("http:///photo") == nil)
        #expect(Endpoint("ftp://host/photo") == nil)
        // The request line carries the target as is: never a space, control or non-ASCII byte.
        for url in ["http://h/a b", "http://h/写真?q=é", "http://h/p?x=\u{7F}", "http://h/%20ok"] {
            if let target = Endpoint(url).flatMap({ DirectTarget($0) }) {
                #expect(target.uri.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "\(url) -> \(target.uri)")
            }
        }
        #expect(Endpoint("http://h/%20ok").flatMap { DirectTarget($0) }?.uri == "/%20ok")
    }
}

/// `Expect: 100-continue` on the direct path: the body waits for the server's `100`, and does
/// not go at all when the final answer comes first.
@Suite(.serialized) struct ExpectContinueClientTests {
    static let body = [UInt8](repeating: 0x61, count: 200_000)

    /// The server's side: reads the head, then does `respond` with the connection; gives back
    /// the body bytes that arrived.
    static func exchange(_ respond: @escaping @Sendable (RawConnection) -> Void) async throws -> (AttemptResult, bodyBytes: Int) {
        let received = Captures()
        let seen = NIOLockedValueBox<[String]>([])
        let server = try RawServer { connection in
            // Long: a full run starts hundreds of tests at once, and on two cores the client's
            // task was seen to wait more than 30 s between its connect and its request head.
            let head = connection.read(until: "\r\n\r\n", timeout: 300)
            seen.withLockedValue { $0.append(String(head.prefix(40))) }
            // Only this test's request: a connection another test left aimed at a port this
            // server now has (ports come back to the pool) is closed unanswered. Once, a full
            // run saw a first head here that was not the PATCH.
            guard head.hasPrefix("PATCH ") else {
                connection.close()
                return
            }
            received.add(CapturedRequest(head: head, body: []))
            respond(connection)
            let rest = connection.readAll(idle: 0.3)
            received.add(CapturedRequest(head: "", body: rest))
            connection.close()
        }
        defer { server.stop() }
        // The body waits a second for `100` (as curl), then goes anyway.
        let transport = try HTTPUploadTransport(timeouts: UploadTimeouts(connect: .seconds(5), stall: .seconds(5), answer: .seconds(1)))
        let target = try #require(transport.connections.target(try Endpoint(parsing: server.url)))
        var fields = HTTPHeaders()
        fields.add(name: "Expect", value: "100-continue")
        let bytes = Self.body
        let result = await DirectExchanger(connections: transport.connections, timeouts: transport.timeouts).send(
            target, method: .PATCH, headers: fields,
            body: .stream(length: Int64(bytes.count), idleCounts: true, produce: { writer in writer.write(.byteBuffer(ByteBuffer(bytes: bytes))) }),
            length: Int64(bytes.count), eventLoop: MultiThreadedEventLoopGroup.singleton.any(), observer: AttemptObserver())
        try await transport.shutdown()
        // The server's thread notes what arrived once the connection is done: wait for it.
        _ = try await eventually { received.all.count >= 2 }
        #expect(received.all.first?.head.contains("Expect: 100-continue") == true, "\(result.outcome), \(seen.withLockedValue { $0 }) connection(s) seen")
        return (result, received.all.dropFirst().first?.body.count ?? -1)
    }

    @Test func aFinalAnswerBeforeTheContinueMeansTheBodyNeverGoes() async throws {
        let (result, sent) = try await Self.exchange { connection in
            connection.write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
        }
        #expect(result.response?.status == 503)
        #expect(result.bytesSent == 0)
        #expect(sent == 0, "body bytes reached the server: \(sent)")
    }

    @Test func theBodyGoesOnceTheServerSaysContinue() async throws {
        let (result, _) = try await Self.exchange { connection in
            connection.write("HTTP/1.1 100 Continue\r\n\r\n")
            _ = connection.read(atLeast: Self.body.count)
            connection.write("HTTP/1.1 204 No Content\r\n\r\n")
        }
        #expect(result.response?.status == 204)
        #expect(result.bytesSent == Int64(Self.body.count))
    }

    @Test func aServerThatIgnoresExpectGetsTheBodyAfterAWhile() async throws {
        let (result, _) = try await Self.exchange { connection in
            _ = connection.read(atLeast: Self.body.count)
            connection.write("HTTP/1.1 204 No Content\r\n\r\n")
        }
        #expect(result.response?.status == 204)
        #expect(result.bytesSent == Int64(Self.body.count))
    }
}
