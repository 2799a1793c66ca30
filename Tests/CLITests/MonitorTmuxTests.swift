import Foundation
import Testing
import UploadTesting

/// The real binary in a real terminal (tmux) against an in-process receiver.
@Suite(.serialized, .timeLimit(.minutes(5))) struct MonitorTmuxTests {
    @Test func navigateMarkTwoImagesAndWatchThemArrive() async throws {
        let receiver = try await ReceiverHarness.start()
        let pictures = receiver.root + "/pictures"
        try FileManager.default.createDirectory(atPath: pictures + "/trip", withIntermediateDirectories: true)
        let first = try TestFiles.writeImage(at: pictures + "/trip/beach.png", size: 1_500_000)
        let second = try TestFiles.writeImage(at: pictures + "/trip/夕焼け.png", size: 700_000)
        _ = try TestFiles.writeImage(at: pictures + "/trip/middle.png", size: 1000)
        let tmux = try await TmuxSession.start("\(CLIRun.binary) '\(pictures)' --to \(receiver.url) --notify none --no-agent")
        defer { tmux.kill() }

        try await tmux.waitFor { $0.contains("trip/") }
        #expect(try await tmux.alternateScreenOn())
        try await tmux.send("Enter")
        try await tmux.waitFor { $0.contains("beach.png") }
        try await tmux.send("Space")
        try await tmux.send("j")
        try await tmux.send("Space")
        try await tmux.waitFor { $0.contains("2 marked") }
        try await tmux.send("u")
        let screen = try await tmux.waitFor { $0.contains("All 2 uploads finished: 2 ok, 0 failed") }

        #expect(screen.contains("All 2 uploads finished: 2 ok, 0 failed"), "screen:\n\(screen)")
        let rows = screen.split(separator: "\n").filter { $0.contains("✓ beach.png") || $0.contains("✓ 夕焼け.png") }
        #expect(rows.filter { $0.contains("100%") }.count >= 2, "both rows at 100%:\n\(screen)")
        #expect(screen.contains("OK 200") && !screen.contains("OK 200 OK"))
        #expect(screen.contains(#""filename": "beach.png""#) || screen.contains(#""filename": "夕焼け.png""#))
        #expect(screen.contains("✓ beach.png → 200"))
        #expect(screen.contains("✓ 夕焼け.png → 200"))
        #expect(TestFiles.sameContents(first, receiver.directory + "/beach.png"))
        #expect(TestFiles.sameContents(second, receiver.directory + "/夕焼け.png"))
        #expect(receiver.storedNames().sorted() == ["beach.png", "夕焼け.png"])

        try await tmux.send("q")
        let after = try await tmux.waitFor { $0.contains("EXITED") }
        #expect(after.contains("EXITED 0"))
        #expect(try await tmux.alternateScreenOn() == false)
        await receiver.cleanUp()
    }

    @Test func aWrongEndpointTurnsThePanelRed() async throws {
        let receiver = try await ReceiverHarness.start()
        let file = try TestFiles.writeImage(at: receiver.root + "/cat.png", size: 20_000)
        let url = receiver.url.replacingOccurrences(of: "/photo", with: "/nope")
        let tmux = try await TmuxSession.start("NO_COLOR=1 \(CLIRun.binary) '\(receiver.root)' --to \(url) --notify none --no-agent", width: 80, height: 24)
        defer { tmux.kill() }

        try await tmux.waitFor { $0.contains("cat.png") }
        try await tmux.send("G")
        try await tmux.send("u")
        let screen = try await tmux.waitFor { $0.contains("All 1 upload finished") }
        #expect(screen.contains("FAILED 404 Not Found"), "screen:\n\(screen)")
        #expect(screen.contains("✗ cat.png → 404 Not Found"))
        #expect(receiver.storedNames().isEmpty)
        _ = file

        // Resizing redraws at once, down to a size where it can only say so, and back.
        try await tmux.resize(width: 20, height: 6)
        let tiny = try await tmux.waitFor(timeout: 10) { $0.contains("too small") }
        #expect(tiny.contains("Terminal too small"), "screen:\n\(tiny)")
        try await tmux.resize(width: 50, height: 14)
        let narrow = try await tmux.waitFor(timeout: 10) { $0.contains("FAILED 404") }
        #expect(narrow.contains("FAILED 404"), "screen:\n\(narrow)")
        try await tmux.send("q")
        #expect(try await tmux.waitFor { $0.contains("EXITED") }.contains("EXITED 0"))
        await receiver.cleanUp()
    }

    @Test func quitAsksWhileUploadingAndSignalsRestoreTheTerminal() async throws {
        let receiver = try await ReceiverHarness.start()
        _ = try TestFiles.writeImage(at: receiver.root + "/big.png", size: 50_000_000)
        let tmux = try await TmuxSession.start(
            "\(CLIRun.binary) '\(receiver.root)' --to \(receiver.url) --limit-rate 2MB --notify none --no-agent", width: 100, height: 30)
        defer { tmux.kill() }

        try await tmux.waitFor { $0.contains("big.png") }
        try await tmux.send("G")
        try await tmux.send("u")
        try await tmux.waitFor { $0.contains("↑ big.png") }
        try await tmux.send("q")
        let asked = try await tmux.waitFor { $0.contains("Quit and cancel it?") }
        #expect(asked.contains("1 upload is not finished."))
        try await tmux.send("n")
        try await tmux.send("C-c")
        try await tmux.waitFor { $0.contains("Quit and cancel it?") }
        try await tmux.send("Escape")
        try await tmux.waitFor { !$0.contains("Quit and cancel it?") }

        // SIGTERM while uploading: the monitor ends and gives the terminal back.
        let shell = try #require(try await tmux.pid())
        _ = try await offPool { () -> Int32 in
            let pgrep = Process()
            pgrep.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            pgrep.arguments = ["pkill", "-TERM", "-P", "\(shell)", "uploadmon"]
            try pgrep.run()
            pgrep.waitUntilExit()
            return pgrep.terminationStatus
        }
        let after = try await tmux.waitFor { $0.contains("EXITED") }
        #expect(after.contains("EXITED 0"), "screen:\n\(after)")
        #expect(try await tmux.alternateScreenOn() == false)
        await receiver.cleanUp()
    }
}

