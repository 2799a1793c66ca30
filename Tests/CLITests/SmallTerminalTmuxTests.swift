import Foundation
import Testing
import UploadTesting

/// The monitor in a small terminal, in tmux as a person has it: help and quit in the legend at
/// 80 and 60 columns, a message beside them, and the help scrolled to its last line.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SmallTerminalTmuxTests {
    @Test func helpAndQuitStayInSightAndTheHelpScrolls() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        _ = try TestFiles.writeImage(at: receiver.root + "/cat.png", size: 3000)
        let tmux = try await TmuxSession.start("\(CLIRun.binary) '\(receiver.root)' --to \(receiver.url) --notify none --no-agent", width: 80, height: 24)
        defer { tmux.kill() }
        let wide = try await tmux.waitFor { $0.contains("cat.png") }
        #expect(wide.split(separator: "\n").last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }?.hasSuffix("? help  q quit") == true, "\(wide)")
        try await tmux.resize(width: 60, height: 20)
        try await tmux.send("G")
        try await tmux.send("u")
        let queued = try await tmux.waitFor { screen in screen.contains("Queued cat.png") && screen.contains("q quit") }
        #expect(queued.split(separator: "\n").contains { $0.contains("Queued cat.png") && $0.contains("? help  q quit") }, "\(queued)")
        try await tmux.send("?")
        try await tmux.waitFor { $0.contains("↑↓ scroll") }
        for _ in 0..<30 { try await tmux.send("j") }
        let end = try await tmux.waitFor { $0.contains("preview of the photo") }
        #expect(end.contains("Keys"), "the help is still open at its end: \(end)")
        try await tmux.send("Escape")
        try await tmux.send("q")
        try await tmux.waitFor { $0.contains("EXITED 0") }
    }
}
