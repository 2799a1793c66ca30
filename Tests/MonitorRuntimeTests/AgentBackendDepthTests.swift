import Foundation
import Monitor
import MonitorRuntime
import NIOConcurrencyHelpers
import Testing
import UploadAgent
import UploadCore
import UploadJournal
import UploadTesting

/// The monitor's agent backend delivers its thousandth event through the same stack as its
/// first: refusals posted by the backend itself, and events the agent pushes through the
/// connection's handler. (Both once nested their callback one level deeper per event, and the
/// monitor overflowed its stack after queuing a large folder of non-images.)
@Suite(.serialized, .timeLimit(.minutes(3))) struct AgentBackendDepthTests {
    /// What the backend posted, with the stack depth it was posted at.
    final class Posts: Sendable {
        private let box = NIOLockedValueBox<[(event: MonitorEvent, depth: Int)]>([])
        func add(_ event: MonitorEvent) {
            let depth = StackDepth.here()
            box.withLockedValue { $0.append((event, depth)) }
        }
        func depths(_ matching: (MonitorEvent) -> Bool) -> [Int] {
            box.withLockedValue { $0.filter { matching($0.event) }.map(\.depth) }
        }
    }

    struct Running {
        let root: String
        let agent: Agent
        let server: AgentServer
        let backend: AgentBackend
        let posts = Posts()

        static func start(_ label: String) async throws -> Running {
            let root = TestFiles.makeTemporaryDirectory(label)
            let paths = StatePaths(stateDirectory: root + "/state", runtimeDirectory: root + "/run")
            try paths.prepare()
            let agent = try Agent(
                configuration: AgentConfiguration(paths: paths, idleExitSeconds: 0, settings: AgentSettings(concurrency: 4)),
                journal: try Journal(path: paths.journal))
            try await agent.start()
            let server = try AgentServer(agent: agent, path: paths.socket)
            server.start()
            let socket = paths.socket
            let client = try await offPool { try AgentClient.connect(socketPath: socket, client: "monitor") }
            // Port 1 on loopback refuses at once: every upload fails fast, with all its events.
            let uploads = MonitorUploads(url: "http://127.0.0.1:1/photo", field: "photo", formFields: [], headers: [], allowAnyFile: false)
            let backend = AgentBackend(client: client, paths: paths, settings: TransportSettings(), uploads: uploads)
            let running = Running(root: root, agent: agent, server: server, backend: backend)
            backend.start(post: { [posts = running.posts] in posts.add($0) }, now: { EventTime(seconds: 0, clock: "12:00:00", date: Date()) })
            return running
        }

        func stop() async {
            await backend.finish(MonitorState(width: 80, height: 24, endpoint: "", directory: root, home: root))
            server.close()
            await agent.shutdown()
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    static func isRefusal(_ event: MonitorEvent) -> Bool {
        if case .enqueueRefused = event { true } else { false }
    }

    static func isFinish(_ event: MonitorEvent) -> Bool {
        if case .upload(.finished, _) = event { true } else { false }
    }

    @Test func fiveThousandRefusedFilesArePostedThroughTheSameStack() async throws {
        let running = try await Running.start("backend-depth-refused")
        let folder = running.root + "/binaries"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var items: [QueueItem] = []
        for n in 0..<500 {
            let path = folder + "/f\(n).bin"
            try Data((0..<300).map { UInt8(($0 * 7 + n) & 0xFF) }).write(to: URL(fileURLWithPath: path))
            items.append(QueueItem(path: path, uploadName: "f\(n).bin"))
        }
        // `*` and `u` ten times over the same folder: every file refused before it is sent.
        for _ in 0..<10 { running.backend.enqueue(items) }
        #expect(try await eventually { running.posts.depths(Self.isRefusal).count == 5_000 })
        let depths = running.posts.depths(Self.isRefusal)
        #expect(depths.count == 5_000)
        #expect(Set(depths).count == 1, "the refusals went from \(depths.first ?? 0) to \(depths.last ?? 0) frames deep")
        await running.stop()
    }

    @Test func eventsTheAgentPushesReachTheMonitorThroughTheSameStack() async throws {
        let running = try await Running.start("backend-depth-pushed")
        let folder = running.root + "/pictures"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var items: [QueueItem] = []
        for n in 0..<400 {
            let path = try TestFiles.writeImage(at: folder + "/p\(n).png", size: 600)
            items.append(QueueItem(path: path, uploadName: "p\(n).png"))
        }
        // Two batches: the second's events come after the first's thousand or so.
        for batch in [items[..<200], items[200...]] {
            running.backend.enqueue(Array(batch))
            let ended = try await eventually { running.posts.depths(Self.isFinish).count >= batch.endIndex }
            #expect(ended, "every upload of the batch fails against a closed port")
        }
        let depths = running.posts.depths(Self.isFinish)
        #expect(depths.count == 400)
        #expect(Set(depths).count == 1, "the pushed events went from \(depths.first ?? 0) to \(depths.last ?? 0) frames deep")
        await running.stop()
    }

    /// Quitting right after queuing a large folder: every file is handed to the agent before
    /// the monitor goes (it had handed 10,500 of 20,000 when `q` closed the connection, and the
    /// rest were lost).
    @Test func quittingAtOnceStillHandsEveryQueuedFileToTheAgent() async throws {
        let running = try await Running.start("backend-quit-handover")
        let folder = running.root + "/roll"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let items = try (0..<3_000).map { n in
            QueueItem(path: try TestFiles.writeImage(at: folder + "/p\(n).png", size: 300), uploadName: "p\(n).png")
        }
        running.backend.enqueue(items)
        #expect(running.backend.filesBeingHandedOver > 0)
        await running.backend.finish(MonitorState(width: 80, height: 24, endpoint: "", directory: running.root, home: running.root))
        #expect(running.backend.filesBeingHandedOver == 0)
        let journal = try Journal(path: running.root + "/state/journal.sqlite")
        #expect(try journal.snapshot(UploadID(3_000))?.name == "p2999.png")
        running.server.close()
        await running.agent.shutdown()
        try? FileManager.default.removeItem(atPath: running.root)
    }
}
