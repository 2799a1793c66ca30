import TerminalCanvas
import UploadCore

extension MonitorReducer {
    static func handleQueueKey(_ key: Key, _ state: inout MonitorState) -> [MonitorEffect] {
        if let moved = ListNavigation.move(state.queue.selected, count: state.queue.rows.count, key: key, page: state.listPageSize) {
            state.queue.selected = moved
            state.queue.followLatest = false
            return []
        }
        switch key {
        case .character("c"):
            guard let id = state.queue.selectedID, let row = state.queue.state(id) else { return [] }
            guard row.outcome == nil else {
                state.message = StatusMessage("\(row.name) has already finished", isError: true)
                return []
            }
            return [.cancel(id)]
        case .character("R"):
            guard let id = state.queue.selectedID, let row = state.queue.state(id) else { return [] }
            guard let outcome = row.outcome, !outcome.isSuccess else {
                state.message = StatusMessage("Only a failed or cancelled upload can be retried", isError: true)
                return []
            }
            return [.retry(id)]
        case .character("f"):
            // The next failed upload after the selection (from the top again after the last).
            guard let index = state.queue.nextFailed(after: state.queue.selected) else {
                state.message = StatusMessage("No failed uploads in the queue")
                return []
            }
            state.queue.selected = index
            state.queue.followLatest = false
        case .character("x"):
            let keep = state.queue.selectedID.flatMap { state.queue.state($0)?.outcome == nil ? $0 : nil }
            let cleared = state.queue.clearFinished()
            guard cleared > 0 else { return [] }
            state.queue.selected = keep.flatMap { state.queue.index(of: $0) } ?? 0
            state.queue.followLatest = true
            state.message = StatusMessage("Cleared \(cleared) finished")
        default:
            break
        }
        return []
    }

    /// When `row` was refused for its format, the status line says what `C` does about it.
    static func offerConversion(_ id: UploadID, _ row: TransferState, _ state: inout MonitorState) {
        guard let format = state.queue.formatRefused[id] else { return }
        state.message = StatusMessage(
            "\(InvisibleCharacters.escaped(row.name)) was refused for its format: C sends the refused photos again as \(format == .jpeg ? "JPEG" : "WebP")",
            isError: true)
    }

    /// `C`: every photo the server refused for its format queued again, converted to the format
    /// it asked for (the rest of the destination's settings kept).
    static func resendConverted(_ state: inout MonitorState) -> [MonitorEffect] {
        let refused = state.queue.takeFormatRefused()
        var items: [QueueItem] = []
        for (id, format) in refused {
            guard let row = state.queue.state(id), let path = row.record.path else { continue }
            var conversion = state.sendsAs ?? PhotoConversion()
            conversion.format = format
            items.append(
                QueueItem(
                    path: path, uploadName: row.name, stripLocation: row.record.withoutLocation,
                    modified: row.record.fileModified, changed: row.record.fileChanged, conversion: conversion))
        }
        guard !items.isEmpty else {
            state.message = StatusMessage("No photo was refused for its format", isError: true)
            return []
        }
        let format = items[0].conversion?.format == .webp ? "WebP" : "JPEG"
        state.message = StatusMessage("Sending \(items.count) refused photo\(items.count == 1 ? "" : "s") again as \(format)")
        return [.enqueue(items)]
    }

    /// Rebuilds rows from the agent's snapshot without a word, then says what finished while
    /// no monitor was watching: one summary line with the totals, a line for every failure and,
    /// when few finished, for each success; a notification each when few, else one.
    static func handleAttached(_ attachment: Reattachment, at time: EventTime, _ state: inout MonitorState) -> [MonitorEffect] {
        for record in attachment.records {
            state.queue.adopt(record, now: time.seconds, date: attachment.date)
        }
        let away = attachment.finishedWhileAway.compactMap { id in
            state.queue.state(id).flatMap { row in row.outcome.map { (id: id, row: row, outcome: $0) } }
        }
        let ok = away.count { $0.outcome.isSuccess }
        let totals = attachment.awayTotals ?? AwayTotals(ok: ok, failed: away.count - ok)
        guard totals.total > 0 else { return [] }
        let summary = "While you were away: \(totals.total) finished (\(totals.ok) ok, \(totals.failed) failed)"
        appendLog(&state, LogEntry(clock: time.clock, text: summary, kind: totals.failed == 0 ? .ok : .failed))
        let each = totals.total <= Self.awayOneByOne
        var effects: [MonitorEffect] = []
        for (id, row, outcome) in away where each || !outcome.isSuccess {
            let line = LogLine.finished(row, outcome: outcome)
            appendLog(&state, LogEntry(clock: time.clock, text: line, kind: outcome.isSuccess ? .ok : .failed))
            offerConversion(id, row, &state)
            if totals.total <= Self.awayNotifiedOneByOne { effects.append(.notify(title: "uploadmon", body: line)) }
        }
        if !each, totals.ok > 0 {
            appendLog(&state, LogEntry(clock: time.clock, text: "\(totals.ok) sent (not listed one by one)", kind: .ok))
        }
        if totals.total > Self.awayNotifiedOneByOne { effects.append(.notify(title: "uploadmon", body: summary)) }
        if state.queue.followLatest, let latest = away.last, let index = state.queue.index(of: latest.id) {
            state.queue.selected = index
        }
        return effects
    }

