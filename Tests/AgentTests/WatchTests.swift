import Foundation
import Glibc
import Testing
@testable import UploadAgent
import UploadClient
import UploadCore
import UploadJournal
import UploadTesting

@Suite struct WatchPlanTests {
    let now = Date()
    func fp(_ size: Int64, _ mtime: Int64 = 1) -> FileFingerprint { FileFingerprint(size: size, modificationNanoseconds: mtime) }
    func seen(_ name: String, _ fingerprint: FileFingerprint, _ state: WatchFileState) -> WatchFile {
        WatchFile(jobID: 1, name: name, fingerprint: fingerprint, state: state, at: now)
    }

    @Test func aFileSettlesOnlyWhenTwoLooksAgree() {
        let listing = [
            WatchScanner.Entry(name: "new.png", fingerprint: fp(10)),
            WatchScanner.Entry(name: "same.png", fingerprint: fp(10, 5)),
            WatchScanner.Entry(name: "grew.png", fingerprint: fp(20, 6)),
            WatchScanner.Entry(name: "touched.png", fingerprint: fp(10, 9)),
            WatchScanner.Entry(name: "empty.png", fingerprint: fp(0)),
            WatchScanner.Entry(name: "sent.png", fingerprint: fp(99, 99)),
            WatchScanner.Entry(name: "passed.txt", fingerprint: fp(3)),
        ]
        let known = Dictionary(
            uniqueKeysWithValues: [
                seen("same.png", fp(10, 5), .pending), seen("grew.png", fp(10, 5), .pending),
                seen("touched.png", fp(10, 5), .pending), seen("empty.png", fp(0), .pending),
                seen("sent.png", fp(1, 1), .queued), seen("passed.txt", fp(3), .skipped),
                seen("gone.png", fp(10), .queued),
            ].map { ($0.name, $0) })
        let plan = WatchScanner.plan(jobID: 1, listing: listing, known: known, at: now)
        #expect(plan.settled.map(\.name) == ["same.png"])
        #expect(plan.changes.pending.map(\.name) == ["new.png", "grew.png", "touched.png"])
        #expect(plan.changes.pending.map(\.size) == [10, 20, 10])
        #expect(plan.changes.forgotten == ["gone.png"])
        #expect(plan.changes.queue.isEmpty && plan.changes.skipped.isEmpty)
    }

    @Test func namesOfFilesBeingWrittenAreNeverLookedAt() {
        for name in [".hidden.png", ".a.png.XyZ12", "b.png.part", "c.jpg.crdownload", "d.JPG.PART", "e.png~", "f.png.tmp", "g.jpg.download", "h.filepart"] {
            #expect(!WatchScanner.isCandidate(name), "\(name)")
        }
        for name in ["a.png", "夕焼け.jpg", "part.png", "tmp.jpeg"] {
            #expect(WatchScanner.isCandidate(name), "\(name)")
        }
    }

