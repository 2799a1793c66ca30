import Foundation
import Testing
import UploadClient
import UploadCore
import UploadTesting

/// The same client against a second tus server it did not write, `aiohttp-tus` (PyPI), which
/// reads the specification differently from tuspyserver: it answers an `OPTIONS` without
/// `Tus-Resumable` as no tus server would, keeps a chunk only once its whole body arrived, and
/// (as aiohttp does by default) refuses a request body over a size it does not announce.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TusPeer.aiohttpTusAvailable, "needs python3 with aiohttp-tus (.ci/run installs it)"))
struct AiohttpTusClientTests {
    static let size: Int64 = 6_000_000

    func file(_ name: String = "big.jpg", size: Int64 = Self.size) async throws -> String {
        let root = TestFiles.makeTemporaryDirectory("aiohttp-tus")
        return try await offPool { try TestFiles.writeImage(at: root + "/" + name, size: size) }
    }

    @Test func foundByItsOptionsAnswerAndStoredWholeUnderItsName() async throws {
        let server = try await TusPeer.start(.aiohttpTus(maxRequest: 64 << 20))
        defer { server.stop() }
        let path = try await file()
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)])
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(server.requests)")
        // It answers the question only when asked with Tus-Resumable, which the client sends.
        // (aiohttp logs a request once its answer went out: the last line may come a moment later.)
        #expect(try await eventually { server.requests.count >= 3 })
        #expect(server.requests.map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["OPTIONS", "POST", "PATCH"], "\(server.requests)")
        #expect(server.requests.first?.hasSuffix("204") == true, "\(server.requests)")
        #expect(server.storedFiles == ["big.jpg"])
        #expect(TestFiles.sameContents(path, server.directory + "/big.jpg"))
        let response = try #require(run.response())
        #expect(response.status == 204)
        #expect(response.textBody?.hasPrefix("stored at \(server.url)/") == true, "\(response.textBody ?? "")")
    }

    @Test func aServerThatRefusesLargeRequestsUnannouncedSaysSoAndChunksGetThrough() async throws {
        let server = try await TusPeer.start(.aiohttpTus(maxRequest: 2 << 20))
        defer { server.stop() }
        let path = try await file()
        // The whole rest in one PATCH is refused (413): the server's answer, as it came.
        let whole = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], uploadProtocol: .tus)
        #expect(whole.outcome() == .answered(status: 413), "\(String(describing: whole.outcome())) \(server.requests)")
        #expect(server.storedFiles.isEmpty)

        // Chunks under its limit, through two cuts: continued from its offset, stored once, whole.
        let relay = try CuttingRelay(to: server.port, cutAfter: [2_500_000, 2_300_000])
        defer { relay.stop() }
        let url = "http://127.0.0.1:\(relay.port)/files"
        let chunked = try await UploadRun.run([try UploadRequest.forPath(path, url: url)], retryPolicy: RetryPolicy(maxRetries: 5),
                                              uploadProtocol: .tus, chunkSize: 1 << 20)
        #expect(chunked.outcome()?.isSuccess == true, "\(String(describing: chunked.outcome())) \(server.requests)")
        #expect(relay.cutsDone == 2)
        #expect(server.storedFiles == ["big.jpg"])
        #expect(TestFiles.sameContents(path, server.directory + "/big.jpg"))
        let offsets = chunked.resumedOffsets()
        #expect(offsets.count == 2 && offsets.allSatisfy { $0 % (1 << 20) == 0 }, "whole chunks kept only: \(offsets)")
        // A cut chunk is lost whole on this server (it keeps nothing of it): at most one chunk
        // per cut goes twice.
        let ratio = Double(relay.bytesToServer) / Double(Self.size)
        #expect(ratio < 1.0 + 2.0 * Double(1 << 20) / Double(Self.size) + 0.01, "\(ratio)")
    }
}
