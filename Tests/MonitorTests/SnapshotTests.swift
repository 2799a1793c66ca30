import UploadTesting
import Foundation
import Monitor
import TerminalCanvas
import Testing
import UploadCore

/// Screens compared with text files in `Snapshots/`: the characters, then the style of every
/// cell (a colour or weight that changes fails as text does). Re-record after an intended change with
/// `UPLOADMON_RECORD_SNAPSHOTS=1 swift test --filter SnapshotTests` (that run fails on purpose),
/// then review the diff and run again.
@Suite struct SnapshotTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")

    func assertSnapshot(_ canvas: Canvas, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let file = Self.directory.appendingPathComponent(name + ".txt")
        let text = canvas.text + "\n" + canvas.styleMap
        if ProcessInfo.processInfo.environment["UPLOADMON_RECORD_SNAPSHOTS"] == "1" {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
            // A run that records proves nothing: it fails, so it cannot pass as a check.
            Issue.record("re-recorded \(name); review the diff and run again without UPLOADMON_RECORD_SNAPSHOTS", sourceLocation: sourceLocation)
            return
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(text == expected, "\(name) differs from its snapshot; re-record with UPLOADMON_RECORD_SNAPSHOTS=1 if intended", sourceLocation: sourceLocation)
    }

    @Test(arguments: [(80, 24), (120, 40), (40, 12), (1, 1)])
    func busyMonitor(width: Int, height: Int) throws {
        let state = Fixtures.busyState(width: width, height: height)
        let canvas = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode))
        #expect(canvas.width == width && canvas.height == height)
        try assertSnapshot(canvas, named: "busy-\(width)x\(height)")
    }

    @Test func asciiGlyphsForNonUTF8Terminals() throws {
        let state = Fixtures.busyState(width: 80, height: 24)
        try assertSnapshot(MonitorView.render(state, theme: Theme(colors: false, glyphs: .ascii)), named: "busy-80x24-ascii")
    }

    @Test func greenPanelForTheSelectedSuccess() throws {
        var state = Fixtures.busyState(width: 80, height: 24)
        Fixtures.press(&state, .tab, .up)
        let canvas = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode))
        try assertSnapshot(canvas, named: "green-panel-80x24")
        let layout = MonitorLayout(width: 80, height: 24)
        // The frame's colour tells success and failure apart; without colour, the words do.
        #expect(canvas[layout.response.x, layout.response.y].style.foreground == .green)
        #expect(canvas.line(layout.response.y).contains("OK 200 ") && !canvas.line(layout.response.y).contains("OK 200 OK"))
    }

    @Test func anUploadProvedIntactSaysSoInItsRowPanelAndLog() {
        var state = Fixtures.state(width: 140, height: 30)
        let id = UploadID(1)
        var proved = Fixtures.response(200, #"{"filename": "cat.jpg"}"#)
        proved.verified = "sha-256"
        Fixtures.upload(&state, .queued(id, name: "cat.jpg", totalBytes: 2_100_000), at: 1)
        Fixtures.upload(&state, .started(id, attempt: 1, url: "http://127.0.0.1:3000/photo", totalBytes: 2_100_000), at: 1)
        Fixtures.upload(&state, .progress(id, bytesSent: 2_100_000, totalBytesSent: 2_100_000, totalBytesExpected: 2_100_000), at: 2)
        Fixtures.upload(&state, .response(id, proved), at: 2)
        Fixtures.upload(&state, .finished(id, .answered(status: 200)), at: 2)
        Fixtures.press(&state, .tab)
        let canvas = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode))
        let lines = (0..<30).map { canvas.line($0) }
        #expect(lines.contains { $0.contains("cat.jpg · verified") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains("✓ verified (sha-256): received exactly as sent") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains("sent, verified (sha-256)") }, "\(lines.joined(separator: "\n"))")
    }

    @Test func redPanelWithoutColourStillSaysFailed() {
        let state = Fixtures.busyState(width: 80, height: 24)
        let canvas = MonitorView.render(state, theme: Theme(colors: false, glyphs: .unicode))
        let layout = MonitorLayout(width: 80, height: 24)
        #expect(canvas.line(layout.response.y).contains("FAILED 415 Unsupported Media Type"))
        // The row gives the file's size (38 B), not the bytes on the wire (228 B, the panel's "sent").
        let row = (0..<24).map { canvas.line($0) }.first { $0.contains("notes.jpg") && !$0.contains("→") && !$0.contains("task") } ?? ""
        #expect(row.contains("38 B") && !row.contains("228 B"), "\(row)")
        #expect(canvas[layout.response.x, layout.response.y].style.foreground == nil)
    }

    @Test func overlays() throws {
        var state = Fixtures.busyState(width: 80, height: 24)
        Fixtures.press(&state, .character("?"))
        try assertSnapshot(MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode)), named: "help-80x24")
        Fixtures.press(&state, .escape, .character("q"))
        try assertSnapshot(MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode)), named: "confirm-quit-80x24")
        Fixtures.press(&state, .character("n"), .down, .character("r"), .left, .left, .left, .left)
        try assertSnapshot(MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode)), named: "rename-80x24")
    }

    @Test func scheduledJobsOverlayCountsDownToTheNextRun() throws {
        var state = Fixtures.busyState(width: 80, height: 24)
        state.uploadsOutliveMonitor = true
        let jobs = [
            JobSummary(id: 1, title: "maintenance, keeps 7d of history", every: "1d", lastResult: nil, lastFailed: false, nextRunIn: 7200, isWatch: false),
            JobSummary(
                id: 2, title: "watch /srv/camera → http://127.0.0.1:3000/photo (3 queued, 1 settling)", every: "5m",
                lastResult: "queued 3 new file(s)", lastFailed: false, nextRunIn: 240, isWatch: true),
            JobSummary(
                id: 3, title: "watch /mnt/gone → http://127.0.0.1:3000/photo (0 queued)", every: "1m",
                lastResult: "cannot read /mnt/gone: No such file or directory", lastFailed: true, nextRunIn: 20, isWatch: true),
        ]
        _ = MonitorReducer.reduce(&state, .jobs(jobs, Fixtures.at(100)))
        _ = MonitorReducer.reduce(&state, .tick(Fixtures.at(130)))
        Fixtures.press(&state, .character("J"))
        #expect(state.modal == .jobs)
        let canvas = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode))
        try assertSnapshot(canvas, named: "jobs-80x24")
        #expect(canvas.line(0).contains("watching 2 folders"))
        #expect(canvas.text.contains("every 5m · next in 3m30s · last: queued 3 new file(s)"))
        #expect(canvas.text.contains("every 1m · next now · last: cannot read /mnt/gone"))
        Fixtures.press(&state, .character("x"))
        #expect(state.modal == nil)

        // Without the agent there are no jobs to show, and the overlay says why.
        var local = Fixtures.busyState(width: 80, height: 24)
        Fixtures.press(&local, .character("J"))
        #expect(
            MonitorView.render(local, theme: Theme(colors: true, glyphs: .unicode)).text.contains(
                "Uploads run in this monitor (demo, --no-agent): no agent, no jobs."))
    }

    @Test func everySizeDrawsWithoutCrashing() {
        var state = Fixtures.busyState(width: 1, height: 1)
        Fixtures.press(&state, .character("?"))
        for width in [0, 1, 2, 5, 23, 24, 25, 39, 61, 99, 100, 201] {
            for height in [0, 1, 2, 7, 8, 9, 15, 16, 19, 20, 61] {
                _ = MonitorReducer.reduce(&state, .resize(width: width, height: height))
                let canvas = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode))
                #expect(canvas.width == width && canvas.height == height)
            }
        }
    }

    @Test func tooSmallSaysSo() {
        let state = Fixtures.busyState(width: 20, height: 6)
        let canvas = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode))
        #expect(canvas.text.contains("Terminal too small"))
    }
}

extension Canvas {
    /// Each cell's style as one character per cell, row by row (`.` plain, letters in order of
    /// first appearance), then what each letter stands for.
    var styleMap: String {
        var keys: [CellStyle: Character] = [.plain: "."]
        var legend: [String] = []
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var rows: [String] = []
        for y in 0..<height {
            var row = ""
            for x in 0..<width {
                let style = self[x, y].style
                if keys[style] == nil {
                    let key = keys.count - 1 < letters.count ? letters[keys.count - 1] : "?"
                    keys[style] = key
                    legend.append("\(key): \(style.words)")
                }
                row.append(keys[style]!)
            }
            rows.append(row)
        }
        return "--- styles\n" + rows.joined(separator: "\n") + "\n" + legend.map { $0 + "\n" }.joined()
    }
}

extension CellStyle {
    var words: String {
        var parts: [String] = []
        if let foreground { parts.append("fg \(foreground)") }
        if let background { parts.append("bg \(background)") }
        if bold { parts.append("bold") }
        if dim { parts.append("dim") }
        if reverse { parts.append("reverse") }
        if underline { parts.append("underline") }
        return parts.isEmpty ? "plain" : parts.joined(separator: " ")
    }
}
