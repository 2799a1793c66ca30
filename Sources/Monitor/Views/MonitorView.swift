import TerminalCanvas
import UploadCore

/// Draws the whole monitor for a state into a canvas of the state's size. Pure: the same state
/// and theme always give the same cells, which is what the snapshot tests compare.
public enum MonitorView {
    /// The canvas for `state` in `theme`.
    public static func render(_ state: MonitorState, theme: Theme) -> Canvas {
        var canvas = Canvas(width: state.width, height: state.height)
        let layout = state.layout
        guard !layout.isTooSmall else {
            drawTooSmall(&canvas, theme: theme)
            return canvas
        }
        drawTitleBar(&canvas, state, layout.titleBar, theme)
        drawBrowser(&canvas, state, layout.browser, theme)
        if !layout.preview.isEmpty { drawPreview(&canvas, state, layout.preview, theme) }
        drawQueue(&canvas, state, layout.queue, theme)
        drawResponse(&canvas, state, layout.response, theme)
        if !layout.log.isEmpty { drawLog(&canvas, state, layout.log, theme) }
        drawStatusLine(&canvas, state, layout.statusLine, theme)
        if let modal = state.modal { drawModal(&canvas, modal, state, theme) }
        return canvas
    }

    static func drawTooSmall(_ canvas: inout Canvas, theme: Theme) {
        let lines = ["Terminal too small", "need \(MonitorLayout.minimumWidth)×\(MonitorLayout.minimumHeight)", "q quits"]
        let top = max(0, (canvas.height - lines.count) / 2)
        for (i, line) in lines.enumerated() where top + i < canvas.height {
            canvas.writeCentered(line, in: canvas.bounds.row(top + i), y: top + i, style: i == 0 ? theme.failedBold : .plain)
        }
    }

    static func drawTitleBar(_ canvas: inout Canvas, _ state: MonitorState, _ rect: Rect, _ theme: Theme) {
        canvas.fill(rect, style: theme.titleBar)
        let counts = state.queue.counts
        var right: [String] = []
        if counts.active > 0 { right.append("\(counts.active) active") }
        right.append("\(counts.ok) ok")
        if counts.failed > 0 { right.append("\(counts.failed) failed") }
        if state.jobs.watchCount > 0 { right.append("watching \(state.jobs.watchCount) folder\(state.jobs.watchCount == 1 ? "" : "s")") }
        let rightText = right.joined(separator: " · ") + " "
        let rightWidth = DisplayWidth.of(rightText)
        let left =
            " uploadmon → " + (state.destinationName.map { "\($0) · " } ?? "") + state.endpoint
            + (state.sendsAs.flatMap { $0.changesAnything ? " · photos " + $0.words : nil } ?? "")
        let leftRoom = rect.width - rightWidth - 1
        if leftRoom >= 12 {
            canvas.write(TextLayout.truncate(left, width: leftRoom, ellipsis: theme.glyphs.ellipsis), x: rect.x, y: rect.y, style: theme.titleBar.bolded)
            canvas.write(rightText, x: rect.maxX - rightWidth, y: rect.y, style: theme.titleBar)
        } else {
            canvas.write(TextLayout.truncate(left, width: rect.width, ellipsis: theme.glyphs.ellipsis), x: rect.x, y: rect.y, style: theme.titleBar.bolded)
        }
    }

    static func drawStatusLine(_ canvas: inout Canvas, _ state: MonitorState, _ rect: Rect, _ theme: Theme) {
        if state.browser.isFiltering && state.focus == .browser {
            let prompt = "/"
            canvas.write(prompt, x: rect.x, y: rect.y, style: theme.accent.bolded)
            drawInput(&canvas, state.browser.filter, x: rect.x + 1, y: rect.y, width: rect.width - 1, theme: theme)
            return
        }
        let line = statusLine(message: state.message?.text, focus: state.focus, width: rect.width, ellipsis: theme.glyphs.ellipsis)
        var x = rect.x
        if let message = state.message {
            x += canvas.write(line.message, x: x, y: rect.y, style: message.isError ? theme.failedBold : theme.accent, clip: rect)
        }
        canvas.write(line.keys, x: x, y: rect.y, style: theme.muted, clip: rect)
    }

    /// The keys, most useful first; `? help  q quit` always end the line.
    static let browserKeys = ["↑↓ move", "space mark", "u queue", "→/⏎ open", "← up", "* all", "/ filter", "tab queue", "r rename", "a all files"]
    static let queueKeys = ["↑↓ select", "c cancel", "R retry", "f next failed", "x clear finished", "tab browser"]
    static let alwaysKeys = "? help  q quit"

    /// The status line at `width`: a message (cut to leave room for help and quit) and beside it
    /// the keys that fit, in their order of use, then help and quit, which never drop out.
    public static func statusLine(message: String?, focus: Pane, width: Int, ellipsis: String) -> (message: String, keys: String) {
        let always = alwaysKeys
        var shownMessage = ""
        if let message {
            let room = width - DisplayWidth.of(always) - 3
            shownMessage =
                room >= 8
                ? TextLayout.truncate(message, width: room, ellipsis: ellipsis) + "   " : TextLayout.truncate(message, width: width, ellipsis: ellipsis)
            guard room >= 8 else { return (shownMessage, "") }
        }
        var room = width - DisplayWidth.of(shownMessage) - DisplayWidth.of(always)
        var keys: [String] = []
        for key in focus == .browser ? browserKeys : queueKeys {
            let cost = DisplayWidth.of(key) + 2
            guard cost <= room else { break }
            keys.append(key)
            room -= cost
        }
        return (shownMessage, (keys + [always]).joined(separator: "  "))
    }

    /// A text input with its cursor shown as a reversed cell.
    static func drawInput(_ canvas: inout Canvas, _ input: TextInput, x: Int, y: Int, width: Int, theme: Theme) {
        guard width > 0 else { return }
        let before = String(input.characters[..<input.cursor])
        let after = String(input.characters[input.cursor...])
        // Keep the cursor in view: show the tail of what is before it when the text is long.
        var shownBefore = before
        while DisplayWidth.of(shownBefore) > width - 1, !shownBefore.isEmpty { shownBefore.removeFirst() }
        let used = canvas.write(shownBefore, x: x, y: y, clip: Rect(x: x, y: y, width: width, height: 1))
        let cursorX = x + used
        let under = after.first.map(String.init) ?? " "
        let cursorWidth = canvas.write(under, x: cursorX, y: y, style: theme.selection, clip: Rect(x: x, y: y, width: width, height: 1))
        canvas.write(String(after.dropFirst()), x: cursorX + cursorWidth, y: y, clip: Rect(x: x, y: y, width: width, height: 1))
    }

    static func frameStyle(_ focused: Bool, _ theme: Theme) -> CellStyle {
        focused ? theme.focusedFrame : theme.frame
    }
}
