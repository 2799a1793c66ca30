import PhotoRewrite
import Foundation
import Testing
import UploadClient
import UploadCore
import UploadTesting

/// The client resumes interrupted uploads (draft-ietf-httpbis-resumable-upload): against our
/// receiver (interop version 8) and SwiftNIO's independent `NIOResumableUpload` (version 6),
/// through a relay that cuts the connection after so many bytes.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ResumableClientTests {
    static let size: Int64 = 12_000_000

    func file(in root: String, name: String = "big.png") throws -> String {
        try TestFiles.writeImage(at: root + "/" + name, size: Self.size)
    }

    @Test func aCutUploadContinuesWhereOurReceiverHasIt() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try file(in: receiver.root)
        let relay = try CuttingRelay(to: receiver.port, cutAfter: [3_000_000, 7_000_000])
        defer { relay.stop() }
        let request = try UploadRequest.forPath(path, url: relay.url())
        let run = try await UploadRun.run([request], retryPolicy: RetryPolicy(maxRetries: 5))

        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(receiver.logLines.map(\.description))")
        #expect(run.storedName() == "big.png")
        #expect(TestFiles.sameContents(path, receiver.directory + "/big.png"))
        #expect(relay.cutsDone == 2)
        // Each attempt after a cut continued at what the server had, not at 0.
        let offsets = run.resumedOffsets()
        #expect(offsets.count == 2)
        #expect(offsets.allSatisfy { $0 > 1_000_000 } && offsets == offsets.sorted(), "\(offsets)")
        // On the wire: the file about once, not 1 + 3/12 + 7/12 times.
        let ratio = Double(relay.bytesToServer) / Double(Self.size)
        #expect(ratio >= 1 && ratio <= 1.05, "bytes on the wire / file size = \(ratio) \(receiver.logLines.map(\.description)) \(offsets)")
        let record = run.record()
        #expect(record.bytesSaved == offsets.reduce(0, +))
        #expect(record.resume == nil, "a completed upload keeps no resume point")
        #expect(record.resumedText?.hasPrefix("resumed at ") == true)
        // Progress counts from the server's offset after a resume, never from 0 again.
        #expect(run.progressTotals().last == record.bytesExpected)
        await receiver.cleanUp()
    }

    /// A receiver that takes at most 2 MB per request (`max-append-size`): the body goes in parts
    /// of that size, a cut in the middle of one continues where the server has it, and what
    /// arrives is the file, verified.
    @Test func aServerThatLimitsEachAppendGetsTheBodyInPartsAndACutStillResumes() async throws {
        let receiver = try await ReceiverHarness.start(resumableMaxAppend: 2_000_000)
        let path = try file(in: receiver.root)
        let relay = try CuttingRelay(to: receiver.port, cutAfter: [5_000_000])
        defer { relay.stop() }
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: relay.url())], retryPolicy: RetryPolicy(maxRetries: 3))
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(receiver.logLines.map(\.description))")
        #expect(TestFiles.sameContents(path, receiver.directory + "/big.png"))
        #expect(relay.cutsDone == 1)
        let appends = receiver.logLines.filter { $0.method == "PATCH" }
        #expect(appends.allSatisfy { $0.bytes <= 2_000_000 }, "\(appends.map(\.description))")
        #expect(appends.count >= 6, "12 MB in parts of 2 MB at most: \(appends.map(\.description))")
        // No request carried more than the limit: the creation went empty (the OPTIONS said it).
        #expect(!receiver.logLines.contains { $0.status == 413 }, "\(receiver.logLines.map(\.description))")
        #expect(run.resumedOffsets().count == 1)
        let ratio = Double(relay.bytesToServer) / Double(Self.size)
        #expect(ratio <= 1.05, "bytes on the wire / file size = \(ratio)")
        #expect(run.response()?.verified == "sha-256", "one digest across the parts")
    }

    @Test func withoutResumingTheSameCutsSendTheFileAgainFromTheStart() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try file(in: receiver.root)
        let relay = try CuttingRelay(to: receiver.port, cutAfter: [3_000_000, 7_000_000])
        defer { relay.stop() }
        let request = try UploadRequest.forPath(path, url: relay.url())
        let run = try await UploadRun.run([request], retryPolicy: RetryPolicy(maxRetries: 5), resume: false)
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(receiver.logLines.map(\.description))")
        #expect(run.resumedOffsets().isEmpty)
        #expect(relay.bytesToServer >= Self.size + 10_000_000)
        #expect(!receiver.logLines.contains { $0.method == "OPTIONS" || $0.method == "PATCH" })
        await receiver.cleanUp()
    }

    @Test func theClientResumesAgainstSwiftNIOsResumableUploadServer() async throws {
        let peer = try NIOResumablePeer()
        defer { peer.stop() }
        let root = TestFiles.makeTemporaryDirectory("nio-peer")
        let path = try file(in: root)
        let relay = try CuttingRelay(to: peer.port, cutAfter: [4_000_000])
        defer { relay.stop() }
        peer.advertise(origin: "http://127.0.0.1:\(relay.port)")
        let request = try UploadRequest.forPath(path, url: relay.url())
        let run = try await UploadRun.run([request], retryPolicy: RetryPolicy(maxRetries: 3))
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(run.events)")
        #expect(relay.cutsDone == 1)
        #expect(run.resumedOffsets().count == 1)
        let bodies = peer.received
        #expect(bodies.count == 1)
        // The body the peer's application got, parsed as multipart: the file, whole.
        let content = try #require(bodies.first.flatMap { Self.filePart(of: $0) })
        #expect(Data(content) == FileManager.default.contents(atPath: path))
        try? FileManager.default.removeItem(atPath: root)
    }

    @Test func anUploadThatCompletedIsAnsweredWithoutSendingItAgain() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try file(in: receiver.root)
        let transport = try HTTPUploadTransport()
        let request = try UploadRequest.forPath(path, url: receiver.url)
        let points = PointBox()
        let first = await transport.perform(request, observer: AttemptObserver(resumable: { point, _ in if let point { points.set(point) } }))
        #expect(first.outcome.isSuccess)
        // The answer is lost (a crash before it was written down): the next attempt still has the point.
        var again = request
        let point: ResumePoint = try #require(points.value)
        again.resume = point
        let second = await transport.perform(again, observer: AttemptObserver())
        #expect(second.outcome == .answered(status: 200))
        #expect(second.response?.bodyText == #"{"filename":"big.png"}"#)
        // The body went in the creation request (the 104 named the resource); then the
        // question and the lost answer: in interop version 10 the offset answer says no
        // Upload-Complete, and the offset at the body's length is completed by the valid
        // append to the completed upload (at its end, no content), which has its answer again;
        // in version 9 the offset answer says it is complete and the same append follows; in
        // version 8 a GET has the answer.
        #expect(receiver.logLines.map(\.method) == ["OPTIONS", "POST", "HEAD", "PATCH"])
        #expect(point.version == 10)
        var nine = again
        nine.resume?.version = 9
        let third = await transport.perform(nine, observer: AttemptObserver())
        #expect(third.response?.bodyText == #"{"filename":"big.png"}"#)
        var older = again
        older.resume?.version = 8
        let fourth = await transport.perform(older, observer: AttemptObserver())
        #expect(fourth.response?.bodyText == #"{"filename":"big.png"}"#)
        #expect(receiver.logLines.map(\.method) == ["OPTIONS", "POST", "HEAD", "PATCH", "HEAD", "PATCH", "HEAD", "GET"])
        #expect(receiver.storedNames().filter { !$0.hasPrefix(".") } == ["big.png"])
        try await transport.shutdown()
        await receiver.cleanUp()
    }

    /// A file that changes while it is sent fails (its bytes would disagree with what was
    /// declared), and the part the receiver holds is removed at once, not kept for a day.
    @Test func aFileThatChangesWhileSentFailsAndLeavesNothingOnTheServer() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/shrinks.png", size: 64 << 20)
        let changed = CancelOnce()
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: receiver.url)]) { event, _ in
            if case .progress = event, changed.first() { truncate(path, 2 << 20) }
        }
        #expect(run.failure()?.kind == .fileError, "\(String(describing: run.outcome()))")
        // The receiver logs a request once its answer went out: the line may come a moment later.
        #expect(try await eventually { receiver.logLines.contains { $0.method == "DELETE" } }, "\(receiver.logLines.map(\.description))")
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: receiver.directory + "/.uploadmon-resumable")) ?? []
        #expect(kept.isEmpty, "\(kept)")
        await receiver.cleanUp()
    }

    /// `--strip-location` with cuts: every attempt makes the same edited body from the file, so
    /// resuming continues it (the file about once on the wire) and what arrives is the edited file.
    @Test func aPhotoSentWithoutItsLocationResumesAfterCuts() async throws {
        let receiver = try await ReceiverHarness.start()
        // A JPEG that says where it was taken, then the rest.
        var bytes = PictureWriter.locatedJPEGHead
        // The same content as the other resuming tests (bytes that vary by offset), as a scan's
        // data (no marker inside).
        let filler = try file(in: receiver.root, name: "filler.jpg")
        bytes += Array(try Data(contentsOf: URL(fileURLWithPath: filler)).dropFirst(4)).map { $0 == 0xFF ? 0xFE : $0 } + [0xFF, 0xD9]
        let path = receiver.root + "/located.jpg"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let edits = try LocationStripper.edits(size: Int64(bytes.count)) { offset, count in Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)]) }
        #expect(!edits.isEmpty)
        var expected = bytes
        for edit in edits.reversed() { expected.replaceSubrange(Int(edit.range.lowerBound)..<Int(edit.range.upperBound), with: edit.replacement) }

        let relay = try CuttingRelay(to: receiver.port, cutAfter: [3_000_000, 7_000_000])
        defer { relay.stop() }
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: relay.url())], retryPolicy: RetryPolicy(maxRetries: 5), stripLocation: true)
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(receiver.logLines.map(\.description))")
        #expect(run.resumedOffsets().count == 2, "\(receiver.logLines.map(\.description)) \(run.resumedOffsets())")
        let stored = Array(try Data(contentsOf: URL(fileURLWithPath: receiver.directory + "/located.jpg")))
        #expect(stored == expected, "the edited file, whole")
        #expect(stored != bytes)
        let ratio = Double(relay.bytesToServer) / Double(bytes.count)
        #expect(ratio <= 1.05, "bytes on the wire / file size = \(ratio) \(receiver.logLines.map(\.description)) \(run.resumedOffsets())")
        await receiver.cleanUp()
    }

    @Test func aFileThatChangedStartsOver() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try file(in: receiver.root)
        let transport = try HTTPUploadTransport()
        var request = try UploadRequest.forPath(path, url: receiver.url)
        let first = PointBox()
        // A first attempt, whose resume point is kept.
        _ = await transport.perform(
            request,
            observer: AttemptObserver(resumable: { point, _ in
                if let point, first.value == nil { first.set(point) }
            }))
        // The file is rewritten (same size, new bytes and time) before the next attempt.
        _ = try TestFiles.writeImage(at: path, size: Self.size)
        let point: ResumePoint = try #require(first.value)
        request.resume = point
        let changed = PointBox()
        let reasons = Lines()
        let result = await transport.perform(
            request,
            observer: AttemptObserver(resumable: { point, why in
                if let point { changed.set(point) }
                if let why { reasons.append(why) }
            }))
        #expect(result.outcome.isSuccess)
        #expect(reasons.all == ["the file changed since the upload began"], "it says why it starts over")
        #expect(changed.value?.uploadURL != first.value?.uploadURL, "a new upload resource, not the old one's bytes")
        #expect(TestFiles.sameContents(path, receiver.directory + "/big-1.png"))
        try await transport.shutdown()
        await receiver.cleanUp()
    }

    @Test func aServerThatDoesNotResumeGetsOnePlainMultipartRequest() async throws {
        let requests = RequestLog()
        let server = try RawServer { connection in
            while let request = CapturedRequest.read(from: connection) {
                requests.append(request)
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            }
            connection.close()
        }
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("plain")
        let first = try file(in: root, name: "a.png")
        let second = try file(in: root, name: "b.png")
        let run = try await UploadRun.run([try .forPath(first, url: server.url), try .forPath(second, url: server.url)], concurrency: 1)
        #expect(run.outcome(1)?.isSuccess == true && run.outcome(2)?.isSuccess == true)
        // One question per origin, then the ordinary uploads without a field of the draft.
        let heads = requests.all.map { $0.head.components(separatedBy: "\r\n")[0] }
        #expect(heads == ["OPTIONS /photo HTTP/1.1", "POST /photo HTTP/1.1", "POST /photo HTTP/1.1"])
        #expect(requests.all.dropFirst().allSatisfy { $0.header("Upload-Complete") == nil && $0.body.count > Int(Self.size) })
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A server that takes `OPTIONS` and never answers it (an application behind a proxy that
    /// routes only `POST`) once held each upload for the whole answer timeout before it went
    /// plain. The question now gives up after `timeouts.discovery` (3 s), the upload goes as an
    /// optimistic creation (which such a server answers as any POST), and the second upload
    /// asks nothing. Bounded here by the suite's time limit, which
    /// the old wait (the answer timeout, 10 minutes in this test) could not meet.
    @Test(.timeLimit(.minutes(1))) func aServerSilentToTheQuestionCostsSecondsNotTheAnswerTimeout() async throws {
        let requests = RequestLog()
        let optionsClosedByClient = Lines()
        let server = try RawServer { connection in
            while let request = CapturedRequest.read(from: connection) {
                requests.append(request)
                if request.head.hasPrefix("OPTIONS") {
                    let (_, closed) = connection.readUntilClosed(timeout: 120)
                    if closed { optionsClosedByClient.append("closed") }
                    break
                }
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            }
            connection.close()
        }
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("silent-options")
        let first = try file(in: root, name: "a.png")
        let second = try file(in: root, name: "b.png")
        let run = try await UploadRun.run(
            [try .forPath(first, url: server.url), try .forPath(second, url: server.url)],
            timeouts: UploadTimeouts(connect: .seconds(5), stall: .seconds(5), answer: .seconds(600)), concurrency: 1)
        #expect(run.outcome(1)?.isSuccess == true && run.outcome(2)?.isSuccess == true)
        let heads = requests.all.map { $0.head.components(separatedBy: "\r\n")[0] }
        #expect(heads == ["OPTIONS /photo HTTP/1.1", "POST /photo HTTP/1.1", "POST /photo HTTP/1.1"])
        #expect(try await eventually { optionsClosedByClient.all == ["closed"] }, "the client gave the question up and closed")
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The file part of a multipart body.
    static func filePart(of body: [UInt8]) -> [UInt8]? {
        guard let boundaryLine = body.split(separator: 0x0D, maxSplits: 1).first else { return nil }
        var parser = MultipartStreamParser(boundary: String(decoding: boundaryLine.dropFirst(2), as: UTF8.self))
        var content: [UInt8] = []
        try? body.withUnsafeBytes { raw in
            try parser.feed(raw) { event in
                if case .body(let bytes) = event { content.append(contentsOf: bytes) }
            }
        }
        return parser.isComplete ? content : nil
    }
}

final class PointBox: @unchecked Sendable {
    private let lock = NSLock()
    private var point: ResumePoint?
    var value: ResumePoint? { lock.withLock { point } }
    func set(_ point: ResumePoint) { lock.withLock { self.point = point } }
}

final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    var all: [String] { lock.withLock { lines } }
    func append(_ line: String) { lock.withLock { lines.append(line) } }
}

final class RequestLog: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [CapturedRequest] = []
    var all: [CapturedRequest] { lock.withLock { requests } }
    func append(_ request: CapturedRequest) { lock.withLock { requests.append(request) } }
}

