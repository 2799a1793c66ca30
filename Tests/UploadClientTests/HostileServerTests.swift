import Foundation
import NIOConcurrencyHelpers
import Testing
import UploadClient
import UploadCore
import UploadTesting

/// A server that sends the upload elsewhere on the same host (another port) gets the file
/// without the user's headers; the same origin gets them.
@Suite(.timeLimit(.minutes(2))) struct CredentialScopeTests {
    let folder = TestFiles.makeTemporaryDirectory("credential-scope")
    static let secrets = [RequestHeader(name: "Authorization", value: "Bearer s3cret-token"), RequestHeader(name: "X-Api-Key", value: "key-123")]

    @Test(arguments: ["307 Temporary Redirect", "308 Permanent Redirect"])
    func aRedirectToAnotherPortOfTheSameHostGoesWithoutTheHeaders(status: String) async throws {
        let elsewhere = Captures()
        let other = try answeringServer("200 OK", body: "{\"filename\":\"a.jpg\"}", captures: elsewhere)
        defer { other.stop() }
        let first = Captures()
        let endpoint = try answeringServer(status, headers: ["Location: http://127.0.0.1:\(other.port)/photo"], captures: first)
        defer { endpoint.stop() }
        let path = try TestFiles.writeImage(at: folder + "/a.jpg", size: 20_000)
        var request = try UploadRequest.forPath(path, url: endpoint.url)
        request.headers = Self.secrets
        // Followed only with --location (another port is another origin), and then without the headers.
        let run = try await UploadRun.run([request], resume: false, digests: false, location: true)
        #expect(run.outcome() == .answered(status: 200))
        #expect(first.all.first?.header("Authorization") == "Bearer s3cret-token", "the endpoint itself gets them")
        let moved = try #require(elsewhere.all.first)
        #expect(moved.header("Authorization") == nil && moved.header("X-Api-Key") == nil, "\(moved.head)")
        #expect(moved.body.count > 20_000, "the file went there, without the headers")
    }

    @Test func aRedirectWithinTheOriginKeepsThem() async throws {
        let seen = Captures()
        let count = NIOLockedValueBox(0)
        let server = try RawServer { connection in
            let request = readRequest(connection)
            seen.add(request)
            let first = count.withLockedValue { n -> Bool in
                n += 1
                return n == 1
            }
            let head = first ? "HTTP/1.1 307 Temporary Redirect\r\nLocation: /other\r\nContent-Length: 0" : "HTTP/1.1 200 OK\r\nContent-Length: 2"
            connection.write(head + "\r\nConnection: close\r\n\r\n" + (first ? "" : "{}"))
            connection.close()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/b.jpg", size: 5_000)
        var request = try UploadRequest.forPath(path, url: server.url)
        request.headers = Self.secrets
        let run = try await UploadRun.run([request], resume: false, digests: false)
        #expect(run.outcome() == .answered(status: 200))
        #expect(seen.all.count == 2)
        #expect(seen.all.last?.head.hasPrefix("POST /other ") == true)
        #expect(seen.all.last?.header("Authorization") == "Bearer s3cret-token")
    }

    @Test func aTusUploadResourceOnAnotherPortGetsTheFileWithoutTheHeaders() async throws {
        let resource = Captures()
        let length = NIOLockedValueBox<Int64>(0)
        let store = try RawServer { connection in
            let request = readRequest(connection)
            resource.add(request)
            let offset = request.head.hasPrefix("PATCH") ? Int64(request.body.count) : 0
            length.withLockedValue { $0 += offset }
            let total = length.withLockedValue { $0 }
            connection.write("HTTP/1.1 204 No Content\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: \(total)\r\nConnection: close\r\n\r\n")
            connection.close()
        }
        defer { store.stop() }
        let creation = Captures()
        let endpoint = try RawServer { connection in
            let request = readRequest(connection)
            creation.add(request)
            let answer =
                request.head.hasPrefix("OPTIONS")
                ? "HTTP/1.1 204 No Content\r\nTus-Resumable: 1.0.0\r\nTus-Version: 1.0.0\r\nTus-Extension: creation\r\n"
                : "HTTP/1.1 201 Created\r\nTus-Resumable: 1.0.0\r\nLocation: http://127.0.0.1:\(store.port)/files/1\r\nUpload-Offset: 0\r\n"
            connection.write(answer + "Content-Length: 0\r\nConnection: close\r\n\r\n")
            connection.close()
        }
        defer { endpoint.stop() }
        let path = try TestFiles.writeImage(at: folder + "/c.jpg", size: 30_000)
        var request = try UploadRequest.forPath(path, url: endpoint.url)
        request.headers = Self.secrets
        let run = try await UploadRun.run([request], digests: false, uploadProtocol: .tus)
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome()))")
        #expect(creation.all.contains { $0.head.hasPrefix("POST") && $0.header("Authorization") == "Bearer s3cret-token" })
        #expect(!resource.all.isEmpty)
        for request in resource.all {
            #expect(request.header("Authorization") == nil && request.header("X-Api-Key") == nil, "\(request.head)")
        }
    }
}

/// A server that streams its answer without end: reading stops once what is kept (1 MiB) is in,
/// with the answer said to be cut there, not after the whole answer timeout.
@Suite(.timeLimit(.minutes(1))) struct EndlessAnswerTests {
    let folder = TestFiles.makeTemporaryDirectory("endless-answer")

    @Test(arguments: [2_000, 3_000_000])
    func anEndlessAnswerIsReadUntilWhatIsKeptIsIn(size: Int) async throws {
        let server = try RawServer { connection in
            _ = readRequest(connection)
            connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n")
            let chunk = "10000\r\n" + String(repeating: "x", count: 0x10000) + "\r\n"
            // Until the client goes away (a write fails), for a minute at most.
            for _ in 0..<60_000 where connection.send(Array(chunk.utf8)) {}
            connection.close()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/e\(size).jpg", size: Int64(size))
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: server.url)],
            timeouts: UploadTimeouts(connect: .seconds(5), stall: .seconds(5), answer: .seconds(3600)),
            resume: false, digests: false)
        #expect(run.outcome() == .answered(status: 200))
        let response = run.events.compactMap { if case .response(_, let r) = $0 { r } else { nil } }.last
        #expect(response?.cut?.contains("the rest not read") == true, "\(String(describing: response?.cut))")
        #expect(response?.body.count == 1 << 20)
    }
}
