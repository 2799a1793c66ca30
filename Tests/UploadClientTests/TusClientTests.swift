import Foundation
import Testing
import UploadClient
import UploadCore
import UploadTesting
import UploadProtocols

/// The client speaks tus 1.0.0 to a tus server it did not write (`tuspyserver` from PyPI, run
/// by uvicorn): found by its `OPTIONS` answer, the file's raw bytes with its name and type in
/// `Upload-Metadata`, chunks, a cut continued from the server's offset, termination, expiry.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: TusPeer.available, "needs python3 with tuspyserver and uvicorn (.ci/run installs them)"))
struct TusClientTests {
    static let size: Int64 = 12_000_000

    /// A photo of `size` bytes, written off the cooperative pool (tens of megabytes take a while
    /// on a busy machine, and the pool has one thread per core).
    func file(_ name: String = "big.jpg", size: Int64 = Self.size) async throws -> (root: String, path: String) {
        let path = try await TestFiles.image(name, size: size, in: "tus-client")
        return ((path as NSString).deletingLastPathComponent, path)
    }

    @Test func aTusOriginIsFoundByItsOptionsAnswerAndGetsTheFileRawWithItsNameAndType() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let (_, path) = try await file()
        let request = try UploadRequest.forPath(path, url: server.url, formFields: [FormField(name: "album", value: "holiday")])
        let run = try await UploadRun.run([request])
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(server.requests)")
        let upload = try #require(server.uploads.first)
        #expect(server.uploads.count == 1)
        #expect(TestFiles.sameContents(path, upload.path))
        #expect(upload.metadata == ["filename": "big.jpg", "filetype": "image/jpeg", "album": "holiday"])
        #expect(upload.parts == 1, "the whole rest in one PATCH, as the protocol recommends")
        // The final answer is a bodiless 204: the attempt's answer says where the file lives.
        let response = try #require(run.response())
        #expect(response.status == 204)
        #expect(response.textBody == TusUploadMachine.completionNote(uploadURL: server.url + upload.id, length: Self.size))
        #expect(server.requests.map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["OPTIONS", "POST", "PATCH"], "\(server.requests)")
        // "Already sent" by content works for tus too.
        let sha256 = try await offPool { try PythonDigests.sha256Hex(path) }
        #expect(run.record().contentSHA256 == sha256)
    }

    @Test func aSmallPhotoGoesByTusOnceTheServerRefusesTheMultipartBody() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let (_, path) = try await file("small.jpg", size: 40_000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)])
        #expect(run.outcome() == .answered(status: 201), "\(String(describing: run.outcome())) \(server.requests)")
        let upload = try #require(server.uploads.first)
        #expect(TestFiles.sameContents(path, upload.path))
        // No question before a small file; the tus server's refusal of the multipart POST
        // (412, Tus-Version) teaches the origin; the file then goes in the creation itself.
        #expect(server.requests.count == 3, "POST 412, OPTIONS, POST 201: \(server.requests)")
        #expect(server.requests.first?.hasPrefix("POST") == true && server.requests.first?.hasSuffix("412") == true, "\(server.requests)")
        #expect(server.requests.last?.hasPrefix("POST") == true && server.requests.last?.hasSuffix("201") == true, "\(server.requests)")
    }

    @Test func chunksAreTheSizeAskedForButTheLast() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let (_, path) = try await file()
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], uploadProtocol: .tus, chunkSize: 5 << 20)
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome()))")
        let upload = try #require(server.uploads.first)
        #expect(TestFiles.sameContents(path, upload.path))
        #expect(upload.parts == 3)
        #expect(server.requests.filter { $0.hasPrefix("PATCH") }.count == 3, "\(server.requests)")
        #expect(run.progressTotals().last == Self.size)
    }

    /// tuspyserver lists `creation-with-upload`: a small photo goes in its creation request. A
    /// creation cut with its body leaves no upload URL, so the next attempt creates empty and
    /// sends the body in a `PATCH`, whose cut is continued from the server's offset (before, each
    /// attempt sent the whole photo in its creation again, and a second cut cost it whole).
    @Test func aCreationCutWithItsBodyIsFollowedByOneThatCanBeContinued() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let size: Int64 = 900_000
        let (_, path) = try await file("small.jpg", size: size)
        let relay = try CuttingRelay(to: server.port, cutAfter: [600_000, 600_000])
        defer { relay.stop() }
        let url = "http://127.0.0.1:\(relay.port)/files/"
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: url)], retryPolicy: RetryPolicy(maxRetries: 5),
            uploadProtocol: .tus)
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(server.requests)")
        #expect(relay.cutsDone == 2)
        let stored = server.uploads.filter { TestFiles.sameContents(path, $0.path) }
        #expect(stored.count == 1, "\(server.requests)")
        // 0.6 MB cut in the creation, 0.6 MB cut in the PATCH, the last 0.3 MB: about 1.5 MB
        // (2.1 MB when every creation carried the photo again).
        let ratio = Double(relay.bytesToServer) / Double(size)
        #expect(ratio < 1.8, "bytes on the wire / file size = \(ratio) \(server.requests)")
        #expect(server.requests.contains { $0.hasPrefix("HEAD") }, "the cut PATCH was continued: \(server.requests)")
    }

    @Test func aCutUploadContinuesFromTheServersOffsetAndSendsTheFileAboutOnce() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let (_, path) = try await file()
        let relay = try CuttingRelay(to: server.port, cutAfter: [3_000_000, 7_000_000])
        defer { relay.stop() }
        let url = "http://127.0.0.1:\(relay.port)/files/"
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: url)], retryPolicy: RetryPolicy(maxRetries: 5),
            uploadProtocol: .tus)
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(server.requests)")
        #expect(relay.cutsDone == 2)
        let upload = try #require(server.uploads.first)
        #expect(server.uploads.count == 1, "one upload URL, continued")
        #expect(TestFiles.sameContents(path, upload.path))
        let offsets = run.resumedOffsets()
        #expect(offsets.count == 2 && offsets.allSatisfy { $0 > 1_000_000 } && offsets == offsets.sorted(), "\(offsets)")
        let ratio = Double(relay.bytesToServer) / Double(Self.size)
        #expect(ratio >= 1 && ratio <= 1.01, "bytes on the wire / file size = \(ratio)")
        #expect(server.requests.filter { $0.hasPrefix("HEAD") }.count == 2, "\(server.requests)")
        let record = run.record()
        #expect(record.resume == nil)
        #expect(record.resumedText?.hasPrefix("resumed at ") == true)
        #expect(run.progressTotals().last == Self.size)
    }

    @Test func aFileThatChangesWhileSentIsTerminatedOnTheServer() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let (_, path) = try await file("shrinks.jpg", size: 64 << 20)
        let changed = CancelOnce()
        // Paced (16 s for the file), so the change lands while it is being sent, however fast
        // the machine.
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: server.url)], uploadProtocol: .tus,
            rateLimit: 4 << 20
        ) { event, _ in
            if case .progress = event, changed.first() { truncate(path, 2 << 20) }
        }
        #expect(run.failure()?.kind == .fileError, "\(String(describing: run.outcome()))")
        #expect(server.requests.contains { $0.hasPrefix("DELETE") && $0.hasSuffix("204") }, "\(server.requests)")
        // The upload's bytes are gone. (tuspyserver may write its record of the upload again
        // when it finishes the cut request after the DELETE: the record, without data, can stay.)
        #expect(server.uploads.allSatisfy { !FileManager.default.fileExists(atPath: $0.path) }, "\(server.uploads)")
    }

    @Test func anUploadTheServerLetExpireStartsOverWithANewOne() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let (_, path) = try await file()
        // An upload an earlier attempt began (by another client here: no request of it is still
        // running on the server when it expires), its time passed.
        let id = try await offPool { try server.create(length: Self.size, filename: "big.jpg", filetype: "image/jpeg") }
        try server.expire(id)
        let opened = try #require(FileFingerprint.of(path: path))
        var request = try UploadRequest.forPath(path, url: server.url)
        request.resume = ResumePoint.tus(uploadURL: server.url + id, bodyLength: Self.size, file: opened)
        let transport = try HTTPUploadTransport(uploadProtocol: .tus)
        let reasons = Reasons()
        let result = await transport.perform(request, observer: AttemptObserver(resumable: { _, why in why.map(reasons.append) }))
        try await transport.shutdown()
        #expect(result.outcome.isSuccess, "\(result) \(server.requests)")
        #expect(server.requests.contains { $0.hasPrefix("HEAD") && $0.hasSuffix("410") }, "\(server.requests)")
        #expect(reasons.all == ["the server let the upload expire"])
        let done = try #require(server.uploads.first { $0.offset == Self.size })
        #expect(done.id != id)
        #expect(TestFiles.sameContents(path, done.path))
    }

    /// The checksum extension (verified by Python's hashlib in front of tuspyserver): every chunk
    /// carries its own checksum, and the one that arrives damaged is sent again, that one only.
    @Test func aChunkThatArrivesDamagedIsSentAgainAndOnlyIt() async throws {
        let server = try await TusPeer.start(checksums: true, corrupting: [2])
        defer { server.stop() }
        let (_, path) = try await file(size: 3_000_000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], chunkSize: 1 << 20)
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome())) \(server.requests)")
        let upload = try #require(server.uploads.first)
        #expect(TestFiles.sameContents(path, upload.path))
        let patches = server.requests.filter { $0.hasPrefix("PATCH") }
        #expect(patches.map { $0.split(separator: " ").last.map(String.init) ?? "" } == ["204", "460", "204", "204"], "\(patches)")
        #expect(upload.parts == 3)
    }

    @Test func aFileLargerThanTheServerTakesIsRefusedBeforeAnyByteGoes() async throws {
        let server = try await TusPeer.start(maxSize: 5_000_000)
        defer { server.stop() }
        let (_, path) = try await file()
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)])
        let failure = try #require(run.failure())
        #expect(failure.description.contains("Tus-Max-Size"), "\(failure)")
        #expect(server.uploads.isEmpty)
        #expect(!server.requests.contains { $0.hasPrefix("POST") || $0.hasPrefix("PATCH") }, "\(server.requests)")
    }

    @Test func multipartAskedForStaysMultipartEvenAtATusOrigin() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let (_, path) = try await file("small.jpg", size: 40_000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], uploadProtocol: .multipart)
        #expect(run.outcome() == .answered(status: 412), "\(String(describing: run.outcome()))")
        #expect(server.uploads.isEmpty)
    }
}

final class Reasons: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
