import Foundation
import TerminalCanvas
import UploadCore

extension MonitorView {
    /// The size a row shows: the file's, or for a photo converted on the way (known once it is
    /// prepared), what is sent of it.
    static func shownSize(_ row: TransferState) -> Int64? {
        row.record.sourceSHA256 != nil ? row.totalBytes : row.record.fileSize ?? row.totalBytes
    }

    static func rowState(_ row: TransferState) -> RowState {
        switch row.record.phase {
        case .queued: return .queued
        case .sending: return .sending
        case .waitingToRetry: return .waitingToRetry
        case .finished(let outcome):
            if outcome.isSuccess { return .done }
            if case .failed(let failure) = outcome, failure.kind == .cancelled { return .cancelled }
            return .failed
        }
    }

    static func rowStyle(_ state: RowState, _ theme: Theme) -> CellStyle {
        switch state {
        case .queued, .cancelled: theme.muted
        case .sending: theme.accent
        case .waitingToRetry: theme.warning
        case .done: theme.ok
        case .failed: theme.failed
        }
    }

    static func drawQueue(_ canvas: inout Canvas, _ state: MonitorState, _ rect: Rect, _ theme: Theme) {
        let queue = state.queue
        let focused = state.focus == .queue && state.modal == nil
        let inside = canvas.frame(rect, title: queueTitle(queue), style: frameStyle(focused, theme), glyphs: theme.glyphs)
        guard !inside.isEmpty else { return }
        guard !queue.rows.isEmpty else {
            canvas.write(TextLayout.truncate("(empty: mark images and press u)", width: inside.width), x: inside.x, y: inside.y, style: theme.muted)
            return
        }
        // With room for two lines or fewer, the uploads matter more than the overall bar.
        let showOverall = inside.height >= 3
        if showOverall { drawOverall(&canvas, queue, inside.row(0), theme) }
        let rows = showOverall ? inside.splitTop(1).rest : inside
        for line in 0..<rows.height {
            let index = queue.offset + line
            guard index < queue.rows.count, let row = queue.state(queue.rows[index]) else { break }
            drawRow(
                &canvas, row, selected: index == queue.selected, focused: focused, rows.row(line), theme, date: state.date,
                withoutLocation: queue.sendsWithoutLocation(queue.rows[index]))
        }
    }

    /// `Queue · 20000 · 4 sending · 15000 waiting · 4990 ok · 6 failed (f)`: counts by state,
    /// from the queue's tallies (a long queue is read by its counts, failures found with `f`).
    static func queueTitle(_ queue: QueueState) -> String {
        let tally = queue.tally
        var parts = ["Queue · \(queue.rows.count)"]
        guard queue.rows.count > 1 else { return parts[0] }
        let retrying = queue.moving.count { queue.state($0)?.isWaitingToRetry == true }
        let sending = queue.moving.count - retrying
        let waiting = tally.active - queue.moving.count
        if sending > 0 { parts.append("\(sending) sending") }
        if retrying > 0 { parts.append("\(retrying) to retry") }
        if waiting > 0 { parts.append("\(waiting) waiting") }
        if tally.ok > 0 { parts.append("\(tally.ok) ok") }
        if tally.failed > 0 { parts.append("\(tally.failed) failed (f)") }
        return parts.joined(separator: " · ")
    }

    static func drawOverall(_ canvas: inout Canvas, _ queue: QueueState, _ rect: Rect, _ theme: Theme) {
        // From the queue's running tallies, and the rates of the uploads that are moving: a
        // frame costs the same with 20 rows or 100,000.
        let (sent, total, done) = (queue.tally.sentBytes, queue.tally.totalBytes, queue.tally.done)
        var rate = 0.0
        for id in queue.moving { rate += queue.state(id)?.meter.bytesPerSecond ?? 0 }
        let fraction = total > 0 ? Double(sent) / Double(total) : (done == queue.rows.count ? 1 : 0)
        // Files done of all, then the bytes' share: "All 232/3009 ███ 92 % of 1.20 GB" (the
        // percentage is of the bytes, and says so).
        let label = "All \(done)/\(queue.rows.count) "
        let ofBytes = total > 0 && rect.width >= 44 ? " of " + ByteFormat.bytes(total) : ""
        let tail = " " + ProgressText.percent(fraction) + ofBytes + (rate > 0 && rect.width >= 60 ? "  " + ByteFormat.rate(rate) : "")
        let barWidth = rect.width - DisplayWidth.of(label) - DisplayWidth.of(tail)
        canvas.write(label, x: rect.x, y: rect.y, style: CellStyle(bold: true), clip: rect)
        guard barWidth >= 4 else { return }
        canvas.progressBar(
            x: rect.x + DisplayWidth.of(label), y: rect.y, width: barWidth, fraction: fraction,
            fill: theme.accent, track: theme.barTrack, glyphs: theme.glyphs)
        canvas.write(tail, x: rect.x + DisplayWidth.of(label) + barWidth, y: rect.y, clip: rect)
    }