    /// Finished while away: up to this many get a log line each (failures always do)…
    static let awayOneByOne = 50
    /// …and up to this many a notification each (more: one for them all).
    static let awayNotifiedOneByOne = 10

    static func handleUpload(_ event: UploadEvent, at time: EventTime, _ state: inout MonitorState, quiet: Bool = false) -> [MonitorEffect] {
        var newRow: UploadID?
        if let id = event.uploadID, !state.queue.contains(id) {
            // Only a newly queued upload makes a row; events for cleared or unknown ids are stale.
            guard case .queued = event else { return [] }
            newRow = id
        } else if case .queued(let record) = event, let known = state.queue.state(record.id), !known.record.isFinished {
            // Said queued twice (the agent's reply to the enqueue, then its broadcast): the first
            // stands; the second may come after the upload started. Only a finished upload is
            // queued again (a retry).
            return []
        }
        state.queue.apply(event, now: time.seconds, date: time.date)
        if let newRow { state.queue.addRow(newRow) }
        switch event {
        case .resumable(let id, _, let why?):
            guard !quiet, let row = state.queue.state(id) else { break }
            appendLog(&state, LogEntry(clock: time.clock, text: "↺ \(row.name): starting over from 0: \(why)", kind: .info))
        case .queued, .started, .redirected, .resumable, .content, .response:
            break
        case .resumed(let id, let offset, let length):
            guard !quiet, let row = state.queue.state(id) else { break }
            appendLog(
                &state,
                LogEntry(
                    clock: time.clock,
                    text: "↻ \(row.name): \(row.record.resumedText ?? "resumed") (\(ByteFormat.bytes(offset)) of \(ByteFormat.bytes(length)) not sent again)",
                    kind: .info
                ))
        case .retryScheduled(let id, let attempt, let delay, let reason):
            guard !quiet else { break }
            let name = state.queue.state(id)?.name ?? id.description
            appendLog(
                &state,
                LogEntry(
                    clock: time.clock,
                    text: "↻ \(name): \(reason); attempt \(attempt) in \(ByteFormat.duration(delay))",
                    kind: .info
                ))
        case .finished(let id, let outcome):
            guard let row = state.queue.state(id) else { return [] }
            guard !quiet else { break }
            if state.queue.followLatest, let index = state.queue.index(of: id) { state.queue.selected = index }
            let line = LogLine.finished(row, outcome: outcome)
            appendLog(&state, LogEntry(clock: time.clock, text: line, kind: outcome.isSuccess ? .ok : .failed))
            offerConversion(id, row, &state)
            return [.notify(title: "uploadmon", body: line)]
        case .allFinished(let summary):
            // The queue counts what finished in each drain (retries by hand once, uploads
            // the agent has forgotten too).
            guard !quiet, summary.total > 0 else { break }
            let line = summary.finishedText(capitalized: true)
            appendLog(&state, LogEntry(clock: time.clock, text: line, kind: summary.failed == 0 ? .ok : .failed))
            return [.notify(title: "uploadmon", body: line)]
        case .progress:
            break
        }
        return []
    }
}

/// The words of the notification log, shared by the terminal notification.
public enum LogLine {
    /// `✓ cat.jpg → 200 in 1.4 s, 2.1 MB sent` (on the wire, the multipart framing included; the
    /// queue row shows the file's own size), `✗ big.png → 413 Payload Too Large`,
    /// `✗ x.png → cannot connect: Connection refused (code 111)`, `⊘ x.png cancelled`.
    public static func finished(_ row: TransferState, outcome: UploadOutcome) -> String {
        switch outcome {
        case .answered(let status) where (200..<300).contains(status):
            let took = row.elapsed.map { " in " + ByteFormat.duration($0) } ?? ""
            let saved = row.record.bytesSaved > 0 ? " (resumed: \(ByteFormat.bytes(row.record.bytesSaved)) not sent again)" : ""
            let cut = row.response?.cut.map { "; \($0)" } ?? ""
            let verified = row.response?.verifiedText.map { ", " + $0 } ?? ""
            return "✓ \(row.name) → \(status)\(took), \(ByteFormat.bytes(row.totalBytes ?? row.sentBytes)) sent\(verified)\(saved)\(cut)"
        case .answered:
            return "✗ \(row.name) → \(outcome.words(reason: row.response?.reason))"
        case .failed(let failure) where failure.kind == .cancelled:
            return "⊘ \(row.name) cancelled"
        case .failed(let failure):
            return "✗ \(row.name) → \(FailureText.line(failure))"
        }
    }
}
