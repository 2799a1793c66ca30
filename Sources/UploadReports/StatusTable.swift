import Foundation
import UploadAgent
import UploadCore

/// The plain-text form of `status`.
public enum StatusTable {
    public static func agentLine(_ agent: AgentStatus?, unfinished: Int) -> String {
        guard let agent else {
            return unfinished > 0
                ? "Agent: not running. \(unfinished) unfinished upload(s) continue when it starts (`uploadmon agent`, or any `send --background`)."
                : "Agent: not running."
        }
        return "Agent: running (pid \(agent.pid)), \(agent.running) sending, \(agent.queued) waiting, \(agent.clients - 1) other client(s) attached."
    }

    /// The agent's settings: those in force when it runs, else those its next start reads.
    public static func settingsLine(_ settings: AgentSettings, running: Bool, now: Date, calendar: Calendar = .current) -> String {
        "Settings: \(settings.inForce(at: now, calendar: calendar))"
            + (running ? "." : " (at its next start).")
    }

    /// The table `uploadmon status` prints, one row per upload.
    public static func render(_ uploads: [UploadRecord], now: Date) -> String {
        let header = ["ID", "STATE", "NAME", "TO", "PROGRESS", "ANSWER", "QUEUED"]
        var rows = [header]
        for upload in uploads {
            rows.append([
                upload.id.description, upload.state.rawValue, upload.name, RedactedURL.display(upload.url), progress(upload), answer(upload, now: now),
                LocalTime.format(upload.createdAt, .seconds),
            ])
        }
        return Table.render(rows)
    }

    /// Every upload of the journal by state, however many rows the table shows:
    /// "All 20000 uploads: 19990 sent · 6 failed · 4 queued (the newest 50 shown; --limit N for more)".
    public static func totalsLine(_ counts: [UploadState: Int], shown: Int) -> String {
        let total = counts.values.reduce(0, +)
        var parts: [String] = []
        for (state, word) in [
            (UploadState.succeeded, "sent"), (.failed, "failed or cancelled"), (.sending, "sending"), (.waitingToRetry, "waiting to retry"),
            (.queued, "queued"),
        ] {
            if let count = counts[state], count > 0 { parts.append("\(count) \(word)") }
        }
        let more = total > shown ? " (the newest \(shown) shown; --limit N shows more)" : ""
        return "All \(total) upload\(total == 1 ? "" : "s"): " + parts.joined(separator: " · ") + more
    }

    public static func progress(_ upload: UploadRecord) -> String {
        let total = upload.bytesExpected ?? upload.fileSize
        switch upload.state {
        case .succeeded:
            let saved = upload.bytesSaved > 0 ? " (\(ByteFormat.bytes(upload.bytesSaved)) not sent again)" : ""
            return ByteFormat.bytes(upload.fileSize ?? 0) + saved
        case .sending:
            guard let total, total > 0 else { return ByteFormat.bytes(upload.bytesSent) }
            let resumed = upload.resumedText.map { " (\($0))" } ?? ""
            // Numbers read back from the journal: a damaged row shows as 100 %, never a trap.
            let percent = BoundedNumber.integer(Double(upload.bytesSent) * 100 / Double(total)).map { min(100, max(0, $0)) } ?? 100
            return "\(percent) % of \(ByteFormat.bytes(total))\(resumed)"
        case .queued, .waitingToRetry, .failed:
            let size = upload.fileSize.map(ByteFormat.bytes) ?? ""
            return upload.keptText().map { size.isEmpty ? $0 : size + " (" + $0 + ")" } ?? size
        }
    }

    public static func answer(_ upload: UploadRecord, now: Date) -> String {
        switch upload.phase {
        case .finished(let outcome):
            let verified = upload.response?.verifiedText.map { " " + $0 } ?? ""
            return outcome.words(reason: upload.response?.reason) + verified + (upload.response?.cut.map { " (\($0))" } ?? "")
        case .waitingToRetry(_, _, let due):
            return upload.phase.waitingText(secondsLeft: due.timeIntervalSince(now)) ?? ""
        case .queued, .sending:
            return ""
        }
    }
}
