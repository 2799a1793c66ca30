import Foundation
import Glibc
import NIOConcurrencyHelpers
import NIOCore
import Testing
@testable import UploadAgent
import UploadClient
import UploadCore
import UploadJournal
import UploadTesting

/// An agent running in this process on a socket in a temporary directory.
struct RunningAgent {
    let agent: Agent
    let server: AgentServer
    let paths: StatePaths
    let journal: Journal

    static func start(root: String, concurrency: Int = 2, preparationLimit: TimeAmount = PreparationThreads.defaultLimit) async throws -> RunningAgent {
        let paths = StatePaths(stateDirectory: root + "/state", runtimeDirectory: root + "/run")
        try paths.prepare()
        let journal = try Journal(path: paths.journal)
        let agent = try Agent(
            configuration: AgentConfiguration(
                paths: paths, idleExitSeconds: 0, settings: AgentSettings(concurrency: concurrency),
                preparationLimit: preparationLimit), journal: journal)
        try await agent.start()
        let server = try AgentServer(agent: agent, path: paths.socket)
        server.start()
        return RunningAgent(agent: agent, server: server, paths: paths, journal: journal)
    }

    func connect(_ name: String) async throws -> AgentClient {
        let socket = paths.socket
        return try await offPool { try AgentClient.connect(socketPath: socket, client: name) }
    }

    func stop() async {
        server.close()
        await agent.shutdown()
    }

