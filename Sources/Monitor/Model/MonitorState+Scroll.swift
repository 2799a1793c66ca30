import TerminalCanvas

extension MonitorState {
    var layout: MonitorLayout { MonitorLayout(width: width, height: height, preview: preview.enabled) }

    /// Entry rows the browser pane shows at this size.
    var browserRows: Int { max(0, layout.browser.height - 2) }

    /// Upload rows the queue pane shows (its first row is the overall bar).
    var queueRows: Int {
        let inner = max(0, layout.queue.height - 2)
        return inner >= 3 ? inner - 1 : inner
    }

    /// Moves each list's window just enough to keep its selection on screen.
    /// The picture the preview pane should show: the image under the browser's cursor, or the
    /// file of the selected queue row; nil when the pane is off, has no room, or there is none.
    var previewRequest: PreviewRequest? {
        let pane = layout.preview
        guard preview.enabled, pane.width >= 6, pane.height >= 5 else { return nil }
        let target: (path: String, size: Int64)?
        switch focus {
        case .browser:
            target = browser.current.flatMap { $0.kind == .file ? (browser.fullPath($0), $0.size) : nil }
        case .queue:
            target = queue.selectedID.flatMap { id in
                queue.path(of: id).map { ($0, queue.state(id)?.record.fileSize ?? 0) }
            }
        }
        guard let target else { return nil }
        // Inside the frame, less the line under the picture.
        return PreviewRequest(
            path: target.path, size: target.size, columns: pane.width - 2, rows: pane.height - 3,
            cellWidth: pixelGraphics?.cellWidth ?? 1, cellHeight: pixelGraphics?.cellHeight ?? 2)
    }

    mutating func keepSelectionsVisible() {
        browser.offset = ScrollWindow.offset(selected: browser.selected, count: browser.visible.count, visible: browserRows, current: browser.offset)
        queue.selected = min(queue.selected, max(0, queue.rows.count - 1))
        queue.offset = ScrollWindow.offset(selected: queue.selected, count: queue.rows.count, visible: queueRows, current: queue.offset)
    }
}