/// The README's first command, and the refusals around the monitor.
@Suite(.serialized, .timeLimit(.minutes(5))) struct DemoCommandTests {
    @Test func demoOpensTheMonitorAndShowsGreenAndRed() async throws {
        let dir = TestFiles.makeTemporaryDirectory("demo")
        let tmux = try await TmuxSession.start("\(CLIRun.binary) demo --dir '\(dir)' --big-mb 3 --rate-mb 50 --notify none")
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("mountain-large.png") }
        try await tmux.send("*")
        try await tmux.send("u")
        let screen = try await tmux.waitFor { $0.contains("All 5 uploads finished") }
        #expect(screen.contains("All 5 uploads finished: 4 ok, 1 failed"), "screen:\n\(screen)")
        #expect(screen.contains("✗ notes.jpg → 415 Unsupported Media Type"))
        #expect(screen.contains("✓ 夕焼け.png → 200"))
        try await tmux.send("q")
        let after = try await tmux.waitFor { $0.contains("EXITED") }
        #expect(after.contains("EXITED 0"))
        #expect(after.contains("Receiver stored 4 files"))
        try? FileManager.default.removeItem(atPath: dir)
    }

    @Test func headlessDemoReusesItsSamples() async throws {
        let dir = TestFiles.makeTemporaryDirectory("demo")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try await CLIRun.run(["demo", "--headless", "--dir", dir, "--big-mb", "2", "--rate-mb", "100"])
        #expect(first.status == 0)
        #expect(first.stdout.contains("all 6 uploads finished: 5 ok, 1 failed"), "\(first.stdout)")
        let big = dir + "/samples/mountain-large.png"
        let written = try FileManager.default.attributesOfItem(atPath: big)[.modificationDate] as? Date
        let second = try await CLIRun.run(["demo", "--headless", "--dir", dir, "--big-mb", "2", "--rate-mb", "100"])
        #expect(second.status == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: big)[.modificationDate] as? Date == written)
    }

    @Test func theMonitorNeedsATerminalAndADirectory() async throws {
        let noTTY = try await CLIRun.run(["/tmp", "--to", "http://127.0.0.1:9/photo"])
        #expect(noTTY.status == 64)
        #expect(noTTY.stderr.contains("the monitor needs a terminal; use 'uploadmon send' in scripts and pipes"))
        let demo = try await CLIRun.run(["demo"])
        #expect(demo.stderr.contains("use --headless in scripts"))
        let missing = try await CLIRun.run(["/no/such/dir", "--to", "http://127.0.0.1:9/photo"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("'/no/such/dir' does not exist"))
    }
}
