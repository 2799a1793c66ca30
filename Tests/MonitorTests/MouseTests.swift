import Monitor
import TerminalCanvas
import Testing
import UploadCore

/// Clicks and the wheel (cells as the terminal reports them, 0-based): a click selects the row
/// under it and focuses its pane, a double click opens a folder or marks a file, the wheel
/// scrolls the list under the pointer.
@Suite struct MouseTests {
    func click(_ state: inout MonitorState, x: Int, y: Int, at seconds: Double = 10) -> [MonitorEffect] {
        MonitorReducer.reduce(&state, .key(.mouse(.press, x: x, y: y), Fixtures.at(seconds)))
    }

    @Test func aClickSelectsTheRowUnderItAndADoubleClickOpensAFolder() {
        var state = Fixtures.state()  // 120×40: the browser is the left pane, its first row at y = 2
        let browser = MonitorLayout(width: 120, height: 40).browser
        _ = click(&state, x: browser.x + 3, y: browser.y + 3)
        #expect(state.browser.current?.name == "dog.png")
        // The same row again soon: a double click; on a file it marks it, as Space does.
        _ = click(&state, x: browser.x + 3, y: browser.y + 3, at: 10.2)
        #expect(state.browser.marks.contains("/photos/dog.png"))
        // On a folder it opens.
        _ = click(&state, x: browser.x + 3, y: browser.y + 1, at: 20)
        #expect(click(&state, x: browser.x + 3, y: browser.y + 1, at: 20.3) == [.loadDirectory(path: "/photos/holiday", select: nil)])
        // Two clicks far apart in time are two single clicks.
        _ = click(&state, x: browser.x + 3, y: browser.y + 2, at: 30)
        #expect(click(&state, x: browser.x + 3, y: browser.y + 2, at: 31).isEmpty)
        // Below the last row, on the frame, elsewhere: nothing moves.
        _ = click(&state, x: browser.x + 3, y: browser.maxY - 1, at: 40)
        #expect(state.browser.current?.name == "cat.jpg")
    }

    @Test func aClickInTheQueueFocusesItAndSelectsTheUpload() {
        var state = Fixtures.state()
        Fixtures.press(&state, .character("j"), .character(" "), .character(" "), .character("u"))
        let items = Fixtures.enqueued(Fixtures.press(&state, .character("*"), .character("u")))
        for (n, item) in items.enumerated() {
            _ = MonitorReducer.reduce(&state, .upload(Fixtures.queued(UploadID(n + 1), item, totalBytes: 10), Fixtures.time))
        }
        #expect(state.queue.rows.count >= 3)
        let queue = MonitorLayout(width: 120, height: 40).queue
        // Inside its frame, under the overall line: the second upload.
        _ = click(&state, x: queue.x + 5, y: queue.y + 3)
        #expect(state.focus == .queue && state.queue.selected == 1)
    }

    @Test func theWheelScrollsTheListUnderThePointerAndHelpClosesOnAClick() {
        var state = Fixtures.state()
        let browser = MonitorLayout(width: 120, height: 40).browser
        _ = MonitorReducer.reduce(&state, .key(.mouse(.wheelDown, x: browser.x + 2, y: browser.y + 2), Fixtures.time))
        #expect(state.browser.selected == 3 && state.focus == .browser)
        _ = MonitorReducer.reduce(&state, .key(.mouse(.wheelUp, x: browser.x + 2, y: browser.y + 2), Fixtures.time))
        #expect(state.browser.selected == 0)
        Fixtures.press(&state, .character("?"))
        _ = click(&state, x: 0, y: 0)
        #expect(state.modal == nil)
    }
}

/// `D`: where the next uploads go, among the saved destinations.
@Suite struct DestinationSwitchTests {
    func state() -> MonitorState {
        var state = Fixtures.state()
        state.destinations = [
            DestinationEntry(name: "blog", shown: "https://blog.example/photo"),
            DestinationEntry(name: "broken", shown: "https://x.example/", refusal: "cannot read /k/h: it does not exist"),
            DestinationEntry(name: "wiki", shown: "https://wiki.example/up"),
        ]
        state.destinationName = "blog"
        return state
    }

    @Test func choosingADestinationSendsTheNextUploadsThere() {
        var state = state()
        Fixtures.press(&state, .character("D"))
        #expect(state.modal == .destinations(selected: 0), "the cursor starts on the current one")
        let effects = Fixtures.press(&state, .down, .down, .enter)
        #expect(effects == [.switchDestination(name: "wiki")])
        #expect(state.destinationName == "wiki" && state.endpoint == "https://wiki.example/up" && state.modal == nil)
        let title = MonitorView.render(state, theme: Theme(colors: false, glyphs: .unicode)).text.split(separator: "\n")[0]
        #expect(title.contains("uploadmon → wiki · https://wiki.example/up"), "\(title)")
    }

    @Test func oneThatCannotBeUsedSaysWhyAndNothingChanges() {
        var state = state()
        #expect(Fixtures.press(&state, .character("D"), .down, .enter).isEmpty)
        #expect(state.destinationName == "blog" && state.message?.isError == true && state.message?.text.contains("broken cannot be used") == true)
        // Esc keeps the current one; with none saved, D says how to save one.
        Fixtures.press(&state, .character("D"), .down, .escape)
        #expect(state.destinationName == "blog" && state.modal == nil)
        var none = Fixtures.state()
        Fixtures.press(&none, .character("D"))
        #expect(none.modal == nil && none.message?.text.contains("uploadmon destinations add") == true)
    }
}
