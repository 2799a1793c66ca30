import Foundation
import Testing
import UploadTesting

/// The mouse in a real terminal (tmux), as the terminal reports it (xterm's X10 encoding, which
/// curses asks tmux for): a click selects, a double click opens a folder, the wheel scrolls, and
/// --no-mouse leaves clicks alone.
@Suite(.serialized, .timeLimit(.minutes(3))) struct MouseTmuxTests {
    /// A press (or the wheel: button 64 up, 65 down) and its release at a cell (0-based).
    func click(_ tmux: TmuxSession, x: Int, y: Int, button: Int = 0) async throws {
        func event(_ code: Int) -> String {
            "\u{1B}[M" + String(UnicodeScalar(UInt8(32 + code))) + String(UnicodeScalar(UInt8(33 + x))) + String(UnicodeScalar(UInt8(33 + y)))
        }
        try await tmux.send("-l", event(button) + (button == 0 ? event(3) : ""))
    }

    /// Two clicks as a terminal sends them, in one write (a few milliseconds apart at most).
    func doubleClick(_ tmux: TmuxSession, x: Int, y: Int) async throws {
        func event(_ code: Int) -> String {
            "\u{1B}[M" + String(UnicodeScalar(UInt8(32 + code))) + String(UnicodeScalar(UInt8(33 + x))) + String(UnicodeScalar(UInt8(33 + y)))
        }
        try await tmux.send("-l", event(0) + event(3) + event(0) + event(3))
    }

    @Test func clicksSelectAndOpenAndTheWheelScrolls() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let folder = receiver.root + "/photos"
        try FileManager.default.createDirectory(atPath: folder + "/trip", withIntermediateDirectories: true)
        for n in 0..<12 { _ = try TestFiles.writeImage(at: folder + "/img\(n < 10 ? "0" : "")\(n).png", size: 1000) }
        _ = try TestFiles.writeImage(at: folder + "/trip/beach.png", size: 1000)
        let tmux = try await TmuxSession.start("\(CLIRun.binary) '\(folder)' --to \(receiver.url) --notify none --no-agent", width: 100, height: 30)
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("img11.png") }
        // A double click on img03.png (row 5 of the screen: title, frame, trip/, img00…) marks it.
        try await doubleClick(tmux, x: 6, y: 6)
        let marked = try await tmux.waitFor { $0.contains("● img03.png") }
        #expect(marked.contains("● img03.png"), "\(marked)")
        // The wheel down over the list moves the cursor three rows; u queues the marked one only.
        try await click(tmux, x: 6, y: 8, button: 65)
        try await tmux.send("u")
        let sent = try await tmux.waitFor { $0.contains("1 upload finished") }
        #expect(receiver.storedNames() == ["img03.png"], "\(receiver.storedNames()) \(sent)")
        // A double click on the folder opens it.
        try await doubleClick(tmux, x: 6, y: 2)
        let opened = try await tmux.waitFor { $0.contains("beach.png") && $0.contains("photos/trip") }
        #expect(opened.contains("beach.png"), "\(opened)")
        try await tmux.send("q")
        try await tmux.waitFor { $0.contains("EXITED 0") }
    }

    @Test func noMouseLeavesTheClicksAlone() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        try FileManager.default.createDirectory(atPath: receiver.root + "/p/trip", withIntermediateDirectories: true)
        _ = try TestFiles.writeImage(at: receiver.root + "/p/a.png", size: 1000)
        let tmux = try await TmuxSession.start(
            "\(CLIRun.binary) '\(receiver.root)/p' --to \(receiver.url) --notify none --no-agent --no-mouse", width: 100, height: 30)
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("a.png") }
        try await click(tmux, x: 6, y: 2)
        try await click(tmux, x: 6, y: 2)
        try await tmux.send("j")
        try await tmux.send("Space")
        // Nothing opened; the keys still work (the mouse bytes came as keys nobody acts on).
        let screen = try await tmux.waitFor { $0.contains("● a.png") }
        #expect(!screen.contains("p/trip"), "\(screen)")
        try await tmux.send("q")
        try await tmux.waitFor { $0.contains("EXITED 0") }
    }
}