    @Test func listingTakesRegularFilesNotFoldersNorHiddenOnes() throws {
        let root = TestFiles.makeTemporaryDirectory("list")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try TestFiles.writeImage(at: root + "/a.jpg", size: 10)
        try TestFiles.writeImage(at: root + "/.b.jpg", size: 10)
        try FileManager.default.createDirectory(atPath: root + "/sub.jpg", withIntermediateDirectories: false)
        try TestFiles.writeImage(at: root + "/sub.jpg/c.jpg", size: 10)
        symlink(root + "/a.jpg", root + "/link.jpg")
        symlink(root + "/missing.jpg", root + "/dangling.jpg")
        #expect(try WatchScanner.list(root).map(\.name) == ["a.jpg", "link.jpg"])
        #expect(throws: WatchFolderError.self) { try WatchScanner.list(root + "/nope") }
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct WatchAgentTests {
    func watch(_ client: AgentClient, _ folder: String, url: String, every: Double, newOnly: Bool = false, skipSent: Bool? = nil) async throws -> JobSnapshot {
        let template = EnqueueItem(
            request: UploadRequest(source: .file(path: folder), url: url, uploadName: "-"), settings: TransportSettings(), origin: "watch")
        let reply = try await offPool {
            try client.request(.watch(directory: folder, template: template, everySeconds: every, newOnly: newOnly, skipSent: skipSent))
        }
        guard case .job(let job, _) = reply else { throw AgentError("not watching: \(reply)") }
        return job
    }

    func job(_ running: RunningAgent, _ id: Int64) throws -> JobSnapshot {
        try #require(try running.journal.jobSnapshots().first { $0.id == id })
    }

    /// Waits until the scheduler ran the job `runs` times, the last run ended.
    func waitRuns(_ running: RunningAgent, _ id: Int64, atLeast runs: Int) async throws {
        #expect(try await eventually { await running.agent.runsEnded(id) >= runs })
    }

    func uploads(_ running: RunningAgent) throws -> [UploadRecord] { try running.journal.snapshots() }

    @Test func aWatchedFolderSendsANewFileOnceAndNeverAHalfWrittenOne() async throws {
        let receiver = try await ReceiverHarness.start()
        let running = try await RunningAgent.start(root: receiver.root)
        let folder = receiver.root + "/in"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try TestFiles.writeImage(at: folder + "/ready.jpg", size: 30_000)
        let final = try TestFiles.writeImage(at: receiver.root + "/final.jpg", size: 200_000)
        let finalBytes = try Data(contentsOf: URL(fileURLWithPath: final))

        let client = try await running.connect("watch")
        // A long interval: the registration's own look runs at once, the rest are made here.
        let registered = try await watch(client, folder, url: receiver.url, every: 3600)
        #expect(registered.kind == .watch && registered.title == folder)
        try await waitRuns(running, registered.id, atLeast: 1)
        #expect(try job(running, registered.id).filesPending == 1)
        #expect(try uploads(running).isEmpty)

        // A file being written: a piece before each look, so no two looks agree.
        let growing = folder + "/growing.jpg"
        _ = FileManager.default.createFile(atPath: growing, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: growing))
        var written = 0
        for piece in stride(from: 0, to: finalBytes.count, by: 50_000) {
            try handle.write(contentsOf: finalBytes[piece..<min(piece + 50_000, finalBytes.count)])
            written = min(piece + 50_000, finalBytes.count)
            await running.agent.runJob(registered.id)
            #expect(try uploads(running).map(\.name) == ["ready.jpg"], "after \(written) bytes")
        }
        try handle.close()
        // Written completely: the next look agrees with the last one, and it goes.
        await running.agent.runJob(registered.id)
        let queued = try uploads(running)
        #expect(queued.map(\.name) == ["ready.jpg", "growing.jpg"])
        #expect(queued.allSatisfy { $0.origin == "watch \(folder)" })
        try await running.waitFinished(queued.map(\.id))
        #expect(receiver.storedNames() == ["growing.jpg", "ready.jpg"])
        #expect(TestFiles.sameContents(receiver.directory + "/growing.jpg", final))

        // Seen once: more looks, even after a change to a sent file, queue nothing again.
        let appender = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/ready.jpg"))
        try appender.seekToEnd()
        try appender.write(contentsOf: Data([1, 2, 3]))
        try appender.close()
        for _ in 0..<3 { await running.agent.runJob(registered.id) }
        #expect(try uploads(running).count == 2)
        let after = try job(running, registered.id)
        #expect(after.filesQueued == 2 && after.filesPending == 0)

        // A file that left the folder is forgotten: a new one under its name is new.
        try FileManager.default.removeItem(atPath: folder + "/ready.jpg")
        await running.agent.runJob(registered.id)
        try TestFiles.writeImage(at: folder + "/ready.jpg", size: 1234)
        await running.agent.runJob(registered.id)
        await running.agent.runJob(registered.id)
        let again = try uploads(running)
        #expect(again.map(\.name) == ["ready.jpg", "growing.jpg", "ready.jpg"])
        try await running.waitFinished(again.map(\.id))
        #expect(receiver.storedNames() == ["growing.jpg", "ready-1.jpg", "ready.jpg"])

        client.close()
        await running.stop()
        await receiver.cleanUp()
    }

    /// `watch --skip-sent`: a file arriving in the folder whose content was already sent to the
    /// endpoint (here by an earlier watch of another folder) is passed over, saying so; new
    /// content goes.
    @Test func aWatchThatSkipsSentContentPassesOverACopy() async throws {
        let receiver = try await ReceiverHarness.start()
        let running = try await RunningAgent.start(root: receiver.root)
        let first = receiver.root + "/first"
        let second = receiver.root + "/second"
        for folder in [first, second] { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
        let original = try TestFiles.writeImage(at: first + "/cat.jpg", size: 30_000)
        let client = try await running.connect("watch")
        let one = try await watch(client, first, url: receiver.url, every: 3600)
        #expect(try await eventually { ((try? job(running, one.id))?.filesPending ?? 0) >= 1 })
        await running.agent.runJob(one.id)
        try await running.waitFinished(try uploads(running).map(\.id))
        #expect(receiver.storedNames() == ["cat.jpg"])

        try FileManager.default.copyItem(atPath: original, toPath: second + "/renamed.jpg")
        try TestFiles.writeImage(at: second + "/dog.jpg", size: 20_000)
        let two = try await watch(client, second, url: receiver.url, every: 3600, skipSent: true)
        // The registration's look has written both files down (a run still going would make
        // the next one a no-op).
        #expect(try await eventually { ((try? job(running, two.id))?.filesPending ?? 0) >= 2 })
        await running.agent.runJob(two.id)
        let queued = try uploads(running).filter { $0.origin == "watch \(second)" }
        #expect(queued.map(\.name) == ["dog.jpg"])
        try await running.waitFinished(queued.map(\.id))
        #expect(receiver.storedNames() == ["cat.jpg", "dog.jpg"])
        let skipped = try #require(try running.journal.watchFiles(two.id)["renamed.jpg"])
        #expect(skipped.state == .skipped)
        #expect(skipped.note?.hasPrefix("already sent to \(receiver.url) on ") == true, "\(String(describing: skipped.note))")
        #expect(skipped.note?.hasSuffix(" as cat.jpg (same content)") == true)
        client.close()
        await running.stop()
        await receiver.cleanUp()
    }

    @Test func scansRunOnTheirOwnNeverMoreOftenThanAskedAndKeepTheAgentUp() async throws {
        let receiver = try await ReceiverHarness.start()
        let running = try await RunningAgent.start(root: receiver.root)
        let folder = receiver.root + "/in"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try TestFiles.writeImage(at: folder + "/old.jpg", size: 500)
        try "not a picture".write(toFile: folder + "/notes.jpg", atomically: true, encoding: .utf8)
        let client = try await running.connect("watch")
        let started = Date()
        // The shortest interval a watch allows (the socket applies the flag's rule).
        let job = try await watch(client, folder, url: receiver.url, every: 1, newOnly: true)
        #expect(job.filesSkipped == 2)
        try TestFiles.writeImage(at: folder + "/new.jpg", size: 700)
        try await waitRuns(running, job.id, atLeast: 3)
        let elapsed = Date().timeIntervalSince(started)
        let ran = try self.job(running, job.id)
        #expect(Double(ran.runs) <= elapsed / 1 + 1, "\(ran.runs) runs in \(elapsed) s")
        let sent = try uploads(running)
        #expect(sent.map(\.name) == ["new.jpg"])
        try await running.waitFinished(sent.map(\.id))
        #expect(receiver.storedNames() == ["new.jpg"])

        // Watching keeps the agent from exiting when idle; without a watch it may.
        client.close()
        #expect(try await eventually { await running.agent.status().clients == 0 }, "the agent saw the client go")
        #expect(await running.agent.idleSeconds() == nil)
        let remover = try await running.connect("remove")
        let reply = try await offPool { try remover.request(.removeJob(id: job.id)) }
        guard case .ok = reply else { throw AgentError("not removed: \(reply)") }
        let maintenance = try #require(try running.journal.jobSnapshots().first)
        let refused = try await offPool { try remover.request(.removeJob(id: maintenance.id)) }
        guard case .error(let message) = refused else { throw AgentError("maintenance removed: \(refused)") }
        #expect(message.contains("cannot be removed"))
        remover.close()
        #expect(try await eventually { await running.agent.idleSeconds() != nil })
        #expect(try running.journal.jobSnapshots().map(\.kind) == [.maintenance])

        await running.stop()
        await receiver.cleanUp()
    }

    @Test func aWatchOfAFolderThatIsNotThereIsRefusedWithTheReason() async throws {
        let root = TestFiles.makeTemporaryDirectory("nowatch")
        let running = try await RunningAgent.start(root: root)
        let client = try await running.connect("watch")
        let template = EnqueueItem(
            request: UploadRequest(source: .file(path: root), url: "http://127.0.0.1:9/photo", uploadName: "-"), settings: TransportSettings(), origin: "watch")
        let reply = try await offPool { try client.request(.watch(directory: root + "/missing", template: template, everySeconds: 60, newOnly: false)) }
        guard case .error(let message) = reply else { throw AgentError("watched: \(reply)") }
        #expect(message == "cannot read \(root)/missing: No such file or directory")
        let relative = try await offPool { try client.request(.watch(directory: "in", template: template, everySeconds: 60, newOnly: false)) }
        guard case .error(let why) = relative else { throw AgentError("watched: \(relative)") }
        #expect(why.contains("absolute"))
        #expect(try running.journal.jobSnapshots().map(\.kind) == [.maintenance])
        client.close()
        await running.stop()
        try? FileManager.default.removeItem(atPath: root)
    }

    @Test func maintenanceThatCameDueWhileTheAgentWasDownRunsOnceAtStart() async throws {
        let root = TestFiles.makeTemporaryDirectory("maintenance")
        let paths = StatePaths(stateDirectory: root + "/state", runtimeDirectory: root + "/run")
        try paths.prepare()
        let seeded = try Journal(path: paths.journal)
        let long = Date(timeIntervalSinceNow: -30 * 86400)
        let file = try TestFiles.writeImage(at: root + "/a.jpg", size: 10)
        let old = try seeded.add(
            [
                NewUpload(
                    request: UploadRequest(source: .file(path: file), url: "http://127.0.0.1:9/photo", uploadName: "a.jpg"),
                    fingerprint: FileFingerprint.of(path: file)!, settings: TransportSettings(), origin: "send")
            ], at: long)[0].id
        try seeded.record(.started(old, attempt: 1, url: "u", totalBytes: 10), at: long)
        try seeded.record(.finished(old, .answered(status: 200)), at: long)  // its start goes with it: the row says it
        try seeded.ensureJob(.maintenance(MaintenanceSpec()), every: 86400, firstRunAt: Date(timeIntervalSinceNow: -3 * 86400), at: Date())
        // A cursor file a crashed monitor left, and one a live monitor is writing right now.
        let dead = Process()
        dead.executableURL = URL(fileURLWithPath: "/bin/true")
        try dead.run()
        dead.waitUntilExit()
        // (Written by an earlier version as `monitor-seen.<pid>`, and by this one as `<name>.<pid>.tmp`.)
        let leftover = paths.monitorCursor + ".\(dead.processIdentifier)"
        let leftoverSettings = FileReplacement.temporaryPath(for: paths.stateDirectory + "/agent-settings.json", pid: dead.processIdentifier)
        let live = FileReplacement.temporaryPath(for: paths.monitorCursor)
        for path in [leftover, leftoverSettings, live] { _ = FileManager.default.createFile(atPath: path, contents: Data("1\n".utf8)) }

        let running = try await RunningAgent.start(root: root)
        let maintenance = try #require(try running.journal.jobSnapshots().first { $0.kind == .maintenance })
        try await waitRuns(running, maintenance.id, atLeast: 1)
        // Ran once, and the next run is a day away (asserted below): no second run can follow.
        let ran = try job(running, maintenance.id)
        #expect(ran.runs == 1)
        #expect(ran.lastResult?.hasPrefix("pruned 1 upload(s) and 1 event(s), removed 2 leftover temporary file(s)") == true, "\(ran.lastResult ?? "")")
        #expect(!ran.lastFailed)
        #expect(ran.earliestBeginAt.timeIntervalSinceNow > 86000)
        #expect(try running.journal.snapshots().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: leftover) && !FileManager.default.fileExists(atPath: leftoverSettings))
        #expect(FileManager.default.fileExists(atPath: live))

        // Its settings can change; the next run moves with the interval.
        let client = try await running.connect("jobs")
        let reply = try await offPool { try client.request(.maintenance(everySeconds: 3600, keepSeconds: 30 * 86400)) }
        guard case .job(let changed, _) = reply else { throw AgentError("not changed: \(reply)") }
        #expect(changed.intervalSeconds == 3600 && changed.detail == "keeps 30d of history")
        #expect(abs(changed.earliestBeginAt.timeIntervalSince(ran.lastRunAt!) - 3600) < 1)
        client.close()
        await running.stop()
        try? FileManager.default.removeItem(atPath: root)
    }
}
