import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// The body as the streamer hands it to the HTTP client: which writes, with which bytes, and
/// what it refuses when the file changes after its size was taken.
@Suite struct BodyStreamerTests {
    let folder = TestFiles.makeTemporaryDirectory("streamer")

    /// Streams `path` (its size taken when it is opened, before `change` runs) and returns the
    /// writes; `preload` reads it whole first, as an attempt does for a file that fits in a chunk.
    func stream(
        _ path: String, chunkSize: Int, preload: Bool = false, change: (String) -> Void = { _ in }
    ) async throws -> (writes: [[UInt8]], layout: MultipartLayout) {
        let source = try FileSource.open(path: path)
        let layout = MultipartLayout(
            boundary: Boundary("b0undary"), fileField: "photo", fileName: "x.jpg", contentType: .jpeg, fileSize: source.size
        )
        change(path)
        let preloaded = preload ? try source.readWhole(size: source.size!) : nil
        let streamer = BodyStreamer(
            layout: layout, source: source, pipePrefix: nil, preloaded: preloaded, chunkSize: chunkSize, threadPool: .singleton,
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(), watch: WriteWatch(), rateLimit: nil
        )
        let writes = NIOLockedValueBox<[[UInt8]]>([])
        let writer = HTTPClient.Body.StreamWriter { part in
            if case .byteBuffer(let buffer) = part { writes.withLockedValue { $0.append(Array(buffer.readableBytesView)) } }
            return MultiThreadedEventLoopGroup.singleton.next().makeSucceededVoidFuture()
        }
        try await streamer.makeBody().stream(writer).get()
        return (writes.withLockedValue { $0 }, layout)
    }

    @Test func aFileReadWholeGoesOutInOneWrite() async throws {
        let path = try TestFiles.writeImage(at: folder + "/small.jpg", size: 65_536)
        let (writes, layout) = try await stream(path, chunkSize: 256 * 1024, preload: true)
        #expect(writes.count == 1)
        #expect(writes[0] == layout.head + Array(FileManager.default.contents(atPath: path)!) + layout.tail)
        #expect(Int64(writes[0].count) == layout.contentLength)
    }

    @Test func aLargerFileGoesOutInChunksWithTheSameBytes() async throws {
        let path = try TestFiles.writeImage(at: folder + "/large.jpg", size: 600_000)
        let (writes, layout) = try await stream(path, chunkSize: 256 * 1024)
        #expect(writes.count == 5)  // head, three chunks, tail
        #expect(writes.flatMap { $0 } == layout.head + Array(FileManager.default.contents(atPath: path)!) + layout.tail)
    }

    /// Read whole (the small file) or in chunks (the large one), a file whose size changed after
    /// the body was laid out is never sent.
    @Test(arguments: [(65_536, true), (600_000, false)])
    func aFileThatGrewOrShrankAfterItsSizeWasTakenIsRefused(size: Int, preload: Bool) async throws {
        let grown = try TestFiles.writeImage(at: folder + "/grown-\(size).jpg", size: Int64(size))
        await #expect(throws: UploadFailure.self) {
            try await stream(grown, chunkSize: 256 * 1024, preload: preload) { path in
                let handle = FileHandle(forWritingAtPath: path)!
                handle.seekToEndOfFile()
                handle.write(Data([1, 2, 3]))
                try? handle.close()
            }
        }
        let shrunk = try TestFiles.writeImage(at: folder + "/shrunk-\(size).jpg", size: Int64(size))
        do {
            _ = try await stream(shrunk, chunkSize: 256 * 1024, preload: preload) { truncate($0, 1000) }
            Issue.record("a shrunk file was sent")
        } catch let failure as UploadFailure {
            #expect(failure.kind == .fileError)
            #expect(failure.message.contains("shrank"), "\(failure.message)")
        }
    }
}