    /// `✓ name · verified  2.1 MB ████████░░ 100%  4.1 MB/s 0:03 ×2`, dropping columns as the width shrinks
    /// (the size is the file's; the bytes on the wire, multipart framing included, are the log's)
    /// (`↑ name · resumed at 41 %  …` while an attempt that resumed sends);
    /// `↻ name  2.1 MB waiting to retry in 4 s (attempt 2: 503 Service Unavailable)` between attempts.
    static func drawRow(
        _ canvas: inout Canvas, _ row: TransferState, selected: Bool, focused: Bool, _ rect: Rect, _ theme: Theme, date: Date,
        withoutLocation: Bool = false
    ) {
        let kind = rowState(row)
        var style = rowStyle(kind, theme)
        if selected {
            style.reverse = focused
            style.underline = !focused
        }
        if let waiting = row.waitingText(at: date) {
            let glyph = theme.stateGlyph(kind) + " "
            let size = rect.width >= 64 ? " " + TextLayout.pad(left: shownSize(row).map(ByteFormat.bytes) ?? "?", width: 8) + " " : " "
            let nameWidth = min(DisplayWidth.of(row.name), max(8, (rect.width - DisplayWidth.of(glyph) - DisplayWidth.of(size)) / 3))
            var x = rect.x
            x += canvas.write(glyph, x: x, y: rect.y, style: style, clip: rect)
            x += canvas.write(TextLayout.fit(row.name, width: nameWidth, ellipsis: theme.glyphs.ellipsis), x: x, y: rect.y, style: style, clip: rect)
            x += canvas.write(size, x: x, y: rect.y, style: style, clip: rect)
            canvas.write(
                TextLayout.fit(waiting, width: max(0, rect.x + rect.width - x), ellipsis: theme.glyphs.ellipsis),
                x: x, y: rect.y, style: style, clip: rect)
            return
        }
        let glyph = theme.stateGlyph(kind) + " "
        let percent = " " + ProgressText.percent(kind == .done ? 1 : row.fraction)
        let wide = rect.width >= 64
        let size = wide ? " " + TextLayout.pad(left: shownSize(row).map(ByteFormat.bytes) ?? "?", width: 8) : ""
        var tail = ""
        if wide {
            let rate = kind == .sending ? row.meter.bytesPerSecond.map(ByteFormat.rate) ?? "" : ""
            let eta = row.etaSeconds.map(ByteFormat.eta) ?? ""
            let attempts = row.attempt > 1 ? "×\(row.attempt)" : ""
            tail = " " + TextLayout.pad(left: rate, width: 11) + " " + TextLayout.pad(left: eta, width: 5) + " " + TextLayout.fit(attempts, width: 3)
        }
        let fixed = DisplayWidth.of(glyph) + DisplayWidth.of(size) + DisplayWidth.of(percent) + DisplayWidth.of(tail)
        let flexible = rect.width - fixed
        let barWidth = flexible >= 24 ? max(10, flexible * 2 / 5) : 0
        let nameWidth = flexible - barWidth - (barWidth > 0 ? 1 : 0)
        // An attempt that continued where the server had the upload says so beside the name, and
        // an upload the server's digest proved intact says that once done.
        // What was asked of the photo stays in sight (sent without where it was taken), then how
        // the sending went.
        var label = withoutLocation ? row.name + " · no location" : row.name
        switch kind {
        case .sending: if let resumed = row.record.resumedText { label += " · " + resumed }
        case .done where row.response?.verifiedText != nil: label += " · verified"
        default: break
        }
        var x = rect.x
        x += canvas.write(glyph, x: x, y: rect.y, style: style, clip: rect)
        x += canvas.write(TextLayout.fit(label, width: max(0, nameWidth), ellipsis: theme.glyphs.ellipsis), x: x, y: rect.y, style: style, clip: rect)
        x += canvas.write(size, x: x, y: rect.y, style: style, clip: rect)
        if barWidth > 0 {
            x += canvas.write(" ", x: x, y: rect.y, style: style, clip: rect)
            let fraction = kind == .done ? 1 : row.fraction
            canvas.progressBar(x: x, y: rect.y, width: barWidth, fraction: fraction, fill: rowStyle(kind, theme), track: theme.barTrack, glyphs: theme.glyphs)
            x += barWidth
        }
        x += canvas.write(percent, x: x, y: rect.y, style: style, clip: rect)
        canvas.write(tail, x: x, y: rect.y, style: style, clip: rect)
    }
}
