import NIOCore
import Foundation
import Testing
import UploadCore
import UploadTesting
@testable import Receiver

/// The receiver's resumable uploads on disk and who holds them, without a connection.
final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var raised = false
    func set() { lock.withLock { raised = true } }
    var value: Bool { lock.withLock { raised } }
}

@Suite(.timeLimit(.minutes(1))) struct ResumableStoreTests {
    let directory = TestFiles.makeTemporaryDirectory("resumable-store")
    let start = Date(timeIntervalSince1970: 2_000_000_000)

    func files(_ store: ResumableStore) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.folder)) ?? []).sorted()
    }

    @Test func anUploadOutlivesItsStoreAndExpiresAtItsAge() async throws {
        let store = ResumableStore(directory: directory, maxAge: .seconds(60), clock: .stopped(at: start))
        let record = try store.create(boundary: "b", length: 10, now: start)
        #expect(record.token.count == 32)
        #expect(files(store) == [record.token + ".json", record.token + ".part"])
        let lease = try #require(await store.acquire(record.token, interrupt: nil, now: start))
        let writer = try lease.appender()
        try [UInt8]("hello".utf8).withUnsafeBytes { try writer.write($0, contentStart: nil) }
        try writer.close()
        lease.release(offset: 5)

        // Another receiver on the same folder finds it at the same offset, with its length.
        let reopened = ResumableStore(directory: directory, maxAge: .seconds(60), clock: .stopped(at: start.addingTimeInterval(30)))
        let snapshot = try #require(reopened.peek(record.token, now: start.addingTimeInterval(30)))
        #expect(snapshot.offset == 5)
        #expect(snapshot.record.length == 10)
        #expect(!snapshot.record.complete)

        #expect(reopened.peek(record.token, now: start.addingTimeInterval(61)) == nil)
        #expect(reopened.sweep(now: start.addingTimeInterval(61)) == 1)
        #expect(files(reopened).isEmpty)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The stream is split where the file's own bytes begin; a restart finds both halves; the
    /// completed upload's file is the body file cut to the file's length, not a second copy.
    @Test func theStreamIsSplitWhereTheFileBeginsAndTheBodyFileBecomesTheStoredFile() async throws {
        let store = ResumableStore(directory: directory, maxAge: .seconds(60), clock: .stopped(at: start))
        let record = try store.create(boundary: "b", length: nil, now: start)
        let lease = try #require(await store.acquire(record.token, interrupt: nil, now: start))
        let writer = try lease.appender()
        try Array("--b\r\nheaders\r\n".utf8).withUnsafeBytes { try writer.write($0, contentStart: nil) }
        // The file's bytes begin at 16, inside the next piece.
        try Array("\r\nFILE-".utf8).withUnsafeBytes { try writer.write($0, contentStart: 16) }
        try writer.close()
        lease.release(offset: 21)
        #expect(files(store) == [record.token + ".body", record.token + ".json", record.token + ".part"])
        #expect(FileManager.default.contents(atPath: store.folder + "/" + record.token + ".body") == Data("FILE-".utf8))

        let reopened = ResumableStore(directory: directory, maxAge: .seconds(60), clock: .stopped(at: start))
        #expect(reopened.peek(record.token, now: start)?.offset == 21)
        let again = try #require(await reopened.acquire(record.token, interrupt: nil, now: start))
        let more = try again.appender()
        #expect(more.bodyStart == 16)
        try Array("BYTES\r\n--b--\r\n".utf8).withUnsafeBytes { try more.write($0, contentStart: 16) }
        var replayed: [UInt8] = []
        try more.read(0..<more.position) { replayed += $0 }
        #expect(String(decoding: replayed, as: UTF8.self) == "--b\r\nheaders\r\n\r\nFILE-BYTES\r\n--b--\r\n")
        // A range that begins past the split (a replay stepping over the file's bytes to a
        // checkpoint) reads from the body file alone.
        var tail: [UInt8] = []
        try more.read(21..<more.position) { tail += $0 }
        #expect(String(decoding: tail, as: UTF8.self) == "BYTES\r\n--b--\r\n")
        let uploads = try UploadStore(directory: directory)
        let name = try again.store(FormDataReceiver.Content(name: "f.png", start: 16, length: 10), from: more, into: uploads)
        #expect(name == "f.png")
        #expect(FileManager.default.contents(atPath: directory + "/f.png") == Data("FILE-BYTES".utf8))
        #expect(!FileManager.default.fileExists(atPath: store.folder + "/" + record.token + ".body"), "moved, not copied")
        again.complete(answer: StoredAnswer(status: 200, body: "{}"), length: 36)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A stream that was never split (its file began in bytes already kept) still gives the
    /// right file, copied out.
    @Test func aStreamNotSplitWhereTheFileBeginsIsCopiedOut() async throws {
        let store = ResumableStore(directory: directory, maxAge: .seconds(60), clock: .stopped(at: start))
        let record = try store.create(boundary: "b", length: nil, now: start)
        let lease = try #require(await store.acquire(record.token, interrupt: nil, now: start))
        let writer = try lease.appender()
        try Array("--b\r\nh\r\n\r\nFILE\r\n--b--\r\n".utf8).withUnsafeBytes { try writer.write($0, contentStart: nil) }
        let uploads = try UploadStore(directory: directory)
        let name = try lease.store(FormDataReceiver.Content(name: "g.png", start: 10, length: 4), from: writer, into: uploads)
        #expect(FileManager.default.contents(atPath: directory + "/" + name) == Data("FILE".utf8))
        lease.complete(answer: StoredAnswer(status: 200, body: "{}"), length: 27)
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func expiredUploadsAndStrayFilesAreRemovedWhenAStoreOpens() throws {
        let store = ResumableStore(directory: directory, maxAge: .seconds(60), clock: .stopped(at: start))
        let old = try store.create(boundary: "b", length: nil, now: start)
        let fresh = try store.create(boundary: "b", length: nil, now: start.addingTimeInterval(50))
        _ = FileManager.default.createFile(atPath: store.folder + "/" + String(repeating: "a", count: 32) + ".part", contents: Data())
        _ = FileManager.default.createFile(atPath: store.folder + "/" + fresh.token + ".json.tmp", contents: Data())
        let reopened = ResumableStore(directory: directory, maxAge: .seconds(60), clock: .stopped(at: start.addingTimeInterval(70)))
        #expect(files(reopened) == [fresh.token + ".json", fresh.token + ".part"])
        #expect(reopened.peek(old.token, now: start.addingTimeInterval(70)) == nil)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A client whose connection was cut asks at once where its upload stands, while the old
    /// request still reads what reached the socket before the cut: it is let finish (it ends by
    /// itself), so those bytes count and are not sent again.
    @Test func aHolderThatEndsByItselfWithinTheGraceIsNotInterrupted() async throws {
        let store = ResumableStore(directory: directory, maxAge: .seconds(60), takeoverGrace: .seconds(3600), clock: .stopped(at: Date()))
        let record = try store.create(boundary: "b", length: nil, now: Date())
        let interrupted = ManagedFlag()
        let holder = try #require(await store.acquire(record.token, interrupt: { interrupted.set() }, now: Date()))
        let newer = Task { await store.acquire(record.token, interrupt: nil, now: Date()) }
        #expect(try await eventually { store.waiting(record.token) == 1 })
        holder.release(offset: 1_000)
        let lease = try #require(await newer.value)
        #expect(lease.offset == 1_000, "what the old request read counts")
        #expect(!interrupted.value)
        lease.release(offset: 1_000)
        try? FileManager.default.removeItem(atPath: directory)
    }

    @Test func aNewerRequestEndsTheHolderAndWaitsForItToLetGo() async throws {
        let store = ResumableStore(directory: directory, maxAge: .seconds(60), clock: .stopped(at: Date()))
        let record = try store.create(boundary: "b", length: nil, now: Date())
        let first = try #require(await store.acquire(record.token, interrupt: nil, now: Date()))
        let (interrupted, signal) = AsyncStream<Void>.makeStream()
        first.release(offset: 0)
        let holder = try #require(await store.acquire(record.token, interrupt: { signal.yield() }, now: Date()))
        let newer = Task { await store.acquire(record.token, interrupt: nil, now: Date()) }
        // The holder is told to stop, and the newer request gets the upload only once it has let go.
        var iterator = interrupted.makeAsyncIterator()
        await iterator.next()
        #expect(store.peek(record.token, now: Date())?.busy == true)
        holder.release(offset: 42)
        let lease = try #require(await newer.value)
        #expect(lease.offset == 42)
        lease.release(offset: 42)
        // A creation request only takes an upload nobody has used.
        #expect(await store.acquire(record.token, fresh: true, interrupt: nil, now: Date()) == nil)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A receiver that completes a resumed upload steps over the file's bytes an earlier receiver
/// already read (up to its checkpoint) and still finds the same file part, type checked.
@Suite struct FormDataCheckpointTests {
    let boundary = "CheckpointBoundary"

    func stream(content: [UInt8]) -> [UInt8] {
        Array(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n"
                .utf8)
            + content + Array("\r\n--\(boundary)--\r\n".utf8)
    }

    func receiver(_ store: UploadStore) -> FormDataReceiver {
        FormDataReceiver(boundary: boundary, field: "photo", store: store, imagesOnly: true, keepsContent: false)
    }

    func feed(_ receiver: FormDataReceiver, _ bytes: ArraySlice<UInt8>) throws {
        var buffer = ByteBufferAllocator().buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        try receiver.consume(buffer)
    }

    @Test func skippingToACheckpointFindsTheSameFilePart() throws {
        let directory = TestFiles.makeTemporaryDirectory("checkpoint")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try UploadStore(directory: directory)
        let content = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let body = stream(content: content)
        let start = Int64(body.firstRange(of: content)!.lowerBound)

        let whole = receiver(store)
        try feed(whole, body[...])
        let expected = try whole.located()
        #expect(expected == FormDataReceiver.Content(name: "a.png", start: start, length: Int64(content.count)))

        // The first request got 60,000 bytes; its checkpoint is inside the file part.
        let first = receiver(store)
        try feed(first, body[0..<60_000])
        let checkpoint = try #require(first.checkpoint)
        #expect(checkpoint > start && checkpoint <= 60_000)

        // The completing request reads the stream up to the file's first bytes, skips, and reads on.
        let second = receiver(store)
        let sniffed = Int(start) + MediaSniffer.prefixLength
        try feed(second, body[0..<sniffed])
        second.skipContent(to: checkpoint)
        try feed(second, body[Int(checkpoint)...])
        #expect(try second.located() == expected)
    }

    @Test func aReceiverBeforeTheFileOrHoldingBytesBackHasNoCheckpoint() throws {
        let directory = TestFiles.makeTemporaryDirectory("checkpoint")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try UploadStore(directory: directory)
        let body = stream(content: Array("\u{89}PNG\r\n\u{1A}\n".utf8) + Array(repeating: 0x41, count: 1000))
        let early = receiver(store)
        try feed(early, body[0..<20])
        #expect(early.checkpoint == nil, "not inside the file part yet")
        // Ending on a CR: it may begin the delimiter, so it is held back.
        let content = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + Array(repeating: 0x41, count: 100) + [0x0D] + Array(repeating: 0x41, count: 100)
        let held = stream(content: content)
        let cut = held.firstRange(of: content)!.lowerBound + content.lastIndex(of: 0x0D)! + 1
        let holding = receiver(store)
        try feed(holding, held[0..<cut])
        #expect(holding.checkpoint == nil)
    }
}
