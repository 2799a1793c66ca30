import TerminalCanvas

extension MonitorState {
    var layout: MonitorLayout { MonitorLayout(width: width, height: height) }

    /// Entry rows the browser pane shows at this size.
    var browserRows: Int { max(0, layout.browser.height - 2) }

    /// Upload rows the queue pane shows (its first row is the overall bar).
    var queueRows: Int {
        let inner = max(0, layout.queue.height - 2)
        return inner >= 3 ? inner - 1 : inner
    }

    /// Moves each list's window just enough to keep its selection on screen.
    mutating func keepSelectionsVisible() {
        browser.offset = ScrollWindow.offset(selected: browser.selected, count: browser.visible.count, visible: browserRows, current: browser.offset)
        queue.selected = min(queue.selected, max(0, queue.rows.count - 1))
        queue.offset = ScrollWindow.offset(selected: queue.selected, count: queue.rows.count, visible: queueRows, current: queue.offset)
    }
}
