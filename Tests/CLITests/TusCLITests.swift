import Foundation
import Testing
import UploadCore
import UploadJournal
import UploadTesting

/// tus from the command line and the agent, against tuspyserver (PyPI): the options, what
/// `--json` says, and an agent killed with SIGKILL mid-upload that finishes it exactly once.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: TusPeer.available, "needs python3 with tuspyserver and uvicorn (.ci/run installs them)"))
struct TusCLITests {
    @Test func sendSaysTheProtocolTheUploadURLAndWhereTheFileLives() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("tus-cli")
        let photo = try await offPool { try TestFiles.writeImage(at: root + "/photo.jpg", size: 3_000_000) }
        let run = try await CLIRun.run(
            ["send", photo, "--to", server.url, "--json", "--chunk-size", "1MiB"],
            environment: AgentCLITests.environment(root))
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let resumable = try #require(lines.first { $0["event"] as? String == "resumable" && $0["uploadURL"] != nil })
        #expect(resumable["protocol"] as? String == "tus")
        #expect(resumable["interopVersion"] == nil)
        #expect(resumable["expires"] as? String != nil)
        let upload = try #require(server.uploads.first)
        #expect(upload.parts == 3)
        let response = try #require(lines.first { $0["event"] as? String == "response" })
        #expect(response["status"] as? Int == 204)
        #expect((response["body"] as? String)?.hasPrefix("stored at \(server.url)\(upload.id) (3.00 MB)") == true, "\(response)")
        #expect(TestFiles.sameContents(photo, upload.path))
    }

    /// A pipe has no length before it ends: tus creates the upload with its length deferred,
    /// sends it a chunk at a time and says the length in the last PATCH; a cut is continued from
    /// the server's offset with the chunk still in memory.
    @Test func standardInputGoesByTusWithItsLengthSaidAtTheEnd() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("tus-stdin")
        let bytes = try await offPool { try #require(FileHandle(forReadingAtPath: "/dev/urandom")).readData(ofLength: 5_000_000) }
        let relay = try CuttingRelay(to: server.port, cutAfter: [2_500_000])
        defer { relay.stop() }
        let run = try await CLIRun.run(
            [
                "send", "-", "--name", "dump.bin", "--any-file", "--protocol", "tus", "--chunk-size", "1MiB",
                "--to", "http://127.0.0.1:\(relay.port)/files/", "--json",
            ], stdin: bytes, environment: AgentCLITests.environment(root))
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(relay.cutsDone == 1)
        #expect(server.uploads.count == 1, "one upload, continued: \(server.requests)")
        let upload = try #require(server.uploads.first)
        #expect(FileManager.default.contents(atPath: upload.path) == bytes)
        #expect(upload.metadata["filename"] == "dump.bin")
        #expect(server.requests.contains { $0.hasPrefix("HEAD") }, "\(server.requests)")
        let ratio = Double(relay.bytesToServer) / Double(bytes.count)
        #expect(ratio < 1.0 + Double(1 << 20) / Double(bytes.count) + 0.01, "at most the cut chunk twice: \(ratio)")
        let lines = run.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let finished = try #require(lines.first { $0["event"] as? String == "finished" })
        #expect(finished["ok"] as? Bool == true)
        #expect(
            finished["sha256"] as? String == (try await offPool { try PythonDigests.sha256Hex(upload.path) }),
            "the content's digest, as Python's hashlib has it")
    }

    /// Chunks smaller than what was read of the pipe to tell its type (64 KiB) keep their size.
    @Test func standardInputInSmallChunksKeepsTheChunkSize() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("tus-stdin")
        let bytes = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let run = try await CLIRun.run(
            [
                "send", "-", "--name", "small.bin", "--any-file", "--protocol", "tus", "--chunk-size", "1000",
                "--to", server.url,
            ], stdin: bytes, environment: AgentCLITests.environment(root))
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        let upload = try #require(server.uploads.first)
        #expect(FileManager.default.contents(atPath: upload.path) == bytes)
        #expect(upload.parts == 5, "\(server.requests)")
    }

    @Test func aTusServerWithoutDeferredLengthsIsToldWhyStandardInputCannotGo() async throws {
        guard TusPeer.aiohttpTusAvailable else { return }
        let server = try await TusPeer.start(.aiohttpTus(maxRequest: 64 << 20))
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("tus-stdin")
        let run = try await CLIRun.run(
            ["send", "-", "--name", "dump.bin", "--any-file", "--protocol", "tus", "--to", server.url],
            stdin: Data(repeating: 7, count: 1000), environment: AgentCLITests.environment(root))
        #expect(run.status == 2)
        #expect(run.stdout.contains("tus creation-defer-length") && run.stdout.contains("save it to a file first"), "\(run.stdout)")
        #expect(server.storedFiles.isEmpty)
    }

    @Test func badProtocolAndChunkSizeAreRefusedByName() async throws {
        let root = TestFiles.makeTemporaryDirectory("tus-cli")
        let photo = try TestFiles.writeImage(at: root + "/photo.jpg", size: 1000)
        let wrong = try await CLIRun.run(["send", photo, "--to", "http://127.0.0.1:9/files/", "--protocol", "ftp"])
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("--protocol"), "\(wrong.stderr)")
        let chunk = try await CLIRun.run(["send", photo, "--to", "http://127.0.0.1:9/files/", "--chunk-size", "lots"])
        #expect(chunk.status != 0)
        #expect(chunk.stderr.contains("--chunk-size 'lots' is not a size like 5MiB or 6MiB"), "\(chunk.stderr)")
    }

    @Test func anUploadURLHandedOutElsewhereIsContinuedNotCreated() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("tus-cli")
        let photo = try TestFiles.writeImage(at: root + "/photo.jpg", size: 2_000_000)
        // The service hands out an upload URL (here: created by curl, as its API would).
        let size = try #require(TestFiles.size(of: photo))
        let id = try await offPool { try server.create(length: size, filename: "photo.jpg", filetype: "image/jpeg") }
        let handed = try #require(server.uploads.first { $0.id == id })
        let run = try await CLIRun.run(
            ["send", photo, "--to", server.url, "--upload-url", server.url + handed.id],
            environment: AgentCLITests.environment(root))
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(server.uploads.count == 1, "nothing created: \(server.requests)")
        #expect(!server.requests.contains { $0.hasPrefix("POST") && !$0.contains(" 201") })
        #expect(server.requests.filter { $0.hasPrefix("POST") }.count == 1, "only curl's creation: \(server.requests)")
        #expect(TestFiles.sameContents(photo, handed.path))

        // Gone: said, and nothing created in its place.
        let gone = try await CLIRun.run(
            ["send", photo, "--to", server.url, "--upload-url", server.url + "nosuchupload"],
            environment: AgentCLITests.environment(root))
        #expect(gone.status == 2)
        #expect(gone.stdout.contains("the upload URL given with --upload-url cannot be continued: the server no longer has the upload"), "\(gone.stdout)")
        #expect(server.uploads.count == 1)
        let two = try await CLIRun.run(["send", photo, photo, "--to", server.url, "--upload-url", server.url + handed.id])
        #expect(two.status != 0 && two.stderr.contains("--upload-url takes one file; 2 were given"), "\(two.stderr)")
    }

    @Test func anAgentKilledMidUploadFinishesItFromTheServersOffsetExactlyOnce() async throws {
        let server = try await TusPeer.start()
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("tus-agent")
        let env = AgentCLITests.environment(root)
        defer { if let pid = AgentCLITests.agentPID(root) { kill(pid, SIGKILL) } }
        // Paced: 12 s for the file, so the kill lands while it is sent even on a slow machine.
        let big = try await offPool { try TestFiles.writeImage(at: root + "/big.jpg", size: 96 << 20) }
        let queued = try await CLIRun.run(
            ["send", big, "--to", server.url, "--background", "--limit-rate", "8MB", "--protocol", "tus"],
            environment: env)
        #expect(queued.status == 0, "\(queued.stderr)")

        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await AgentCLITests.waitFor("the upload to be under way") {
            let row = try journal.snapshot(UploadID(1))
            return (row?.bytesSent ?? 0) > 4 << 20 && row?.resume?.kind == .tus
        }
        // `status --json` says the protocol, the upload URL and the offset while it goes.
        let status = try await CLIRun.run(["status", "--json"], environment: env)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let going = try #require((document["uploads"] as? [[String: Any]])?.first)
        #expect(going["protocol"] as? String == "tus", "\(status.stdout)")
        #expect((going["uploadURL"] as? String)?.hasPrefix(server.url) == true)
        #expect(going["offset"] as? Int != nil)
        let firstAgent = try #require(AgentCLITests.agentPID(root))
        #expect(kill(firstAgent, SIGKILL) == 0)
        try await AgentCLITests.waitFor("the agent to die") { kill(firstAgent, 0) != 0 }
        // The server writes down what it took once it sees the connection gone.
        try await AgentCLITests.waitFor("the server to keep the first part") {
            server.uploads.first.map { $0.offset > 0 && !server.busy($0.id) } ?? false
        }
        let kept = try #require(server.uploads.first?.offset)

        let small = try TestFiles.writeImage(at: root + "/small.jpg", size: 2000)
        let again = try await CLIRun.run(["send", small, "--to", server.url, "--background"], environment: env)
        #expect(again.status == 0, "\(again.stderr)")
        try await AgentCLITests.waitFor("both uploads to finish", seconds: 90) {
            try [1, 2].allSatisfy { try journal.snapshot(UploadID($0))?.state == .succeeded }
        }
        let row = try #require(try journal.snapshot(UploadID(1)))
        #expect(row.attempts == 2)
        let resumed = try journal.entries(after: 0).compactMap {
            if case .resumed(let id, let offset, _) = $0.event, id == UploadID(1) { offset } else { nil }
        }
        #expect(resumed.count == 1 && resumed[0] >= kept, "continued at the server's offset: \(resumed) vs \(kept)")
        let finished = try journal.entries(after: 0).filter { if case .finished(let id, _) = $0.event { id == UploadID(1) } else { false } }
        #expect(finished.count == 1)
        // Exactly once: one upload of the big file on the server, whole, in two requests.
        let uploads = server.uploads.filter { $0.size == 96 << 20 }
        #expect(uploads.count == 1, "\(server.uploads)")
        #expect(uploads.first?.parts == 2)
        #expect(uploads.first.map { TestFiles.sameContents(big, $0.path) } == true)
        #expect(server.uploads.count == 2)
        #expect(row.response?.textBody?.hasPrefix("stored at \(server.url)") == true)
    }
}
