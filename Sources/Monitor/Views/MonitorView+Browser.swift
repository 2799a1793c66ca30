import TerminalCanvas
import UploadCore

extension MonitorView {
    static func statusGlyph(_ kind: FileUploadStatus.Kind, _ theme: Theme) -> (text: String, width: Int) {
        let unicode = theme.glyphs == .unicode
        switch kind {
        case .sent: return (unicode ? "✓" : "+", 1)
        case .failed: return (unicode ? "✗" : "x", 1)
        case .sending: return (unicode ? "↑" : "^", 1)
        case .queued: return (unicode ? "·" : ".", 1)
        }
    }

    static func statusStyle(_ kind: FileUploadStatus.Kind, _ theme: Theme) -> CellStyle {
        switch kind {
        case .sent: theme.ok
        case .failed: theme.failed
        case .sending: theme.accent
        case .queued: theme.muted
        }
    }

    static func drawBrowser(_ canvas: inout Canvas, _ state: MonitorState, _ rect: Rect, _ theme: Theme) {
        let browser = state.browser
        var extras = ""
        if !browser.marks.isEmpty {
            extras += " · \(browser.marks.count) marked"
            // What `u` would send without its location, seen before it is sent.
            let stripped = browser.marks.count { state.strips($0) }
            if stripped > 0 { extras += stripped == browser.marks.count ? ", no location" : ", \(stripped) without location" }
        }
        if !browser.filter.text.isEmpty { extras += " · /\(browser.filter.text)" }
        if browser.showAll { extras += " · all files" }
        // Telling sent photos by content reads each once: how far it got, while it runs.
        if let progress = state.contents.progressText { extras += " · " + progress }
        // The end of the path says where you are; the marks count matters more than its start.
        let room = rect.width - 4 - DisplayWidth.of("Files ") - DisplayWidth.of(extras)
        let title = "Files " + TextLayout.truncateHead(browser.path, width: max(1, room), ellipsis: theme.glyphs.ellipsis) + extras
        let focused = state.focus == .browser && state.modal == nil
        let inside = canvas.frame(rect, title: title, style: frameStyle(focused, theme), glyphs: theme.glyphs)
        guard !inside.isEmpty else { return }
        if browser.loading {
            canvas.write("reading…", x: inside.x, y: inside.y, style: theme.muted, clip: inside)
            return
        }
        if browser.visible.isEmpty {
            let text =
                browser.error
                ?? (browser.filter.text.isEmpty
                    ? (browser.showAll ? "(empty directory)" : "(no images here; a shows all files)")
                    : "(nothing matches /\(browser.filter.text))")
            canvas.write(
                TextLayout.truncate(text, width: inside.width), x: inside.x, y: inside.y,
                style: browser.error == nil ? theme.muted : theme.failed, clip: inside)
            return
        }
        let sizeWidth = inside.width >= 30 ? 9 : 0
        for row in 0..<inside.height {
            let index = browser.offset + row
            guard index < browser.visible.count else { break }
            let entry = browser.visibleEntry(index)
            let path = browser.fullPath(entry)
            let y = inside.y + row
            let isMarked = browser.marks.contains(path)
            var style: CellStyle
            var name = entry.name
            switch entry.kind {
            case .directory:
                style = theme.directory
                name += "/"
            case .file:
                style = entry.isImage ? .plain : theme.muted
                if let renamed = browser.renames[path] { name += " → " + renamed }
            case .brokenLink(let reason):
                style = theme.failed
                name += " (\(reason))"
            case .other:
                style = theme.muted
            }
            if isMarked { style = theme.marked }
            let selected = index == browser.selected
            if selected {
                style.reverse = focused
                style.underline = !focused
            }
            let markGlyph = isMarked ? (theme.glyphs == .unicode ? "● " : "* ") : "  "
            let nameWidth = inside.width - 2 - (sizeWidth > 0 ? sizeWidth + 1 : 0)
            // Fitted as shown: a hidden character or a byte of a name that is not UTF-8 takes the
            // columns of its escape (`<0xE9>`), not one.
            var line = markGlyph + TextLayout.fit(InvisibleCharacters.escaped(name), width: max(0, nameWidth), ellipsis: theme.glyphs.ellipsis)
            // What has happened to the file at this endpoint, before its size: ✓ sent, ✗ failed,
            // ↑ sending, · queued.
            let status = entry.kind == .file ? state.fileStatus(path, entry: entry) : nil
            let glyph = status.map { statusGlyph($0.kind, theme) }
            if sizeWidth > 0 {
                let size = entry.kind == .file ? ByteFormat.bytes(entry.size) : ""
                line += " " + TextLayout.pad(left: glyph.map { $0.text + " " + size } ?? size, width: sizeWidth)
            }
            canvas.write(line, x: inside.x, y: y, style: style, clip: inside)
            if sizeWidth > 0, let status, let glyph {
                let size = ByteFormat.bytes(entry.size)
                let x = inside.x + inside.width - DisplayWidth.of(size) - 2
                // On the selected row too, in its colour under the selection's own mark: a red ✗
                // stays red where the cursor rests.
                var mark = statusStyle(status.kind, theme)
                if selected { (mark.reverse, mark.underline, mark.bold) = (focused, !focused, true) }
                if x > inside.x + 2 { canvas.write(glyph.text, x: x, y: y, style: mark, clip: inside) }
            }
        }
        if browser.visible.count > inside.height {
            let position = "\(browser.selected + 1)/\(browser.visible.count)"
            let x = rect.maxX - DisplayWidth.of(position) - 3
            if x > rect.x + 2 { canvas.write(" \(position) ", x: x, y: rect.maxY - 1, style: frameStyle(focused, theme)) }
        }
    }
}
