import TerminalCanvas
import UploadCore

/// The mouse, as htop, lazygit and yazi have it: a click selects the row under it and focuses
/// its pane, a double click opens a folder (or marks a file), the wheel scrolls the list under
/// the pointer without taking the focus.
extension MonitorReducer {
    /// Two presses on the same cell within this many seconds are a double click.
    static let doubleClickSeconds = 0.4
    /// Rows the wheel moves a list per notch.
    static let wheelRows = 3

    static func handleMouse(_ action: MouseAction, x: Int, y: Int, at time: EventTime, _ state: inout MonitorState) -> [MonitorEffect] {
        if let modal = state.modal {
            switch (modal, action) {
            case (.help, .wheelDown): return handleModalKey(.down, modal: modal, &state)
            case (.help, .wheelUp): return handleModalKey(.up, modal: modal, &state)
            case (.help, .press), (.jobs, .press): state.modal = nil
            default: break
            }
            return []
        }
        let layout = state.layout
        let inBrowser = layout.browser.contains(x: x, y: y)
        let inQueue = layout.queue.contains(x: x, y: y)
        guard inBrowser || inQueue else { return [] }
        switch action {
        case .wheelUp, .wheelDown:
            let step = action == .wheelDown ? wheelRows : -wheelRows
            if inBrowser {
                state.browser.selected = clamp(state.browser.selected + step, count: state.browser.visible.count)
            } else {
                state.queue.selected = clamp(state.queue.selected + step, count: state.queue.rows.count)
                state.queue.followLatest = false
            }
            return []
        case .press:
            let double = state.lastClick.map { $0.x == x && $0.y == y && time.seconds - $0.seconds <= doubleClickSeconds } ?? false
            state.lastClick = double ? nil : Click(x: x, y: y, seconds: time.seconds)
            state.message = nil
            if inBrowser {
                state.focus = .browser
                let index = y - (layout.browser.y + 1) + state.browser.offset
                guard y > layout.browser.y, y < layout.browser.maxY - 1, state.browser.visible.indices.contains(index) else { return [] }
                state.browser.selected = index
                guard double, let entry = state.browser.current else { return [] }
                // Double: a folder opens; a file is marked or unmarked, as Space does.
                return handleBrowserKey(entry.isDirectory ? .enter : .character(" "), at: time, &state)
            }
            state.focus = .queue
            // Inside the frame, under the overall line when there is one.
            let top = layout.queue.y + 1 + (layout.queue.height - 2 >= 3 ? 1 : 0)
            let index = y - top + state.queue.offset
            guard y >= top, y < layout.queue.maxY - 1, state.queue.rows.indices.contains(index) else { return [] }
            state.queue.selected = index
            state.queue.followLatest = false
            return []
        }
    }

    private static func clamp(_ index: Int, count: Int) -> Int { min(max(0, index), max(0, count - 1)) }
}

/// Where and when the last press was, to tell a double click.
public struct Click: Sendable, Equatable {
    public var x: Int
    public var y: Int
    public var seconds: Double
}
