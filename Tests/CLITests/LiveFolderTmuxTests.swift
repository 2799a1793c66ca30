import Foundation
import Testing
import UploadTesting

/// A photo copied into the folder open in the monitor shows there without leaving it, the
/// cursor staying on its file; one deleted goes.
@Suite(.serialized, .timeLimit(.minutes(3))) struct LiveFolderTmuxTests {
    @Test func aPhotoCopiedInShowsAndTheCursorStays() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let folder = receiver.root + "/camera"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try TestFiles.writeImage(at: folder + "/b.png", size: 2000)
        _ = try TestFiles.writeImage(at: folder + "/d.png", size: 2000)
        let outside = try TestFiles.writeImage(at: receiver.root + "/incoming.png", size: 4000)
        let tmux = try await TmuxSession.start("\(CLIRun.binary) '\(folder)' --to \(receiver.url) --notify none --no-agent", width: 100, height: 30)
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("d.png") }
        try await tmux.send("G")  // the cursor on d.png
        try await tmux.send("Space")
        // As a copy would: written elsewhere, then moved in; and one written in place.
        try FileManager.default.moveItem(atPath: outside, toPath: folder + "/a.png")
        _ = try TestFiles.writeImage(at: folder + "/c.png", size: 3000)
        let screen = try await tmux.waitFor { $0.contains("a.png") && $0.contains("c.png") }
        #expect(screen.contains("● d.png"), "the mark stays: \(screen)")
        // The cursor is still on d.png: u queues it, not a newcomer.
        try FileManager.default.removeItem(atPath: folder + "/b.png")
        try await tmux.waitFor { !$0.contains("b.png") }
        try await tmux.send("u")
        try await tmux.waitFor { $0.contains("1 upload finished") }
        #expect(receiver.storedNames() == ["d.png"], "\(receiver.storedNames())")
        try await tmux.send("q")
        try await tmux.waitFor { $0.contains("EXITED 0") }
    }
}
