import Foundation
import NIOConcurrencyHelpers
import Testing
import UploadClient
import UploadCore
import UploadTesting
import UploadProtocols

/// The same client against a second tus server it did not write, `aiohttp-tus` (PyPI), which
/// reads the specification differently from tuspyserver: it answers an `OPTIONS` without
/// `Tus-Resumable` as no tus server would, keeps a chunk only once its whole body arrived, and
/// (as aiohttp does by default) refuses a request body over a size it does not announce.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TusPeer.aiohttpTusAvailable, "needs python3 with aiohttp-tus (.ci/run installs it)"))
struct AiohttpTusClientTests {
    static let size: Int64 = 6_000_000

    func file(_ name: String = "big.jpg", size: Int64 = Self.size) async throws -> String {
        try await TestFiles.image(name, size: size, in: "aiohttp-tus")
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
        // The whole rest in one PATCH is refused (413) in words that name the limit
        // ("Maximum request body size 2097152 exceeded."): the rest goes in chunks of that.
        let whole = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], uploadProtocol: .tus)
        #expect(whole.outcome()?.isSuccess == true, "\(String(describing: whole.outcome())) \(server.requests)")
        #expect(server.storedFiles == ["big.jpg"])
        #expect(TestFiles.sameContents(path, server.directory + "/big.jpg"))
        #expect(try await eventually { server.requests.filter { $0.hasPrefix("PATCH") }.count >= 4 })
        let patches = server.requests.filter { $0.hasPrefix("PATCH") }
        #expect(patches.first?.hasSuffix("413") == true && patches.dropFirst().allSatisfy { $0.hasSuffix("204") }, "\(patches)")
        try? FileManager.default.removeItem(atPath: server.directory + "/big.jpg")

        // Chunks under its limit, through two cuts: continued from its offset, stored once, whole.
        let relay = try CuttingRelay(to: server.port, cutAfter: [2_500_000, 2_300_000])
        defer { relay.stop() }
        let url = "http://127.0.0.1:\(relay.port)/files"
        let chunked = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: url)], retryPolicy: RetryPolicy(maxRetries: 5),
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

    /// aiohttp-tus stores a `PATCH` only once all of it arrived: a cut loses the whole request.
    /// The client tells from the offset after the first cut that nothing of it was kept, sends
    /// the rest in chunks sized from the link (a second cut loses at most one), and remembers it
    /// for the origin: the next upload there goes in chunks from its first byte.
    @Test func aServerThatKeepsNothingOfACutRequestGetsChunksAfterOneLostRequest() async throws {
        let server = try await TusPeer.start(.aiohttpTus(maxRequest: 64 << 20))
        defer { server.stop() }
        let size: Int64 = 24_000_000
        let first = try await file("first.jpg", size: size)
        let second = try await file("second.jpg", size: size)
        let cut: Int64 = 8_000_000
        let relay = try CuttingRelay(to: server.port, cutAfter: [cut, cut, cut, cut])
        defer { relay.stop() }
        let url = "http://127.0.0.1:\(relay.port)/files"
        // One transport (what it learns of the origin lives in the process for loopback), the
        // second upload queued once the first is done.
        let transport = try HTTPUploadTransport(
            timeouts: UploadTimeouts(connect: .seconds(5), stall: .seconds(5), answer: .seconds(10), discovery: .seconds(10)),
            uploadProtocol: .tus)
        let queue = UploadQueue(transport: transport, concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 8), sleep: { _ in })
        var run = UploadRun()
        var firstWire: Int64 = 0
        await queue.enqueue(try UploadRequest.forPath(first, url: url), totalBytes: size)
        for await event in queue.events {
            run.events.append(event)
            guard case .finished(let id, _) = event else { continue }
            if id.rawValue == 1 {
                firstWire = relay.bytesToServer
                await queue.enqueue(try UploadRequest.forPath(second, url: url), totalBytes: size)
                await queue.finishWhenDrained()
            }
        }
        try await transport.shutdown()
        #expect(
            run.outcome(1)?.isSuccess == true && run.outcome(2)?.isSuccess == true,
            "\(String(describing: run.outcome(1))) \(String(describing: run.outcome(2))) \(server.requests)")
        #expect(relay.cutsDone == 4)
        #expect(TestFiles.sameContents(first, server.directory + "/first.jpg") && TestFiles.sameContents(second, server.directory + "/second.jpg"))
        let secondWire = relay.bytesToServer - firstWire
        // The first upload loses its first cut request whole (nothing was known yet), then at
        // most a chunk: less than the second whole request it lost before.
        #expect(
            firstWire >= size + cut && firstWire < size + 2 * cut - LinkEstimate.smallestChunk / 2,
            "first: \(firstWire) bytes on the wire, resumed at \(run.resumedOffsets(1)), \(server.requests)")
        // The second loses at most a chunk per cut, never a whole request of 8 MB.
        #expect(secondWire < size + 2 * LinkEstimate.largestChunk && secondWire < firstWire - cut / 2, "second: \(secondWire), first \(firstWire)")
        #expect(run.resumedOffsets(2).allSatisfy { $0 > 0 }, "\(run.resumedOffsets(2))")
    }
}