/// The agent's total rate, shared by every upload that holds it, and an upload's own: one rule.
@Suite struct SharedRateLimitTests {
    let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)

    func seconds(_ amount: TimeAmount?) -> Double? { amount.map { Double($0.nanoseconds) / 1e9 } }

    @Test func writesFromSeveralUploadsQueueBehindEachOtherAtTheRate() {
        let limit = SharedRateLimit(bytesPerSecond: 1000)
        #expect(limit.delay(before: 500, now: t0) == nil, "the first write goes at once")
        #expect(seconds(limit.delay(before: 500, now: t0)) == 0.5, "another upload's write waits for the first")
        #expect(seconds(limit.delay(before: 100, now: t0 + .milliseconds(200))) == 0.8)
    }

    @Test func timeNotUsedIsNotSavedUpForABurst() {
        let limit = SharedRateLimit(bytesPerSecond: 1000)
        _ = limit.delay(before: 1000, now: t0)
        #expect(limit.delay(before: 1000, now: t0 + .seconds(10)) == nil)
        #expect(seconds(limit.delay(before: 1000, now: t0 + .seconds(10))) == 0.9, "after a pause the rate holds again at once, 100 ms of credit aside")
    }

    /// An upload's own limit follows the same rule: its writes at the rate, and a stall (a slow
    /// link) is not made up afterwards by a burst faster than the limit.
    @Test func anUploadsOwnLimitHoldsTheRateAndMakesUpNoStall() {
        let pacer = Pacer()
        #expect(pacer.delay(before: 1000, rate: 1000, now: t0) == nil)
        #expect(seconds(pacer.delay(before: 1000, rate: 1000, now: t0)) == 1.0)
        #expect(seconds(pacer.delay(before: 1000, rate: 1000, now: t0 + .milliseconds(500))) == 1.5)
        // The next write was due at 3 s; its timer fired 50 ms late. The lateness is made up:
        // the write after it is due at 4 s, not 4.05 s, so the rate is kept.
        #expect(pacer.delay(before: 1000, rate: 1000, now: t0 + .milliseconds(3050)) == nil)
        #expect(seconds(pacer.delay(before: 1000, rate: 1000, now: t0 + .milliseconds(3050))) == 0.95)
        // The link stalled for 10 s: the next write goes at once, the one after it at the rate.
        #expect(pacer.delay(before: 1000, rate: 1000, now: t0 + .seconds(10)) == nil)
        #expect(seconds(pacer.delay(before: 1000, rate: 1000, now: t0 + .seconds(10))) == 0.9, "no burst to catch up, 100 ms of credit aside")
    }

    @Test func aNewRateAppliesFromTheNextWriteAndNoneLiftsIt() {
        let limit = SharedRateLimit(bytesPerSecond: 1000)
        _ = limit.delay(before: 5000, now: t0)
        limit.set(bytesPerSecond: 10_000)
        #expect(limit.delay(before: 5000, now: t0) == nil, "the old rate's backlog is not kept")
        #expect(seconds(limit.delay(before: 1000, now: t0)) == 0.5)
        limit.set(bytesPerSecond: nil)
        #expect(limit.delay(before: 1 << 30, now: t0) == nil)
        #expect(limit.bytesPerSecond == nil)
    }
}

