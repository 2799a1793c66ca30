import TerminalCanvas
import UploadCore

extension MonitorView {
    static func drawResponse(_ canvas: inout Canvas, _ state: MonitorState, _ rect: Rect, _ theme: Theme) {
        guard let id = state.queue.selectedID, let row = state.queue.state(id) else {
            let inside = canvas.frame(rect, title: "Response", style: theme.frame, glyphs: theme.glyphs)
            canvas.write(TextLayout.truncate("(no upload yet)", width: inside.width), x: inside.x, y: inside.y, style: theme.muted, clip: inside)
            return
        }
        // The panel's height bounds the lines made: a 64 KiB answer is not formatted whole per frame.
        guard row.outcome != nil, let answer = AnswerDigest(record: row.record, lineLimit: max(0, rect.height - 2)) else {
            let inside = canvas.frame(rect, title: "Response · \(row.name)", style: theme.frame, glyphs: theme.glyphs)
            let text =
                row.waitingText(at: state.date)
                ?? (rowState(row) == .queued
                    ? "queued, waiting for a free slot" : "sending… \(ProgressText.percent(row.fraction).trimmingLeadingSpace())  \(ProgressText.stats(row))")
            writeLines(&canvas, [text] + (row.record.keptText().map { [$0] } ?? []), inside, style: theme.muted)
            return
        }
        let frameStyle = answer.isSuccess ? theme.okBold : answer.isCancelled ? theme.frame : theme.failedBold
        let inside = canvas.frame(rect, title: answer.verdict, style: frameStyle, glyphs: theme.glyphs)
        guard !inside.isEmpty else { return }
        // The file's bytes, as its row says them; what the request carried around them (a
        // form's framing) beside.
        var sent = "sent \(ByteFormat.bytes(row.sentBytes))"
        if let size = row.record.fileSize, row.sentBytes > size {
            sent = "sent \(ByteFormat.bytes(size)) (\(ByteFormat.bytes(row.sentBytes)) with the form)"
        }
        var details = "task \(id) · \(row.name) · \(sent)"
        if let elapsed = row.elapsed { details += " in \(ByteFormat.duration(elapsed))" }
        if row.attempt > 1 { details += " · attempt \(row.attempt)" }
        var lines = TextLayout.wrap(details, width: inside.width)
        if !row.record.url.isEmpty { lines += TextLayout.wrap(row.record.url, width: inside.width) }
        let header = lines.count
        for line in answer.lines {
            if lines.count >= inside.height { break }
            lines += TextLayout.wrap(line, width: inside.width, limit: inside.height - lines.count)
        }
        for (i, line) in lines.prefix(inside.height).enumerated() {
            canvas.write(line, x: inside.x, y: inside.y + i, style: i < header ? theme.muted : .plain, clip: inside)
        }
    }

    static func drawLog(_ canvas: inout Canvas, _ state: MonitorState, _ rect: Rect, _ theme: Theme) {
        let inside = canvas.frame(rect, title: "Log", style: theme.frame, glyphs: theme.glyphs)
        guard !inside.isEmpty else { return }
        let shown = state.log.suffix(inside.height)
        for (i, entry) in shown.enumerated() {
            let y = inside.y + i
            let used = canvas.write(entry.clock + " ", x: inside.x, y: y, style: theme.muted, clip: inside)
            let style: CellStyle =
                switch entry.kind {
                case .ok: theme.ok
                case .failed: theme.failed
                case .info: .plain
                }
            canvas.write(
                TextLayout.truncate(entry.text, width: inside.width - used, ellipsis: theme.glyphs.ellipsis), x: inside.x + used, y: y, style: style,
                clip: inside)
        }
    }

    static func writeLines(_ canvas: inout Canvas, _ text: [String], _ rect: Rect, style: CellStyle) {
        var y = rect.y
        for paragraph in text {
            for line in TextLayout.wrap(paragraph, width: rect.width) {
                guard y < rect.maxY else { return }
                canvas.write(line, x: rect.x, y: y, style: style, clip: rect)
                y += 1
            }
        }
    }
}

extension String {
    func trimmingLeadingSpace() -> String { String(drop { $0 == " " }) }
}
