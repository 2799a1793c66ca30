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

        /// Closes the monitors first (one still open starts a stopped agent again, as it does
        /// after a crash, and that agent would outlive the test), then stops the agent.
        func tearDown(closing monitors: [TmuxSession]) async {
            for monitor in monitors { await monitor.close() }
            _ = try? await CLIRun.run(["agent", "stop"], environment: AgentCLITests.environment(root))
            if let pid = agentPID, kill(pid, 0) == 0 { kill(pid, SIGKILL) }
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
        await setup.tearDown(closing: [first, second, third])
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
        await setup.tearDown(closing: [tmux])
    }

    /// `agent stop` is the user's: the open monitor says so and leaves the agent stopped (it
    /// starts one that died within a second), until files are queued again.
    @Test func anAgentStoppedUnderAnOpenMonitorStaysStoppedUntilFilesAreQueued() async throws {
        let setup = try await Setup.make(bigSize: 3000)
        let tmux = try await setup.monitor()
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("small.png") }
        try await tmux.send("u")
        try await tmux.waitFor { $0.contains("✓ big.png → 200") }
        let first = try #require(setup.agentPID)
        let stop = try await CLIRun.run(["agent", "stop"], environment: AgentCLITests.environment(setup.root))
        #expect(stop.status == 0, "\(stop.stdout) \(stop.stderr)")
        try await tmux.waitFor { $0.contains("The agent stopped (asked to stop)") }
        // Past the second after which a lost agent is started again.
        try await Task.sleep(for: .seconds(3))
        let status = try await CLIRun.run(["status"], environment: AgentCLITests.environment(setup.root))
        #expect(status.stdout.contains("Agent: not running"), "\(status.stdout)")
        #expect(!(try await tmux.screen()).contains("Lost the agent"))
        // Queuing starts it again, and the upload goes.
        try await tmux.send("j")
        try await tmux.send("u")
        let screen = try await tmux.waitFor { $0.contains("✓ small.png → 200") }
        #expect(screen.contains("Reattached to the agent"), "screen:\n\(screen)")
        #expect(setup.agentPID != first)
        try await tmux.send("q")
        try await tmux.waitFor { $0.contains("EXITED 0") }
        await setup.tearDown(closing: [tmux])
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
        await setup.tearDown(closing: [tmux])
    }

    /// A folder of 1,500 non-images, `a`, `*`, `u`, again and again while the pane is resized:
    /// every file is refused with its reason and the monitor stays up. (Each refusal once
    /// nested the backend's event callback two thunks deeper, and the monitor died of a stack
    /// overflow in the third round or so.)
    @Test func queuingALargeFolderOfNonImagesOverAndOverKeepsTheMonitorUp() async throws {
        let setup = try await Setup.make(bigSize: 3000)
        let folder = setup.root + "/binaries"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for n in 1...1500 {
            let bytes = (0..<256).map { UInt8(($0 * 31 + n) & 0xFF) }
            try Data(bytes).write(to: URL(fileURLWithPath: folder + String(format: "/f%04d.bin", n)))
        }
        let tmux = try await TmuxSession.start(
            "\(setup.env) \(CLIRun.binary) '\(folder)' --to \(setup.receiver.url) --notify none", width: 80, height: 24)
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("no images here") }
        try await tmux.send("a")
        try await tmux.waitFor { $0.contains("f0001.bin") }
        func statusLine(_ screen: String) -> String {
            screen.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map(String.init) ?? ""
        }
        let sizes = [(100, 30), (80, 24), (120, 40), (72, 20), (80, 24)]
        for (round, size) in sizes.enumerated() {
            try await tmux.send("*")
            let marked = try await tmux.waitFor { statusLine($0).contains("Marked 1500") || $0.contains("EXITED") }
            #expect(statusLine(marked).contains("Marked 1500"), "round \(round):\n\(marked)")
            try await tmux.send("u")
            let refused = try await tmux.waitFor(timeout: 60) { statusLine($0).contains("f1500.bin not queued") || $0.contains("EXITED") }
            #expect(!refused.contains("EXITED"), "round \(round): the monitor ended:\n\(refused)")
            #expect(statusLine(refused).contains("f1500.bin not queued"), "round \(round):\n\(refused)")
            try await tmux.resize(width: size.0, height: size.1)
        }
        // Wide enough for the whole reason.
        try await tmux.resize(width: 250, height: 30)
        let shown = try await tmux.waitFor { $0.contains("f1500.bin not queued: ") && $0.contains("is not an image") }
        #expect(shown.contains("is not an image"), "screen:\n\(shown)")
        try await tmux.send("q")
        let after = try await tmux.waitFor { $0.contains("EXITED") }
        #expect(after.contains("EXITED 0"), "screen:\n\(after)")
        await setup.tearDown(closing: [tmux])
    }

    /// The monitor dies of a fatal signal: the terminal is given back (main screen, cooked
    /// mode), the screen says where the backtrace is, and the Swift runtime's backtrace is there.
    @Test func aCrashGivesTheTerminalBackAndNamesTheFileWithTheBacktrace() async throws {
        let setup = try await Setup.make(bigSize: 3000)
        // After the monitor: whether the tty was left in raw mode, then its exit status.
        let tmux = try await TmuxSession.start(
            "\(setup.env) \(CLIRun.binary) '\(setup.pictures)' --to \(setup.receiver.url) --notify none; code=$?; "
                + "if stty -a | grep -q -- '-icanon'; then echo TTY RAW; else echo TTY COOKED; fi; (exit $code)",
            width: 120, height: 40)
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("small.png") }
        #expect(try await tmux.alternateScreenOn())
        let shell = try #require(try await tmux.pid())
        let monitor = try #require(Self.child(of: shell), "the monitor's process")
        kill(monitor, SIGSEGV)
        let screen = try await tmux.waitFor(timeout: 60) { $0.contains("EXITED") }
        #expect(screen.contains("EXITED 139"), "screen:\n\(screen)")
        #expect(screen.contains("TTY COOKED"), "screen:\n\(screen)")
        #expect(try await !tmux.alternateScreenOn())
        let report = setup.root + "/state/uploadmon/monitor-crash-\(monitor).txt"
        let flat = screen.replacingOccurrences(of: "\n", with: "")
        #expect(flat.contains("uploadmon crashed; the terminal was given back. The backtrace is in \(report)"), "screen:\n\(screen)")
        let backtrace = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        #expect(backtrace.contains("Program crashed"), "report:\n\(backtrace.prefix(2000))")
        #expect(backtrace.contains("MonitorProgram"), "the loop's thread is in it")
        await setup.tearDown(closing: [tmux])
    }

    /// The process whose parent is `parent` (the pane's shell runs the monitor as its child).
    static func child(of parent: Int32) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == parent { return pid }
        }
        return nil
    }
}