    /// Waits until every listed upload is finished in the journal.
    func waitFinished(_ ids: [UploadID], seconds: Double = 30) async throws {
        for _ in 0..<Int(seconds * 20) {
            if try ids.allSatisfy({ try journal.snapshot($0)?.state.isFinished == true }) { return }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        Issue.record("uploads \(ids) did not finish within \(seconds) s")
    }
}

/// Collects what a subscribed client receives.
final class EventLog: Sendable {
    private let box = NIOLockedValueBox<[AgentMessage]>([])
    func append(_ message: AgentMessage) { box.withLockedValue { $0.append(message) } }
    var logged: [(seq: Int64, event: UploadEvent)] {
        box.withLockedValue { messages in
            messages.compactMap { if case .event(let seq?, let event, _) = $0 { (seq, event) } else { nil } }
        }
    }
    var finishedCount: Int { logged.count { if case .finished = $0.event { true } else { false } } }
    /// The reasons the agent gave for stopping.
    var stops: [String] { box.withLockedValue { $0.compactMap { if case .stopping(let reason) = $0 { reason } else { nil } } } }
}

func subscribe(_ client: AgentClient, after: Int64?) async throws -> (AgentSnapshot, EventLog) {
    let log = EventLog()
    client.onEvent { log.append($0) }
    let reply = try await offPool { try client.request(.subscribe(after: after)) }
    guard case .subscribed(let snapshot) = reply else { throw AgentError("not subscribed: \(reply)") }
    return (snapshot, log)
}

func enqueue(_ client: AgentClient, _ paths: [String], url: String) async throws -> [UploadID] {
    let items = try paths.map { path in
        EnqueueItem(request: try UploadRequest.forPath(path, url: url), settings: TransportSettings(), origin: "test")
    }
    let reply = try await offPool { try client.request(.enqueue(items: EnqueueBatch(items))) }
    guard case .enqueued(let results) = reply else { throw AgentError("not enqueued: \(reply)") }
    return results.compactMap { if case .queued(let upload) = $0 { upload.id } else { nil } }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct AgentTests {
    @Test func twoClientsAttachedAtOnceSeeTheSameEvents() async throws {
        let receiver = try await ReceiverHarness.start()
        let running = try await RunningAgent.start(root: receiver.root)
        let a = try await running.connect("a")
        let b = try await running.connect("b")
        let (_, logA) = try await subscribe(a, after: nil)
        let (_, logB) = try await subscribe(b, after: nil)
        let files = try [("one.png", 2_000_000), ("two.png", 10)].map { try TestFiles.writeImage(at: receiver.root + "/" + $0.0, size: Int64($0.1)) }
        let ids = try await enqueue(a, files, url: receiver.url)
        #expect(ids.count == 2)
        try await running.waitFinished(ids)
        for _ in 0..<100 where logA.finishedCount < 2 || logB.finishedCount < 2 {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(logA.finishedCount == 2)
        #expect(logA.logged.map(\.seq) == logB.logged.map(\.seq))
        #expect(logA.logged.map(\.event) == logB.logged.map(\.event))
        // What the journal keeps of finished uploads (their finishes) is what clients saw live,
        // under the same numbers.
        let kept = try running.journal.entries(after: 0)
        let seenLive = logA.logged.filter { entry in kept.contains { $0.seq == entry.seq } }
        #expect(kept.map(\.seq) == seenLive.map(\.seq))
        #expect(kept.map(\.event) == seenLive.map(\.event))
        #expect(kept.filter { if case .finished = $0.event { true } else { false } }.count == 2)
        #expect(receiver.storedNames() == ["one.png", "two.png"])
        a.close()
        b.close()
        await running.stop()
        await receiver.cleanUp()
    }

    /// A subscribed client hears why the agent stops before its connection closes, so a monitor
    /// does not start again an agent the user stopped.
    @Test func subscribersAreToldTheAgentIsStoppingBeforeTheyAreCut() async throws {
        let root = TestFiles.makeTemporaryDirectory("agent-stopping")
        let running = try await RunningAgent.start(root: root)
        let watcher = try await running.connect("monitor")
        let closed = NIOLockedValueBox(false)
        watcher.onClose { closed.withLockedValue { $0 = true } }
        let (_, log) = try await subscribe(watcher, after: nil)
        let stopper = try await running.connect("agent stop")
        let reply = try await offPool { try stopper.request(.stop) }
        guard case .ok = reply else {
            Issue.record("stop was not accepted: \(reply)")
            return
        }
        await running.stop()
        #expect(try await eventually { closed.withLockedValue { $0 } })
        #expect(log.stops == ["asked to stop"])
        stopper.close()
        try? FileManager.default.removeItem(atPath: root)
    }

    @Test func aClientComingBackGetsExactlyWhatItMissed() async throws {
        let receiver = try await ReceiverHarness.start()
        let running = try await RunningAgent.start(root: receiver.root)
        let first = try await running.connect("monitor")
        let (snapshot, _) = try await subscribe(first, after: 0)
        #expect(snapshot.lastSequence == 0 && snapshot.missed.isEmpty && snapshot.uploads.isEmpty)
        let seen = snapshot.lastSequence
        first.close()

        let sender = try await running.connect("send")
        let files = try ["a.png", "b.png", "c.png"].map { try TestFiles.writeImage(at: receiver.root + "/" + $0, size: 5000) }
        let ids = try await enqueue(sender, files, url: receiver.url)
        try await running.waitFinished(ids)
        sender.close()

        let back = try await running.connect("monitor again")
        let (missed, _) = try await subscribe(back, after: seen)
        #expect(missed.missed.map(\.seq) == (try running.journal.entries(after: seen)).map(\.seq))
        #expect(missed.missed.map(\.event) == (try running.journal.entries(after: seen)).map(\.event))
        #expect(missed.missed.last?.seq == missed.lastSequence)
        let finished = missed.missed.compactMap { if case .finished(let id, let outcome) = $0.event { (id, outcome) } else { nil } }
        #expect(finished.map(\.0).sorted() == ids)
        #expect(finished.allSatisfy { $0.1 == .answered(status: 200) })
        #expect(missed.uploads.map(\.id) == ids)
        #expect(missed.uploads.allSatisfy { $0.state == .succeeded && $0.response?.status == 200 })
        back.close()

        let upToDate = try await running.connect("monitor once more")
        let (nothing, _) = try await subscribe(upToDate, after: missed.lastSequence)
        #expect(nothing.missed.isEmpty)
        upToDate.close()
        await running.stop()
        await receiver.cleanUp()
    }

    @Test func refusedFilesAreNamedAndNothingElseIsLost() async throws {
        let receiver = try await ReceiverHarness.start()
        let running = try await RunningAgent.start(root: receiver.root)
        let client = try await running.connect("send")
        let good = try TestFiles.writeImage(at: receiver.root + "/good.png", size: 100)
        let text = receiver.root + "/notes.txt"
        try Data("plain words".utf8).write(to: URL(fileURLWithPath: text))
        let items = [
            EnqueueItem(request: try UploadRequest.forPath(good, url: receiver.url), settings: TransportSettings(), origin: "test"),
            EnqueueItem(request: try UploadRequest.forPath(text, url: receiver.url), settings: TransportSettings(), origin: "test"),
            EnqueueItem(request: try UploadRequest.forPath("relative.png", url: receiver.url), settings: TransportSettings(), origin: "test"),
        ]
        let reply = try await offPool { try client.request(.enqueue(items: EnqueueBatch(items))) }
        guard case .enqueued(let results) = reply, results.count == 3 else {
            Issue.record("unexpected reply \(reply)")
            return
        }
        guard case .queued(let queued) = results[0] else {
            Issue.record("good.png was refused: \(results[0])")
            return
        }
        guard case .refused(_, let reason) = results[1] else {
            Issue.record("notes.txt was queued")
            return
        }
        #expect(reason.contains("not an image"))
        guard case .refused(_, let relative) = results[2] else {
            Issue.record("a relative path was queued")
            return
        }
        #expect(relative.contains("absolute path"))
        try await running.waitFinished([queued.id])
        #expect(try running.journal.snapshots().map(\.name) == ["good.png"])
        client.close()
        await running.stop()
        await receiver.cleanUp()
    }

    @Test func anUploadInterruptedByACrashIsSentAgainAndReportedOnce() async throws {
        let receiver = try await ReceiverHarness.start()
        let root = receiver.root
        let file = try TestFiles.writeImage(at: root + "/photo.png", size: 3_000_000)
        // The journal as a killed agent left it: the upload was sending.
        let paths = StatePaths(stateDirectory: root + "/state", runtimeDirectory: root + "/run")
        try paths.prepare()
        do {
            let journal = try Journal(path: paths.journal)
            let fingerprint = try #require(FileFingerprint.of(path: file))
            let id = try journal.add(
                [
                    NewUpload(
                        request: try UploadRequest.forPath(file, url: receiver.url), fingerprint: fingerprint,
                        settings: TransportSettings(), origin: "test")
                ], at: Date())[0].id
            try journal.record(.queued(id, name: "photo.png", totalBytes: fingerprint.size), at: Date())
            try journal.record(.started(id, attempt: 1, url: receiver.url, totalBytes: fingerprint.size + 200), at: Date())
            try journal.checkpoint(id, bytesSent: 1_000_000, expected: fingerprint.size + 200, at: Date())
        }
        let running = try await RunningAgent.start(root: root)
        let id = UploadID(1)
        try await running.waitFinished([id])
        let row = try #require(try running.journal.snapshot(id))
        #expect(row.state == .succeeded)
        #expect(row.attempts == 2)
        let finished = try running.journal.entries(after: 0).filter { if case .finished = $0.event { true } else { false } }
        #expect(finished.count == 1)
        #expect(TestFiles.sameContents(file, receiver.directory + "/photo.png"))
        await running.stop()
        await receiver.cleanUp()
    }

    @Test func aFileChangedSinceItWasQueuedFailsInsteadOfSendingOtherBytes() async throws {
        let receiver = try await ReceiverHarness.start()
        let file = try TestFiles.writeImage(at: receiver.root + "/photo.png", size: 10_000)
        let fingerprint = try #require(FileFingerprint.of(path: file))
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.seekToEnd()
        handle.write(Data(repeating: 7, count: 10))
        try handle.close()

        var request = try UploadRequest.forPath(file, url: receiver.url)
        request.expectedFile = fingerprint
        let transport = try HTTPUploadTransport()
        let result = await transport.perform(request, observer: AttemptObserver())
        try await transport.shutdown()
        guard case .failed(let failure) = result.outcome else {
            Issue.record("a changed file was sent: \(result.outcome)")
            return
        }
        #expect(failure.kind == .fileError)
        #expect(failure.message.contains("changed since it was queued (size 10000 → 10010 bytes)"))
        #expect(receiver.storedNames().isEmpty)

        // Same size, new modification time: refused too.
        let touched = FileFingerprint(size: 10_010, modificationNanoseconds: 1)
        #expect(touched.change(to: try #require(FileFingerprint.of(path: file)))?.contains("modified since it was queued") == true)
        await receiver.cleanUp()
    }

    @Test func anotherUserIsRefusedOnTheSocket() async throws {
        // Needs root to act as another user, and a python another user may run (not a pyenv shim).
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
        else { return }
        let root = TestFiles.makeTemporaryDirectory("agent-peer")
        let running = try await RunningAgent.start(root: root)
        var st = stat()
        #expect(stat(running.paths.socket, &st) == 0 && st.st_mode & 0o777 == 0o600)
        // Open the way to the socket, so only the peer check stands between nobody and the agent.
        chmod(root, 0o755)
        chmod(running.paths.runtimeDirectory, 0o777)
        chmod(running.paths.socket, 0o777)
        let script = """
            import socket, json
            s = socket.socket(socket.AF_UNIX)
            s.connect("\(running.paths.socket)")
            try:
                s.sendall(b'{"id":1,"request":{"hello":{"version":1,"client":"intruder"}}}\\n')
            except BrokenPipeError:
                pass  # refused before the hello was even read: the refusal is still there to read
            print(s.makefile().readline().strip())
            """
        let output = try await offPool { () -> String in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = out
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        #expect(output.contains("connection refused: uid 65534"))
        #expect(output.contains("is not the agent's user (uid 0)"))
        // The same request from this user is answered.
        let client = try await running.connect("owner")
        #expect(client.agentPID == getpid())
        client.close()
        await running.stop()
    }

    /// `agent config` reaches a running agent: the new concurrency starts waiting uploads at
    /// once, the total rate holds every upload together, status reports both, bad ones are refused.
    @Test func newSettingsTakeEffectAtOnceInTheRunningAgent() async throws {
        let root = TestFiles.makeTemporaryDirectory("agent-config")
        let receiver = try await ReceiverHarness.start()
        let running = try await RunningAgent.start(root: root, concurrency: 1)
        let client = try await running.connect("test")
        defer { client.close() }

        let settings = AgentSettings(concurrency: 3, rateLimit: 100_000)
        let reply = try await offPool { try client.request(.configure(settings)) }
        guard case .configured(let applied) = reply else {
            Issue.record("not configured: \(reply)")
            return
        }
        #expect(applied == settings)
        guard case .status(let status) = try await offPool({ try client.request(.status) }) else {
            Issue.record("no status")
            return
        }
        #expect(status.settings == settings)

        // Two files of 100 kB at 100 kB/s for both together: about 2 s however fast the
        // machine (a lower bound, which load cannot break); alone, each would take 1 s.
        let a = try TestFiles.writeImage(at: root + "/a.png", size: 100_000)
        let b = try TestFiles.writeImage(at: root + "/b.png", size: 100_000)
        let began = ContinuousClock.now
        let ids = try await enqueue(client, [a, b], url: receiver.url)
        try await running.waitFinished(ids)
        let took = began.duration(to: .now)
        #expect(took >= .milliseconds(1800), "two uploads under one 100 kB/s limit took \(took)")
        let records = try ids.compactMap { try running.journal.snapshot($0) }
        #expect(records.allSatisfy { $0.outcome == .answered(status: 200) })
        // Both ran at the same time (concurrency 3, not the 1 the agent started with).
        if let first = records.compactMap(\.finishedAt).min() {
            #expect(records.allSatisfy { ($0.startedAt ?? .distantFuture) < first }, "\(records.map { ($0.startedAt, $0.finishedAt) })")
        }

        let refused = try await offPool { try client.request(.configure(AgentSettings(concurrency: 0))) }
        guard case .error(let message) = refused else {
            Issue.record("accepted concurrency 0: \(refused)")
            return
        }
        #expect(message.contains("from 1 to 64"))
        await running.stop()
        await receiver.stop()
    }

    /// A long list goes to the agent in requests of `enqueueBatch` files, answered one by one in
    /// order, so neither end holds the whole list's records and their JSON at once.
    @Test func aLongListIsQueuedInRequestsOfABatchEachInOrder() async throws {
        let root = TestFiles.makeTemporaryDirectory("agent-batches")
        let running = try await RunningAgent.start(root: root, concurrency: 1)
        let client = try await running.connect("send")
        let count = AgentClient.enqueueBatch * 2 + 1
        var items: [EnqueueItem] = []
        for index in 0..<count {
            let path = try TestFiles.writeImage(at: root + "/p\(index).png", size: 100)
            items.append(EnqueueItem(request: try UploadRequest.forPath(path, url: "http://127.0.0.1:9/photo"), settings: TransportSettings(), origin: "test"))
        }
        // One that the agent refuses, in the second request: its place in the answers is kept.
        items[AgentClient.enqueueBatch + 3] = EnqueueItem(
            request: UploadRequest(source: .file(path: "relative.png"), url: "http://127.0.0.1:9/photo", uploadName: "relative.png"),
            settings: TransportSettings(), origin: "test")
        let batches = NIOLockedValueBox<[[EnqueueResult]]>([])
        let sent = items
        let unexpected = try await offPool { try client.enqueue(sent) { answered in batches.withLockedValue { $0.append(answered) } } }
        #expect(unexpected == nil)
        let answered = batches.withLockedValue { $0 }
        #expect(answered.map(\.count) == [AgentClient.enqueueBatch, AgentClient.enqueueBatch, 1])
        let all = answered.flatMap { $0 }
        let queued = all.compactMap { if case .queued(let record) = $0 { record } else { nil } }
        #expect(queued.count == count - 1)
        #expect(queued.map(\.name) == items.enumerated().filter { $0.offset != AgentClient.enqueueBatch + 3 }.map { "p\($0.offset).png" })
        #expect(zip(queued, queued.dropFirst()).allSatisfy { $0.id.rawValue < $1.id.rawValue })
        if case .refused(let path, let reason) = all[AgentClient.enqueueBatch + 3] {
            #expect(path == "relative.png")
            #expect(reason.contains("absolute path"))
        } else {
            Issue.record("the relative path was not refused in its place: \(all[AgentClient.enqueueBatch + 3])")
        }
        client.close()
        await running.stop()
    }

    /// A client that prints a line per file asks for brief answers: each queued file's id, name,
    /// path and shown URL, in order, the refusals as before; the uploads are the same.
    @Test func briefAnswersNameEachQueuedUploadAndKeepRefusalsInPlace() async throws {
        let root = TestFiles.makeTemporaryDirectory("agent-brief")
        let running = try await RunningAgent.start(root: root, concurrency: 1)
        let client = try await running.connect("send")
        var items: [EnqueueItem] = []
        for index in 0..<3 {
            let path = try TestFiles.writeImage(at: root + "/b\(index).png", size: 100)
            items.append(
                EnqueueItem(
                    request: try UploadRequest.forPath(path, url: "http://user:secret@127.0.0.1:9/photo"), settings: TransportSettings(), origin: "test"))
        }
        items.insert(
            EnqueueItem(
                request: UploadRequest(source: .file(path: "relative.png"), url: "http://127.0.0.1:9/photo", uploadName: "relative.png"),
                settings: TransportSettings(), origin: "test"), at: 1)
        let answers = NIOLockedValueBox<[EnqueueResult]>([])
        let sent = items
        let unexpected = try await offPool { try client.enqueue(sent, brief: true) { answered in answers.withLockedValue { $0 += answered } } }
        #expect(unexpected == nil)
        let all = answers.withLockedValue { $0 }
        let accepted = all.compactMap { if case .accepted(let upload) = $0 { upload } else { nil } }
        #expect(accepted.map(\.name) == ["b0.png", "b1.png", "b2.png"])
        #expect(accepted.map(\.path) == (0..<3).map { root + "/b\($0).png" })
        #expect(accepted.allSatisfy { !$0.url.contains("secret") }, "\(accepted.map(\.url))")
        #expect(zip(accepted, accepted.dropFirst()).allSatisfy { $0.id.rawValue < $1.id.rawValue })
        if all.count == 4, case .refused(let path, _) = all[1] { #expect(path == "relative.png") } else { Issue.record("\(all)") }
        // The same uploads the full answer would have named.
        let records = try accepted.map { try running.journal.snapshot($0.id) }
        #expect(records.map { $0.map(QueuedUpload.init) } == accepted.map { Optional($0) })
        client.close()
        await running.stop()
    }

    /// More uploads handed over than the queue's window: the queue holds the window, the rest
    /// wait as ids; one cancelled while it waits ends "cancelled before it started" at once, and
    /// a restart reads the waiting ones back in order.
    @Test func uploadsBeyondTheWindowWaitAsIdsAndCanBeCancelledThere() async throws {
        let root = TestFiles.makeTemporaryDirectory("agent-backlog")
        // A server that takes the connection and never answers: the first upload holds the one slot.
        let silent = try RawServer { $0.hold(seconds: 20) }
        defer { silent.stop() }
        let running = try await RunningAgent.start(root: root, concurrency: 1)
        let client = try await running.connect("send")
        let window = await running.agent.backlog.window
        var items: [EnqueueItem] = []
        for index in 0..<window + 40 {
            let path = try TestFiles.writeImage(at: root + "/p\(index).png", size: 100)
            items.append(EnqueueItem(request: try UploadRequest.forPath(path, url: silent.url), settings: TransportSettings(), origin: "test"))
        }
        let sent = items
        let unexpected = try await offPool { try client.enqueue(sent) { _ in } }
        #expect(unexpected == nil)
        #expect(await running.agent.queue.held == window)
        #expect(await running.agent.backlog.waitingCount == 40)
        let last = UploadID(window + 40)
        let reply = await running.agent.cancel(last)
        guard case .ok = reply else {
            Issue.record("the cancel was refused: \(reply)")
            return
        }
        try await running.waitFinished([last])
        let cancelled = try #require(try running.journal.snapshot(last))
        #expect(cancelled.failure == UploadFailure(.cancelled, "cancelled before it started"))
        #expect(await running.agent.backlog.waitingCount == 39)
        let unknown = await running.agent.cancel(UploadID(100_000))
        if case .error(let message) = unknown { #expect(message == "#100000 is not queued or running") } else { Issue.record("\(unknown)") }
        client.close()
        await running.stop()
        // The next start has them all again, in the order they were handed over.
        let waiting = try running.journal.recoverQueue(at: Date())
        #expect(waiting == (1..<window + 40).map { UploadID($0) })
    }
}