/// The digest computed while the body streams is that of the whole body, however much of it an
/// attempt sends (a resumed one hashes the bytes before its offset by reading them once more).
@Suite(.enabled(if: PythonDigests.available, "needs Python's contentdigest")) struct StreamedDigestTests {
    let folder = TestFiles.makeTemporaryDirectory("streamdigest")

    @Test(arguments: [(0, false), (0, true), (40, false), (400_000, false), (600_020, false), (30_000, true)])
    func theDigestIsThatOfTheWholeBody(startOffset: Int, preload: Bool) async throws {
        let path = try TestFiles.writeImage(at: folder + "/f\(startOffset)\(preload).jpg", size: preload ? 60_000 : 600_000)
        let source = try FileSource.open(path: path)
        let layout = MultipartLayout(boundary: Boundary("b0undary"), fileField: "photo", fileName: "x.jpg", contentType: .jpeg, fileSize: source.size)
        let digest = BodyDigest(length: layout.contentLength!, fileLength: source.size!)
        let streamer = BodyStreamer(
            layout: layout, source: source, pipePrefix: nil, preloaded: preload ? try source.readWhole(size: source.size!) : nil,
            chunkSize: 256 * 1024, threadPool: .singleton, eventLoop: MultiThreadedEventLoopGroup.singleton.next(), watch: WriteWatch(),
            rateLimit: nil, startOffset: Int64(startOffset), digest: digest)
        let sent = NIOLockedValueBox<[UInt8]>([])
        let writer = HTTPClient.Body.StreamWriter { part in
            if case .byteBuffer(let buffer) = part { sent.withLockedValue { $0 += Array(buffer.readableBytesView) } }
            return MultiThreadedEventLoopGroup.singleton.next().makeSucceededVoidFuture()
        }
        try await streamer.makeBody().stream(writer).get()
        let whole = layout.head + Array(FileManager.default.contents(atPath: path)!) + layout.tail
        #expect(sent.withLockedValue { $0 } == Array(whole[startOffset...]))
        let wholeFile = folder + "/whole\(startOffset)\(preload)"
        _ = FileManager.default.createFile(atPath: wholeFile, contents: Data(whole))
        let value = try #require(digest.value)
        #expect(DigestFields.value([.sha256: value]) == (try PythonDigests.make(wholeFile, "sha-256")))
        #expect(digest.fileHex == (try PythonDigests.sha256Hex(path)), "the file's own digest, for \"already sent\"")
    }

    /// A body sent in ranges (appends the server limits in size, tus chunks): each range is those
    /// bytes of the whole body, wherever it starts and ends (head, file, tail), and one digest
    /// carried across them is the whole body's.
    @Test(arguments: [false, true])
    func aBodySentInRangesIsTheWholeBodyAndItsDigest(preload: Bool) async throws {
        let path = try TestFiles.writeImage(at: folder + "/ranges\(preload).jpg", size: preload ? 60_000 : 600_000)
        let source = try FileSource.open(path: path)
        let layout = MultipartLayout(boundary: Boundary("b0undary"), fileField: "photo", fileName: "x.jpg", contentType: .jpeg, fileSize: source.size)
        let total = Int(layout.contentLength!)
        let whole = layout.head + Array(FileManager.default.contents(atPath: path)!) + layout.tail
        let digest = BodyDigest(length: Int64(total), fileLength: source.size!)
        let preloaded = preload ? try source.readWhole(size: source.size!) : nil
        // Cuts inside the head, inside the file, on the file's last byte, inside the tail.
        let cuts = [0, 50, 30_000, layout.head.count + Int(source.size!), total - 5, total]
        var sent: [UInt8] = []
        for (from, to) in zip(cuts, cuts.dropFirst()) {
            var streamer = BodyStreamer(
                layout: layout, source: source, pipePrefix: nil, preloaded: preloaded, chunkSize: 64 * 1024, threadPool: .singleton,
                eventLoop: MultiThreadedEventLoopGroup.singleton.next(), watch: WriteWatch(), rateLimit: nil,
                startOffset: Int64(from), digest: digest)
            streamer.endOffset = Int64(to)
            #expect(streamer.length == Int64(to - from))
            let part = NIOLockedValueBox<[UInt8]>([])
            let writer = HTTPClient.Body.StreamWriter { piece in
                if case .byteBuffer(let buffer) = piece { part.withLockedValue { $0 += Array(buffer.readableBytesView) } }
                return MultiThreadedEventLoopGroup.singleton.next().makeSucceededVoidFuture()
            }
            try await streamer.makeBody().stream(writer).get()
            #expect(part.withLockedValue { $0 } == Array(whole[from..<to]), "range \(from)..<\(to)")
            sent += part.withLockedValue { $0 }
        }
        #expect(sent == whole)
        let value = try #require(digest.value)
        var reference = Digester([.sha256])
        reference.update(whole)
        #expect(value == reference.finalize()[.sha256])
    }

    @Test func aDigestOfPartOfTheBodyHasNoValue() {
        let digest = BodyDigest(length: 10, fileLength: 7)
        digest.updateFraming([1, 2, 3])
        #expect(digest.value == nil && digest.fileHex == nil)
        digest.updateFile(ByteBuffer(bytes: Array(repeating: 0, count: 7)))
        #expect(digest.value != nil && digest.fileHex != nil)
    }
}
