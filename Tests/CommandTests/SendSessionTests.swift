import Foundation
import Glibc
import Testing
import UploadAgent
import UploadCommands
import UploadCore
import UploadJournal
import UploadTesting

@Suite("send, past its command line")
struct SendSessionTests {
    @Test("a --files-from list: lines (CRLF too) or NUL-separated, empty entries skipped, names kept as bytes")
    func fileList() throws {
        #expect(try FileList.parse(Data("a.jpg\r\nb c.png\n\n./d.jpg".utf8), nullSeparated: false) == ["a.jpg", "b c.png", "./d.jpg"])
        #expect(try FileList.parse(Data("a\nb.jpg\0c.jpg\0\0".utf8), nullSeparated: true) == ["a\nb.jpg", "c.jpg"])
        let latin1 = try FileList.parse(Data([0x63, 0x61, 0x66, 0xE9, 0x2E, 0x6A, 0x70, 0x67]), nullSeparated: false)
        #expect(latin1.count == 1 && PathText.bytes(latin1[0]) == [0x63, 0x61, 0x66, 0xE9, 0x2E, 0x6A, 0x70, 0x67])
        // A line with a NUL: the file opened would be the part before it, the upload named after all of it.
        #expect(throws: CommandFailure.self) { try FileList.parse(Data("a.jpg\nreal.jpg\0shown.jpg\n".utf8), nullSeparated: false) }
        do { _ = try FileList.parse(Data("a.jpg\nreal.jpg\0shown.jpg\n".utf8), nullSeparated: false) } catch let failure as CommandFailure {
            #expect("\(failure)".contains("line 2 of the --files-from list holds a NUL byte"), "\(failure)")
        }
    }

    @Test("files that cannot go together are refused with the reason")
    func refusals() {
        #expect(SendSession.refusal(files: ["a.jpg"], name: "x", background: false) == nil)
        #expect(SendSession.refusal(files: ["a.jpg", "b.jpg"], name: "x", background: false) == "--name applies to a single file; 2 were given")
        #expect(SendSession.refusal(files: ["-", "-"], name: nil, background: false) == "standard input ('-') can be sent only once")
        #expect(SendSession.refusal(files: ["-"], name: nil, background: true)?.contains("cannot be sent in the background") == true)
    }

    @Test("with --strict, or when every file is refused, each is said, nothing is sent, and the status is 64")
    func refusedFilesSendNothing() async throws {
        let folder = TestFiles.makeTemporaryDirectory("send-refusals")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = try TestFiles.writeImage(at: folder + "/ok.png", size: 2000)
        try Data("plain words".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        let recorder = OutputRecorder()
        let session = SendSession(endpoint: "http://127.0.0.1:9/photo", output: recorder.output, paths: Self.paths(folder))
        guard case .failure(let refused) = await session.requests(for: [image, folder + "/notes.txt", folder + "/missing.png"]) else {
            Issue.record("refused files were accepted")
            return
        }
        #expect(refused.reasons.count == 2)
        var strict = session
        strict.strict = true
        #expect(try await strict.run([image, folder + "/notes.txt"]) == SendExit.usage)
        #expect(recorder.said("err").last == "uploadmon: nothing was sent")
        #expect(recorder.said("err").first?.contains("notes.txt") == true)
        // Every file refused: nothing to send, with or without --strict.
        #expect(try await session.run([folder + "/notes.txt", folder + "/missing.png"]) == SendExit.usage)
    }

    @Test("--strip-location refuses a format it cannot strip, and standard input")
    func stripLocationRefusals() throws {
        let folder = TestFiles.makeTemporaryDirectory("send-strip")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let gif = folder + "/a.gif"
        try Data("GIF89a\u{1}\u{0}\u{1}\u{0}\u{0}\u{0}\u{0};".utf8).write(to: URL(fileURLWithPath: gif))
        #expect(SendSession.cannotStripLocation(gif)?.contains("only the location of JPEG, PNG, WebP, HEIC and AVIF files can be removed") == true)
        #expect(SendSession.cannotStripLocation("-")?.hasPrefix("standard input cannot be sent with --strip-location") == true)
        #expect(SendSession.cannotStripLocation(try TestFiles.writeImage(at: folder + "/b.png", size: 1000)) == nil)
    }

    static func paths(_ folder: String) -> StatePaths {
        StatePaths(stateDirectory: folder + "/state", runtimeDirectory: folder + "/run")
    }
}

/// Sessions that send install the Ctrl-C handler, one per process at a time: one after another.
@Suite("send's exit status and Ctrl-C, in-process", .serialized)
struct SendRunTests {
    @Test("all stored: 0; the content is remembered for --skip-sent, which then skips both and says so")
    func successAndSkipSent() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.stop() } }
        let folder = TestFiles.makeTemporaryDirectory("send-run")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let files = [try TestFiles.writeImage(at: folder + "/a.png", size: 3000), try TestFiles.writeImage(at: folder + "/b.png", size: 5000)]
        let recorder = OutputRecorder()
        var session = SendSession(endpoint: receiver.url, json: true, output: recorder.output, paths: SendSessionTests.paths(folder))
        #expect(try await session.run(files) == SendExit.success)
        #expect(receiver.storedNames() == ["a.png", "b.png"])

        session.skipSent = true
        session.json = false
        #expect(try await session.run(files) == SendExit.success)
        #expect(recorder.all.contains("nothing to send: all 2 file(s) were already sent to \(receiver.url)"))
        #expect(receiver.storedNames() == ["a.png", "b.png"])
    }

    @Test("an answer that is not 2xx: 1; no answer at all: 2")
    func failureStatuses() async throws {
        let receiver = try await ReceiverHarness.start(imagesOnly: true)
        defer { Task { await receiver.stop() } }
        let folder = TestFiles.makeTemporaryDirectory("send-fail")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let notes = folder + "/notes.jpg"
        try Data("not a photo at all".utf8).write(to: URL(fileURLWithPath: notes))
        let recorder = OutputRecorder()
        let refused = SendSession(endpoint: receiver.url, allowAnyFile: true, json: true, output: recorder.output, paths: SendSessionTests.paths(folder))
        #expect(try await refused.run([notes]) == SendExit.httpError)

        // A port nobody listens on: the connection is refused, no answer.
        let closed = try await ReceiverHarness.start()
        let url = closed.url
        await closed.stop()
        let unreachable = SendSession(
            endpoint: url, settings: TransportSettings(connectTimeout: 2), json: true, output: recorder.output, paths: SendSessionTests.paths(folder))
        #expect(try await unreachable.run([try TestFiles.writeImage(at: folder + "/c.png", size: 1000)]) == SendExit.transportError)
    }

    @Test("the first Ctrl-C reaches the session's handler, which stops listening when asked")
    func interruption() async throws {
        let seen = AsyncStream<Int32>.makeStream()
        let interruption = Interruption { number in seen.continuation.yield(number) }
        kill(getpid(), SIGINT)
        var iterator = seen.stream.makeAsyncIterator()
        #expect(await iterator.next() == SIGINT)
        #expect(interruption.signalNumber == SIGINT)
        interruption.stop()
        interruption.stop()
        // A second one may follow at once (its handler took the first's place).
        let next = Interruption { _ in }
        next.stop()
    }
}