extension CapturedRequest {
    /// The next request on a kept-alive connection; of its body only the length is kept.
    static func read(from connection: RawConnection) -> CapturedRequest? {
        let head = connection.read(until: "\r\n\r\n", timeout: 10)
        guard head.hasSuffix("\r\n\r\n") else { return nil }
        var request = CapturedRequest(head: head, body: [])
        if let length = request.contentLength, length > 0 {
            request.body = [UInt8](repeating: 0, count: connection.read(atLeast: length))
        }
        return request
    }
}

/// The client's side of `Idempotency-Key`: one key for every attempt of an ordinary upload.
@Suite(.serialized, .timeLimit(.minutes(2))) struct IdempotencyClientTests {
    @Test func aRepeatOfACompletedUploadIsAnsweredAndNotStoredTwice() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/twice.png", size: 3_000_000)
        let transport = try HTTPUploadTransport(resume: false)
        var request = try UploadRequest.forPath(path, url: receiver.url)
        request.idempotencyKey = UploadRequest.newIdempotencyKey()
        let first = await transport.perform(request, observer: AttemptObserver())
        #expect(first.outcome == .answered(status: 200))
        // The answer was lost on the way (the agent died before writing it down): the next
        // attempt sends the same key and gets the same answer, even if cut short by it.
        let second = await transport.perform(request, observer: AttemptObserver())
        #expect(second.outcome == .answered(status: 200), "\(second.outcome)")
        #expect(second.response?.header("Idempotent-Replayed") == "true")
        #expect(second.response?.bodyText == #"{"filename":"twice.png"}"#)
        #expect(receiver.storedNames() == ["twice.png"])
        try await transport.shutdown()
        await receiver.cleanUp()
    }
}
