import Foundation
import Glibc
import Testing
import UploadCore
import UploadJournal
import UploadTesting

/// The monitor with the background agent, in a real terminal: quit mid-batch and come back,
/// and `kill -9` of the agent under an open monitor.
@Suite(.serialized, .timeLimit(.minutes(5))) struct MonitorAgentTmuxTests {
    struct Setup {
        let receiver: ReceiverHarness
        let root: String
        let pictures: String
        let big: String
        let small: String
        var env: String { "XDG_STATE_HOME='\(root)/state' XDG_RUNTIME_DIR='\(root)/run'" }
        var journal: Journal { get throws { try Journal(path: root + "/state/uploadmon/journal.sqlite") } }
        var agentPID: Int32? { AgentCLITests.agentPID(root) }

        static func make(bigSize: Int64) async throws -> Setup {
            let receiver = try await ReceiverHarness.start()
            let pictures = receiver.root + "/pictures"
            try FileManager.default.createDirectory(atPath: pictures, withIntermediateDirectories: true)
            let big = try TestFiles.writeImage(at: pictures + "/big.png", size: bigSize)
            let small = try TestFiles.writeImage(at: pictures + "/small.png", size: 2000)
            return Setup(receiver: receiver, root: receiver.root, pictures: pictures, big: big, small: small)
        }

        func monitor(_ extra: String = "") async throws -> TmuxSession {
            try await TmuxSession.start("\(env) \(CLIRun.binary) '\(pictures)' --to \(receiver.url) --notify none \(extra)", width: 120, height: 40)
        }

        func markBothAndQueue(_ tmux: TmuxSession) async throws {
            try await tmux.waitFor { $0.contains("small.png") }
            try await tmux.send("Space")
            try await tmux.send("j")
            try await tmux.send("Space")
            try await tmux.waitFor { $0.contains("2 marked") }
            try await tmux.send("u")
        }

        func tearDown() async {
            _ = try? await CLIRun.run(["agent", "stop"], environment: AgentCLITests.environment(root))
            if let pid = agentPID { kill(pid, SIGKILL) }
            await receiver.cleanUp()
        }
    }

    @Test func quitMidBatchTheAgentFinishesAndTheNextMonitorSaysWhatHappened() async throws {
        // About 10 s of sending: enough that big.png is still under way when q arrives, even
        // on a loaded machine where the screen polling lags.
        let setup = try await Setup.make(bigSize: 20_000_000)
        let first = try await setup.monitor("--limit-rate 2MB")
        try await setup.markBothAndQueue(first)
        try await first.waitFor { $0.contains("✓ small.png → 200") }
        // Quitting does not ask and does not cancel: the upload belongs to the agent.
        try await first.send("q")
        let after = try await first.waitFor { $0.contains("EXITED") }
        first.kill()
        #expect(after.contains("EXITED 0"))
        #expect(after.contains("1 upload(s) continue in the background"))
        #expect(try setup.journal.snapshot(UploadID(1))?.state.isFinished == false)

        try await AgentCLITests.waitFor("the agent to finish big.png") {
            try setup.journal.snapshot(UploadID(1))?.state == .succeeded
        }
        let second = try await setup.monitor()
        defer { second.kill() }
        let screen = try await second.waitFor { $0.contains("While you were away") }
        #expect(screen.contains("While you were away: 1 finished (1 ok, 0 failed)"), "screen:\n\(screen)")
        #expect(screen.contains("✓ big.png → 200"))
        // The first monitor saw small.png finish: it is not news.
        #expect(!screen.contains("✓ small.png → 200"))
        #expect(screen.components(separatedBy: "✓ big.png → 200").count == 2)
        try await second.send("q")
        try await second.waitFor { $0.contains("EXITED 0") }
        #expect(TestFiles.sameContents(setup.big, setup.receiver.directory + "/big.png"))

        // A third monitor has nothing to report.
        let third = try await setup.monitor()
        defer { third.kill() }
        let quiet = try await third.waitFor { $0.contains("big.png") && $0.contains("small.png") && $0.contains("OK 200") }
        #expect(!quiet.contains("While you were away"))
        try await third.send("q")
        await setup.tearDown()
    }

    @Test func killNineOfTheAgentUnderAnOpenMonitorResumesAndReportsOnce() async throws {
        let setup = try await Setup.make(bigSize: 60_000_000)
        let tmux = try await setup.monitor("--limit-rate 15MB")
        defer { tmux.kill() }
        try await setup.markBothAndQueue(tmux)
        try await AgentCLITests.waitFor("big.png to be under way") {
            (try setup.journal.snapshot(UploadID(1))?.bytesSent ?? 0) > 0
        }
        let firstAgent = try #require(setup.agentPID)
        kill(firstAgent, SIGKILL)
        try await tmux.waitFor { $0.contains("Lost the agent") }
        let screen = try await tmux.waitFor(timeout: 60) { $0.contains("✓ big.png → 200") }
        #expect(screen.contains("Reattached to the agent"), "screen:\n\(screen)")
        #expect(screen.components(separatedBy: "✓ big.png → 200").count == 2)
        #expect(setup.agentPID != firstAgent)
        let finishes = try setup.journal.entries(after: 0).filter {
            if case .finished(let id, _) = $0.event { id == UploadID(1) } else { false }
        }
        #expect(finishes.count == 1)
        #expect(TestFiles.sameContents(setup.big, setup.receiver.directory + "/big.png"))
        try await tmux.send("q")
        try await tmux.waitFor { $0.contains("EXITED 0") }
        await setup.tearDown()
    }

    @Test func filesAWatchQueuesShowUpInTheMonitorAndItsJobsAreListed() async throws {
        let setup = try await Setup.make(bigSize: 3000)
        let camera = setup.root + "/camera"
        try FileManager.default.createDirectory(atPath: camera, withIntermediateDirectories: true)
        let tmux = try await setup.monitor()
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("small.png") }
        let watched = try await CLIRun.run(["watch", camera, "--to", setup.receiver.url, "--every", "1s"], environment: AgentCLITests.environment(setup.root))
        #expect(watched.status == 0, "\(watched.stderr)")
        try await tmux.waitFor { $0.contains("watching 1 folder") }
        try TestFiles.writeImage(at: camera + "/shot.jpg", size: 5000)
        let screen = try await tmux.waitFor { $0.contains("✓ shot.jpg → 200") }
        #expect(screen.contains("✓ shot.jpg → 200"), "screen:\n\(screen)")
        try await tmux.send("J")
        let jobs = try await tmux.waitFor { $0.contains("Scheduled jobs") }
        #expect(jobs.contains("#2 watch \(camera) → \(setup.receiver.url) (1 queued)"), "screen:\n\(jobs)")
        #expect(jobs.contains("every 1s · next"))
        #expect(jobs.contains("#1 maintenance, keeps 7d of history"))
        try await tmux.send("Escape")
        try await tmux.send("q")
        try await tmux.waitFor { $0.contains("EXITED 0") }
        await setup.tearDown()
    }
}
