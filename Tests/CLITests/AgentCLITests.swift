import Foundation
import Glibc
import Testing
import UploadCore
@testable import UploadJournal
import UploadTesting

/// The background agent as a user meets it: `send --background`, `status`, `agent stop`,
/// and a `kill -9` in the middle of a large upload.
@Suite(.serialized, .timeLimit(.minutes(5))) struct AgentCLITests {
    static func environment(_ root: String) -> [String: String] {
        ["XDG_STATE_HOME": root + "/state", "XDG_RUNTIME_DIR": root + "/run"]
    }

    static func agentPID(_ root: String) -> Int32? {
        guard let text = try? String(contentsOfFile: root + "/state/uploadmon/agent.lock", encoding: .utf8) else { return nil }
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func waitFor(_ what: String, seconds: Double = 60, _ condition: () throws -> Bool) async throws {
        for _ in 0..<Int(seconds * 20) {
            if try condition() { return }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        Issue.record("gave up waiting \(Int(seconds)) s for \(what)")
        throw CancellationError()
    }

    @Test func agentConfigIsKeptForEveryStartAndTakenAtOnceByARunningAgent() async throws {
        let receiver = try await ReceiverHarness.start()
        let root = receiver.root
        let env = Self.environment(root)
        defer { if let pid = Self.agentPID(root) { kill(pid, SIGKILL) } }

        let shown = try await CLIRun.run(["agent", "config"], environment: env)
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("2 uploads at once, full speed"))
        #expect(shown.stdout.contains("No agent is running; these apply when it starts."))

        let set = try await CLIRun.run(["agent", "config", "--concurrency", "4", "--limit-rate", "2MB", "--between", "09:00-18:00"], environment: env)
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("4 uploads at once, at most 2.00 MB/s in total from 09:00 to 18:00 (full speed otherwise)"), "\(set.stdout)")
        #expect(set.stdout.contains("No agent is running; it starts with these."))
        let idle = try await CLIRun.run(["status"], environment: env)
        #expect(idle.stdout.contains("Settings: 4 uploads at once, at most 2.00 MB/s in total from 09:00 to 18:00 (full speed otherwise)"), "\(idle.stdout)")
        #expect(idle.stdout.contains("(at its next start)."))

        // An agent started on demand reads them.
        let file = try TestFiles.writeImage(at: root + "/a.png", size: 1000)
        let queued = try await CLIRun.run(["send", file, "--to", receiver.url, "--background"], environment: env)
        #expect(queued.status == 0, "\(queued.stderr)")
        let pid = try #require(Self.agentPID(root))
        let log = try String(contentsOfFile: root + "/state/uploadmon/agent.log", encoding: .utf8)
        #expect(log.contains("settings: 4 uploads at once, at most 2.00 MB/s"), "\(log)")

        let allDay = try await CLIRun.run(["agent", "config", "--all-day"], environment: env)
        #expect(allDay.status == 0, "\(allDay.stderr)")
        #expect(allDay.stdout.contains("In force in the running agent (pid \(pid)) now."), "\(allDay.stdout)")
        let running = try await CLIRun.run(["status"], environment: env)
        #expect(running.stdout.contains("Settings: 4 uploads at once, at most 2.00 MB/s in total."), "\(running.stdout)")
        let json = try await CLIRun.run(["status", "--json"], environment: env)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let settings = try #require(document["settings"] as? [String: Any])
        #expect(settings["concurrency"] as? Int == 4)
        #expect(settings["rateLimit"] as? Int == 2_000_000)
        #expect(settings["limitWindow"] == nil)

        for (arguments, expected) in [
            (["--between", "9-18"], "HH:MM-HH:MM"),
            (["--limit-rate", "none", "--between", "09:00-10:00"], "needs a rate"),
            (["--concurrency", "0"], "from 1 to 64"),
            (["--limit-rate", "fast"], "is not a rate"),
            (["--between", "09:00-10:00", "--all-day"], "contradict"),
        ] {
            let refused = try await CLIRun.run(["agent", "config"] + arguments, environment: env)
            #expect(refused.status != 0 && refused.stderr.contains(expected), "\(arguments): \(refused.stderr)")
        }
        let unchanged = try await CLIRun.run(["agent", "config"], environment: env)
        #expect(unchanged.stdout.contains("The running agent (pid \(pid)) uses these."), "\(unchanged.stdout)")
        _ = try await CLIRun.run(["agent", "stop"], environment: env)
        await receiver.stop()
    }

    /// A file named to set the terminal's title and clear the screen, dropped into a watched
    /// folder, once did both when the user ran `status`.
    @Test func statusShowsHostileNamesEscapedAndJSONKeepsThemAsData() async throws {
        let root = TestFiles.makeTemporaryDirectory("status-hostile")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let env = Self.environment(root)
        let name = "x\u{1B}]0;OWNED\u{07}\u{1B}[2J\u{202E}gnp.jpg"
        try FileManager.default.createDirectory(atPath: root + "/state/uploadmon", withIntermediateDirectories: true)
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        let added = try journal.add(
            [
                NewUpload(
                    request: UploadRequest(source: .file(path: "/in/" + name), url: "http://127.0.0.1:9/\u{1B}[2Jphoto", uploadName: name),
                    fingerprint: FileFingerprint(size: 10, modificationNanoseconds: 1), settings: TransportSettings(), origin: "watch /in")
            ], at: Date())
        try journal.record(.finished(added[0].id, .failed(UploadFailure(.connectionLost, "reset by \u{1B}[2Jpeer", code: 104))), at: Date())
        func inert(_ text: String) -> Bool { !text.unicodeScalars.contains { InvisibleCharacters.isHidden($0) && $0 != "\n" } }

        let table = try await CLIRun.run(["status"], environment: env)
        #expect(table.status == 0, "\(table.stderr)")
        #expect(inert(table.stdout) && inert(table.stderr), "\(table.stdout.debugDescription)")
        #expect(table.stdout.contains("x<U+001B>]0;OWNED<U+0007><U+001B>[2J<U+202E>gnp.jpg"), "\(table.stdout)")
        let json = try await CLIRun.run(["status", "--json"], environment: env)
        #expect(inert(json.stdout), "\(json.stdout.debugDescription)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((document["uploads"] as? [[String: Any]])?.first?["name"] as? String == name, "the data is the same")
    }

    /// `--skip-sent`: a photo whose content went to the endpoint before, by a foreground send or
    /// the agent, under another name or path, is left out and said so; new content goes.
    @Test func alreadySentContentIsSkippedUnderAnyName() async throws {
        let receiver = try await ReceiverHarness.start()
        let root = receiver.root
        let env = Self.environment(root)
        defer { if let pid = Self.agentPID(root) { kill(pid, SIGKILL) } }
        let a = try TestFiles.writeImage(at: root + "/a.jpg", size: 40_000)
        let sent = try await CLIRun.run(["send", a, "--to", receiver.url], environment: env)
        #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")

        try FileManager.default.createDirectory(atPath: root + "/moved", withIntermediateDirectories: true)
        let renamed = root + "/moved/holiday.jpg"
        try FileManager.default.copyItem(atPath: a, toPath: renamed)
        let fresh = try TestFiles.writeImage(at: root + "/fresh.jpg", size: 30_000)
        let skipping = try await CLIRun.run(["send", renamed, fresh, "--to", receiver.url, "--skip-sent"], environment: env)
        #expect(skipping.status == 0, "\(skipping.stdout) \(skipping.stderr)")
        #expect(skipping.stdout.contains("\(renamed): skipped, already sent to \(receiver.url) on "), "\(skipping.stdout)")
        #expect(skipping.stdout.contains(" as a.jpg (same content)"))
        #expect(receiver.storedNames() == ["a.jpg", "fresh.jpg"])
        let json = try await CLIRun.run(["send", renamed, "--to", receiver.url, "--skip-sent", "--json"], environment: env)
        #expect(json.status == 0)
        if PythonDigests.available {
            let digest = try PythonDigests.sha256Hex(a)
            #expect(json.stdout.contains(#""event":"skipped""#) && json.stdout.contains(#""sha256":"\#(digest)""#), "\(json.stdout)")
        }
        // Without --skip-sent it goes again; to another endpoint it is not "already sent".
        let again = try await CLIRun.run(["send", renamed, "--to", receiver.url], environment: env)
        #expect(again.status == 0 && receiver.storedNames().contains("holiday.jpg"))

        // What the agent sent counts too.
        let b = try TestFiles.writeImage(at: root + "/b.jpg", size: 50_000)
        let queued = try await CLIRun.run(["send", b, "--to", receiver.url, "--background"], environment: env)
        #expect(queued.status == 0, "\(queued.stderr)")
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await Self.waitFor("the agent's upload to succeed") { try journal.snapshots().contains { $0.name == "b.jpg" && $0.state == .succeeded } }
        let copy = root + "/moved/b-copy.jpg"
        try FileManager.default.copyItem(atPath: b, toPath: copy)
        let none = try await CLIRun.run(["send", copy, "--to", receiver.url, "--skip-sent"], environment: env)
        #expect(none.status == 0)
        #expect(
            none.stdout.contains("\(copy): skipped, already sent to \(receiver.url) on ") && none.stdout.contains(" as b.jpg (same content)"), "\(none.stdout)")
        #expect(none.stdout.contains("nothing to send: all 1 file(s) were already sent to \(receiver.url)"))
        #expect(!receiver.storedNames().contains("b-copy.jpg"))
        // Stopped before the folder goes: the deferred kill finds the agent by its lock file there.
        _ = try await CLIRun.run(["agent", "stop"], environment: env)
        await receiver.cleanUp()
    }

    /// A plain `send` does not hash what it sends (the journal keeps the file's path and
    /// stamps); `--skip-sent` hashes it later, but only while the file is as it was sent: a
    /// photo edited since with its modification time put back is not taken for the one sent.
    @Test func aPhotoEditedAfterItWasSentIsNotSkipped() async throws {
        let receiver = try await ReceiverHarness.start()
        let root = receiver.root
        let env = Self.environment(root)
        let a = try TestFiles.writeImage(at: root + "/a.jpg", size: 40_000)
        let sent = try await CLIRun.run(["send", "a.jpg", "--to", receiver.url], environment: env, directory: root)
        #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        #expect(try journal.pendingSent(to: receiver.url).map(\.path) == [a], "kept by its absolute path, not hashed yet")

        // The same size and modification time, other bytes: only the change time moved.
        let before = try #require(FileFingerprint.of(path: a))
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: a)))
        for _ in 0..<200 {
            usleep(5_000)
            bytes[1000] &+= 1
            try Data(bytes).write(to: URL(fileURLWithPath: a))
            let mtime = timespec(tv_sec: Int(before.modificationNanoseconds / 1_000_000_000), tv_nsec: Int(before.modificationNanoseconds % 1_000_000_000))
            #expect(utimensat(AT_FDCWD, a, [mtime, mtime], 0) == 0)
            if FileFingerprint.of(path: a)?.changeNanoseconds != before.changeNanoseconds { break }
        }
        #expect(FileFingerprint.of(path: a) == before, "size and modification time as sent")
        let skipping = try await CLIRun.run(["send", a, "--to", receiver.url, "--skip-sent"], environment: env)
        #expect(skipping.status == 0, "\(skipping.stdout) \(skipping.stderr)")
        #expect(!skipping.stdout.contains("skipped"), "the edited photo goes: \(skipping.stdout)")
        // The row of the first send was looked at once and dropped as changed; the one left is
        // this send's, with the edited file's stamps.
        #expect(try journal.pendingSent(to: receiver.url).map(\.ctimeNs) == [FileFingerprint.of(path: a)?.changeNanoseconds].compactMap { $0 })
        #expect(try journal.sentContents(to: receiver.url).isEmpty, "nothing was taken for sent content")
        // What went now was hashed by the next look: a copy of it is skipped.
        let copy = root + "/copy.jpg"
        try FileManager.default.copyItem(atPath: a, toPath: copy)
        let again = try await CLIRun.run(["send", copy, "--to", receiver.url, "--skip-sent"], environment: env)
        #expect(again.stdout.contains("\(copy): skipped, already sent to \(receiver.url) on "), "\(again.stdout)")
        await receiver.cleanUp()
    }

    @Test func killNineMidUploadThenTheNextStartFinishesItExactlyOnce() async throws {
        let receiver = try await ReceiverHarness.start()
        let root = receiver.root
        let env = Self.environment(root)
        defer { if let pid = Self.agentPID(root) { kill(pid, SIGKILL) } }
        let big = try await offPool { try TestFiles.writeImage(at: root + "/big.png", size: 200 << 20) }

        let queued = try await CLIRun.run(["send", big, "--to", receiver.url, "--background", "--limit-rate", "40MB"], environment: env)
        #expect(queued.status == 0, "\(queued.stderr)")
        #expect(queued.stdout.contains("queued #1 big.png → \(receiver.url)"))
        #expect(queued.stdout.contains("started the agent"))

        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        // Under way, and the resource that keeps it named (the 104 written down): killed before
        // that, the next agent rightly starts over, which is not what this test is about.
        try await Self.waitFor("the upload to be under way") {
            let row = try journal.snapshot(UploadID(1))
            return (row?.bytesSent ?? 0) > 0 && row?.resume != nil
        }
        let firstAgent = try #require(Self.agentPID(root))
        #expect(kill(firstAgent, SIGKILL) == 0)
        try await Self.waitFor("the agent to die") { kill(firstAgent, 0) != 0 }
        #expect(try journal.snapshot(UploadID(1))?.state == .sending)
        let status = try await CLIRun.run(["status"], environment: env)
        #expect(status.stdout.contains("Agent: not running. 1 unfinished upload(s) continue when it starts"))

        // The next start (any command that needs the agent) picks it up again.
        let small = try TestFiles.writeImage(at: root + "/small.png", size: 1000)
        let again = try await CLIRun.run(["send", small, "--to", receiver.url, "--background"], environment: env)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("queued #2 small.png"))
        try await Self.waitFor("both uploads to finish", seconds: 90) {
            try [1, 2].allSatisfy { try journal.snapshot(UploadID($0))?.state == .succeeded }
        }
        let row = try #require(try journal.snapshot(UploadID(1)))
        #expect(row.attempts == 2)
        #expect(row.response?.status == 200)
        // The second attempt continued at the receiver's offset: what the first had sent was not
        // sent again (the receiver resumes uploads), and the bytes it took in all are one body.
        let resumed = try journal.entries(after: 0).compactMap {
            if case .resumed(let id, let offset, _) = $0.event, id == UploadID(1) { offset } else { nil }
        }
        #expect(resumed.count == 1 && resumed[0] > 0, "\(resumed)")
        #expect(row.bytesSaved == resumed.first)
        // The body went out in the creation request (optimistic: its 104 named the resource),
        // and its rest in a PATCH; the small file's own POST is not counted.
        let appended = receiver.logLines.filter { $0.method == "PATCH" || ($0.method == "POST" && $0.bytes > 100_000) }.map(\.bytes).reduce(0, +)
        let body = try #require(row.bytesExpected)
        #expect(appended >= body && Double(appended) <= Double(body) * 1.01, "\(appended) bytes appended for a body of \(body)")
        let finished = try journal.entries(after: 0).filter {
            if case .finished(let id, _) = $0.event { id == UploadID(1) } else { false }
        }
        #expect(finished.count == 1)
        #expect(receiver.storedNames() == ["big.png", "small.png"])
        #expect(TestFiles.sameContents(big, receiver.directory + "/big.png"))

        let table = try await CLIRun.run(["status"], environment: env)
        #expect(table.stdout.contains("Agent: running"))
        #expect(table.stdout.contains("#1  succeeded  big.png"))
        let json = try await CLIRun.run(["status", "--json"], environment: env)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let uploads = try #require(document["uploads"] as? [[String: Any]])
        #expect(uploads.map { $0["state"] as? String } == ["succeeded", "succeeded"])
        #expect(uploads.first?["body"] as? String == #"{"filename":"big.png"}"#)
        #expect((uploads.first?["bytesSaved"] as? Int ?? 0) > 0)
        // Proved intact, the resumed one too: the receiver's digest of the whole upload (claimed
        // at its creation, before the kill) matched what was sent, and the journal kept it.
        #expect(uploads.map { $0["verified"] as? String } == ["sha-256", "sha-256"], "\(json.stdout)")
        // Its content's own digest, known though the file was read in two processes.
        if PythonDigests.available {
            #expect(uploads.first?["sha256"] as? String == (try PythonDigests.sha256Hex(big)))
        }
        #expect(table.stdout.contains("verified (sha-256)"), "\(table.stdout)")

        let log = try String(contentsOfFile: root + "/state/uploadmon/agent.log", encoding: .utf8)
        #expect(log.contains("picked up 1 unfinished upload(s) from the journal"))
        let notes = try journal.entries(after: 0).compactMap { if case .retryScheduled(_, _, _, let reason) = $0.event { reason } else { nil } }
        #expect(notes.contains { $0.hasSuffix("continuing where the server has it") }, "\(notes)")

        let stop = try await CLIRun.run(["agent", "stop"], environment: env)
        #expect(stop.status == 0)
        #expect(stop.stdout.contains("Stopped the agent"))
        let stopped = try await CLIRun.run(["agent", "stop"], environment: env)
        #expect(stopped.stdout.contains("No agent is running."))
        await receiver.cleanUp()
    }

    @Test func headersGoToTheAgentButNeverIntoItsOutput() async throws {
        let receiver = try await ReceiverHarness.start()
        let root = receiver.root
        let env = Self.environment(root)
        defer { if let pid = Self.agentPID(root) { kill(pid, SIGKILL) } }
        let file = try TestFiles.writeImage(at: root + "/a.png", size: 1000)
        let url = "http://user:Pa55word@127.0.0.1:\(receiver.port)/photo?token=t0ken-value"
        let run = try await CLIRun.run(
            ["send", file, "--to", url, "--background", "--json", "-H", "Authorization: Bearer very-secret"], environment: env)
        #expect(run.status == 0)
        let line = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(line["event"] as? String == "queued")
        #expect(line["id"] as? Int == 1)
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await Self.waitFor("the upload") { try journal.snapshot(UploadID(1))?.state == .succeeded }
        let status = try await CLIRun.run(["status", "--json"], environment: env)
        let table = try await CLIRun.run(["status"], environment: env)
        let log = try String(contentsOfFile: root + "/state/uploadmon/agent.log", encoding: .utf8)
        for text in [run.stdout, run.stderr, status.stdout, table.stdout, log] {
            #expect(!text.contains("very-secret"))
            #expect(!text.contains("Pa55word") && !text.contains("t0ken-value"), "\(text)")
        }
        #expect(status.stdout.contains("***@127.0.0.1"), "\(status.stdout)")
        // Finished: the header value has left the journal itself (after a checkpoint: until then
        // the write-ahead log still holds the frame that inserted it).
        try await journal.pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        for path in [root + "/state/uploadmon/journal.sqlite", root + "/state/uploadmon/journal.sqlite-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
            #expect(bytes.range(of: Data("very-secret".utf8)) == nil, "\(path)")
        }
        _ = try await CLIRun.run(["agent", "stop"], environment: env)
        await receiver.cleanUp()
    }

    @Test func backgroundRefusalsAreClear() async throws {
        let root = TestFiles.makeTemporaryDirectory("agent-cli")
        let env = Self.environment(root)
        let stdin = try await CLIRun.run(["send", "-", "--to", "http://127.0.0.1:9/photo", "--background"], environment: env)
        #expect(stdin.status == 64)
        #expect(stdin.stderr.contains("standard input ('-') cannot be sent in the background"))
        let empty = try await CLIRun.run(["status"], environment: env)
        #expect(empty.status == 0)
        #expect(empty.stdout.contains("Agent: not running."))
        #expect(empty.stdout.contains("No background uploads yet"))
        let idle = try await CLIRun.run(["agent", "--idle-exit", "soon"], environment: env)
        #expect(idle.status == 64)
        #expect(idle.stderr.contains("--idle-exit 'soon' is not a duration"))
        // Nothing was started by any of these.
        #expect(Self.agentPID(root) == nil)
    }

    @Test func watchAFolderListItsJobAndStopWatching() async throws {
        let receiver = try await ReceiverHarness.start()
        let root = receiver.root
        let env = Self.environment(root)
        defer { if let pid = Self.agentPID(root) { kill(pid, SIGKILL) } }
        let folder = root + "/camera"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try TestFiles.writeImage(at: folder + "/first.jpg", size: 4000)

        let bad = try await CLIRun.run(["watch", root + "/nowhere", "--to", receiver.url], environment: env)
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("cannot watch \(root)/nowhere: No such file or directory"), "\(bad.stderr)")
        let tooOften = try await CLIRun.run(["watch", folder, "--to", receiver.url, "--every", "0.2s"], environment: env)
        #expect(tooOften.status != 0)
        #expect(tooOften.stderr.contains("--every '0.2s' is out of range: allowed 1s to 365d"))
        let concurrent = try await CLIRun.run(["watch", folder, "--to", receiver.url, "--concurrency", "4"], environment: env)
        #expect(concurrent.status != 0)
        #expect(concurrent.stderr.contains("--concurrency does not apply here: the background agent runs the uploads"))

        let watched = try await CLIRun.run(
            ["watch", folder, "--to", receiver.url, "--every", "1s", "-H", "Authorization: Bearer cli-secret"], environment: env)
        #expect(watched.status == 0, "\(watched.stderr)")
        #expect(watched.stdout.contains("Watching \(folder) every 1s → \(receiver.url) (job 2)."), "\(watched.stdout)")
        #expect(watched.stdout.contains("started the agent"))
        try await Self.waitFor("first.jpg to arrive", seconds: 30) { receiver.storedNames() == ["first.jpg"] }

        let jobs = try await CLIRun.run(["jobs"], environment: env)
        #expect(jobs.status == 0, "\(jobs.stderr)")
        #expect(jobs.stdout.contains("Agent: running"))
        #expect(jobs.stdout.contains("maintenance, keeps 7d of history"))
        #expect(jobs.stdout.contains("watch \(folder) → \(receiver.url) (1 queued)"), "\(jobs.stdout)")
        let json = try await CLIRun.run(["jobs", "--json"], environment: env)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let listed = try #require(document["jobs"] as? [[String: Any]])
        #expect(listed.map { $0["kind"] as? String } == ["maintenance", "watch"])
        for output in [watched.stdout, watched.stderr, jobs.stdout, json.stdout] {
            #expect(!output.contains("cli-secret"))
        }

        let removed = try await CLIRun.run(["jobs", "remove", folder], environment: env)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("Removed job 2"))
        let refused = try await CLIRun.run(["jobs", "remove", "1"], environment: env)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("the maintenance job cannot be removed"))
        let after = try await CLIRun.run(["jobs"], environment: env)
        #expect(!after.stdout.contains("watch "))
        let log = try String(contentsOfFile: root + "/state/uploadmon/agent.log", encoding: .utf8)
        #expect(log.contains("watching \(folder) every 1s"))
        #expect(log.contains("stopped watching \(folder)"))
        #expect(!log.contains("cli-secret"))
        _ = try await CLIRun.run(["agent", "stop"], environment: env)
        await receiver.cleanUp()
    }
}
