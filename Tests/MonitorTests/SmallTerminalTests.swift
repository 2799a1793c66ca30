import Monitor
import TerminalCanvas
import Testing
import UploadCore

/// A monitor in a small terminal: help and quit stay in the legend, a message sits beside it,
/// the lists get the rows, and the help wraps and scrolls instead of being cut.
@Suite struct SmallTerminalTests {
    func lines(_ state: MonitorState) -> [String] {
        MonitorView.render(state, theme: Theme(colors: false, glyphs: .unicode)).text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    @Test(arguments: [40, 60, 80, 100, 120])
    func helpAndQuitAreAlwaysInTheLegend(width: Int) {
        var state = Fixtures.state(width: width, height: 24)
        #expect(lines(state)[23].trimmingCharacters(in: .whitespaces).hasSuffix("? help  q quit"), "\(lines(state)[23])")
        Fixtures.press(&state, .tab)
        #expect(lines(state)[23].trimmingCharacters(in: .whitespaces).hasSuffix("? help  q quit"))
        // A message sits beside the legend, not in its place.
        state.message = StatusMessage("Queued 5 files")
        let line = lines(state)[23]
        #expect(line.hasPrefix("Queued 5 files") && line.trimmingCharacters(in: .whitespaces).hasSuffix("? help  q quit"), "\(line)")
    }

    @Test func theLegendKeepsTheMostUsedKeysFirst() {
        let narrow = MonitorView.statusLine(message: nil, focus: .browser, width: 50, ellipsis: "…")
        #expect(narrow.keys == "↑↓ move  space mark  u queue  ? help  q quit", "\(narrow.keys)")
        let long = MonitorView.statusLine(message: String(repeating: "x", count: 200), focus: .queue, width: 60, ellipsis: "…")
        #expect(long.keys == "? help  q quit" && long.message.count == 60 - 14 - 3 + 3, "\(long)")
    }

    @Test func atSixtyByTwentyTheFileListHasMoreRowsThanTheLog() {
        let layout = MonitorLayout(width: 60, height: 20)
        #expect(layout.browser.height > layout.log.height, "\(layout.browser) \(layout.log)")
        #expect(layout.browser.height >= layout.queue.height)
        let short = MonitorLayout(width: 60, height: 14)
        #expect(short.browser.height >= short.response.height)
    }

    @Test func theHelpWrapsToTheTerminalAndScrolls() {
        var state = Fixtures.state(width: 50, height: 14)
        Fixtures.press(&state, .character("?"))
        let first = lines(state)
        let help = MonitorView.helpLayout(in: Rect(x: 0, y: 0, width: 50, height: 14))
        #expect(help.box.width == 50 && help.maxScroll > 0)
        #expect(first.joined().contains("Keys 1-12/\(help.lines.count) · ↑↓ scroll · other keys close ─"), "\(first.joined(separator: "\n"))")
        #expect(help.lines.allSatisfy { DisplayWidth.of($0) <= 47 }, "every line fits the box")
        // Every line of the help can be brought into view; a key other than a scroll closes it.
        for _ in 0..<help.maxScroll + 3 { Fixtures.press(&state, .down) }
        #expect(state.modal == .help(scroll: help.maxScroll))
        #expect(lines(state).joined().contains("preview of the photo"), "the last line shows at the end")
        Fixtures.press(&state, .pageUp, .pageUp, .pageUp)
        #expect(state.modal == .help(scroll: 0))
        Fixtures.press(&state, .character("x"))
        #expect(state.modal == nil)
        // Where it all fits, any key closes it, scroll keys too.
        var big = Fixtures.state(width: 120, height: 40)
        Fixtures.press(&big, .character("?"), .down)
        #expect(big.modal == nil)
    }
}
