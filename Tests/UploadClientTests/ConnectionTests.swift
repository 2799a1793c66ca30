import Foundation
import Glibc
import Testing
import UploadClient
import UploadCore
import UploadTesting

/// How uploads use connections: reuse across uploads to one host, and the failures that happen
/// before any byte of a request is sent (name resolution, the TCP and TLS handshakes).
@Suite(.serialized, .timeLimit(.minutes(5))) struct ConnectionTests {
    let folder = TestFiles.makeTemporaryDirectory("connections")

    /// A raw HTTP/1.1 server that keeps each connection open and answers every request on it;
    /// it counts the connections it accepted and the requests it answered.
    final class KeepAliveServer: @unchecked Sendable {
        private let lock = NSLock()
        private var connections = 0
        private var requests = 0
        private(set) var server: RawServer!

        init() throws {
            server = try RawServer { [self] connection in
                lock.withLock { connections += 1 }
                while true {
                    let request = readRequest(connection)
                    if request.head.hasPrefix("OPTIONS") {
                        // Asked once per origin whether it resumes uploads: it does not.
                        connection.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                        continue
                    }
                    guard request.head.hasPrefix("POST"), request.body.count == request.contentLength else { break }
                    lock.withLock { requests += 1 }
                    connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
                }
                connection.close()
            }
        }

        var counts: (connections: Int, requests: Int) { lock.withLock { (connections, requests) } }
    }

    /// One upload at a time reuses one connection; two at a time need two and no more.
    @Test(arguments: [(uploads: 4, size: 200_000, concurrency: 1), (uploads: 6, size: 2_000_000, concurrency: 2)])
    func uploadsToOneHostReuseKeepAliveConnections(uploads: Int, size: Int64, concurrency: Int) async throws {
        let server = try KeepAliveServer()
        defer { server.server.stop() }
        let requests = try (1...uploads).map { n in
            try UploadRequest.forPath(try TestFiles.writeImage(at: folder + "/keep-\(concurrency)-\(n).jpg", size: size), url: server.server.url)
        }
        let run = try await UploadRun.run(requests, concurrency: concurrency)
        for id in 1...uploads { #expect(run.outcome(id) == .answered(status: 200)) }
        #expect(server.counts.requests == uploads)
        #expect(server.counts.connections <= concurrency)
    }

    /// A listener whose accept queue is full drops new SYNs, so a connect neither succeeds nor
    /// is refused: the connect clock must end it. The other clocks are far longer, so the
    /// kind and the message say which clock ended it; how long that took on a busy machine does not.
    @Test func aServerThatNeverCompletesTheHandshakeTimesOutOnTheConnectClock() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(listener, raw, length) == 0, listen(listener, 0) == 0, getsockname(listener, raw, &length) == 0 else {
                    throw POSIXError(.EADDRINUSE)
                }
            }
        }
        // Fill the accept queue (never accepted) with connections that complete.
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        for _ in 0..<2 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) } }
            fillers.append(fd)
        }
        // The queue is full once a connect completed (backlog 0 holds one): later SYNs are dropped.
        #expect(
            try await eventually {
                fillers.contains { fd in
                    var ready = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    return poll(&ready, 1, 0) == 1 && ready.revents & Int16(POLLOUT) != 0
                }
            })
        let port = Int(UInt16(bigEndian: address.sin_port))
        let path = try TestFiles.writeImage(at: folder + "/syn.jpg", size: 1000)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: "http://127.0.0.1:\(port)/photo")],
            timeouts: UploadTimeouts(connect: .seconds(1), stall: .seconds(60), answer: .seconds(60)))
        let failure = try #require(run.failure())
        #expect(failure.kind == .connectTimeout, "\(failure)")
        #expect(failure.message == "could not connect within 1.0 s", "\(failure.message)")
        #expect(run.progressTotals().isEmpty)
    }

    @Test func unknownHostCannotConnectAndSaysWhichName() async throws {
        let path = try TestFiles.writeImage(at: folder + "/dns.jpg", size: 1000)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: "http://no-such-host.invalid/photo")],
            timeouts: UploadTimeouts(connect: .seconds(5), stall: .seconds(5), answer: .seconds(5)))
        let failure = try #require(run.failure())
        #expect(failure.kind == .cannotConnect || failure.kind == .connectTimeout)
        #expect(failure.message.contains("no-such-host.invalid"), "\(failure.message)")
        #expect(run.progressTotals().isEmpty)
    }

    @Test func plainHTTPServerBehindAnHTTPSURLIsATLSFailure() async throws {
        let server = try RawServer { connection in
            _ = connection.readAll(idle: 0.3)
            connection.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            connection.close()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/tls.jpg", size: 1000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: "https://127.0.0.1:\(server.port)/photo")])
        let failure = try #require(run.failure())
        #expect(failure.kind == .cannotConnect)
        #expect(failure.message.hasPrefix("TLS handshake failed"), "\(failure.message)")
        #expect(run.progressTotals().isEmpty)
    }

    @Test func serverClosingDuringTheHandshakeIsATLSFailure() async throws {
        let server = try RawServer { connection in
            connection.read(atLeast: 1)
            connection.close()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/tls-closed.jpg", size: 1000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: "https://127.0.0.1:\(server.port)/photo")])
        let failure = try #require(run.failure())
        #expect(failure.kind == .cannotConnect, "\(failure)")
        #expect(failure.message.hasPrefix("TLS handshake failed"), "\(failure.message)")
    }
}
