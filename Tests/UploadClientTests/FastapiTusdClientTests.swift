import Foundation
import Testing
import UploadClient
import UploadCore
import UploadTesting

/// The client against a third tus server it did not write, `fastapi-tusd` (PyPI), which writes a
/// `PATCH`'s bytes as they arrive, so a cut request keeps what reached it (unlike aiohttp-tus),
/// and whose `OPTIONS` fails (500), so it is spoken to with `--protocol tus`.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TusPeer.fastapiTusdAvailable, "needs python3 with fastapi-tusd (.ci/run installs it)"))
struct FastapiTusdClientTests {
    static let size: Int64 = 6_000_000

    func file(_ name: String = "big.jpg", size: Int64 = Self.size) async throws -> String {
        try await TestFiles.image(name, size: size, in: "fastapi-tusd")
    }

    @Test func anUploadCutTwiceContinuesFromWhatTheServerKeptAndGoesAboutOnce() async throws {
        let server = try await TusPeer.start(.fastapiTusd)
        defer { server.stop() }
        let path = try await file()
        let whole = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], uploadProtocol: .tus)
        #expect(whole.outcome()?.isSuccess == true, "\(String(describing: whole.outcome())) \(server.requests)")
        let first = try #require(server.uploads.first)
        #expect(TestFiles.sameContents(path, first.path) && first.metadata["filename"] != nil, "\(first)")

        let relay = try CuttingRelay(to: server.port, cutAfter: [2_500_000, 2_300_000])
        defer { relay.stop() }
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: "http://127.0.0.1:\(relay.port)/files")],
            retryPolicy: RetryPolicy(maxRetries: 5), uploadProtocol: .tus)
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(server.requests)")
        #expect(relay.cutsDone == 2)
        let second = try #require(server.uploads.first { $0.id != first.id })
        #expect(TestFiles.sameContents(path, second.path))
        // It kept what reached it: continued from there, not sent again in chunks.
        let offsets = run.resumedOffsets()
        #expect(offsets.count == 2 && offsets.allSatisfy { $0 > 1_000_000 } && offsets == offsets.sorted(), "\(offsets)")
        let ratio = Double(relay.bytesToServer) / Double(Self.size)
        #expect(ratio >= 1 && ratio <= 1.05, "bytes on the wire / file size = \(ratio)")
        #expect(server.requests.filter { $0.hasPrefix("PATCH") }.count <= 4, "\(server.requests)")
    }
}
