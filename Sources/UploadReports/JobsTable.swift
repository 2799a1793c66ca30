import Foundation
import UploadAgent
import UploadCore
import UploadJournal

/// The plain-text form of `jobs`.
public enum JobsTable {
    public static func agentLine(_ agent: AgentStatus?, watches: Int) -> String {
        guard let agent else {
            return watches > 0
                ? "Agent: not running, so watched folders are not looked at until it starts (`uploadmon agent`, `send --background` or the monitor start it)."
                : "Agent: not running; due jobs run when it next starts."
        }
        return "Agent: running (pid \(agent.pid))."
    }

    /// The table `uploadmon jobs` prints, one row per job, next runs counted from `now`.
    public static func render(_ jobs: [JobSnapshot], now: Date, agentRuns: Bool) -> String {
        let header = ["ID", "JOB", "EVERY", "LAST RUN", "RESULT", "NEXT RUN"]
        var rows = [header]
        for job in jobs {
            rows.append([
                String(job.id), describe(job), DurationText.format(job.intervalSeconds),
                job.lastRunAt.map(timestamp) ?? "never", result(job), next(job, now: now, agentRuns: agentRuns),
            ])
        }
        return Table.render(rows)
    }

    public static func describe(_ job: JobSnapshot) -> String {
        switch job.kind {
        case .watch:
            var text = "watch \(job.title) \(job.detail)"
            text += " (\(job.filesQueued) queued"
            if job.filesPending > 0 { text += ", \(job.filesPending) settling" }
            if job.filesSkipped > 0 { text += ", \(job.filesSkipped) passed over" }
            if job.filesParked > 0 {
                text += ", \(job.filesParked) parked until changed: " + job.parked.joined(separator: "; ")
                if job.filesParked > job.parked.count { text += "; …" }
            }
            return text + ")"
        case .maintenance:
            return "maintenance, \(job.detail)"
        }
    }

    public static func result(_ job: JobSnapshot) -> String {
        guard let result = job.lastResult else { return "" }
        return job.lastFailed ? "FAILED: " + result : result
    }

    public static func next(_ job: JobSnapshot, now: Date, agentRuns: Bool) -> String {
        let wait = job.earliestBeginAt.timeIntervalSince(now)
        if wait <= 0 { return agentRuns ? "now" : "when the agent starts" }
        return "\(timestamp(job.earliestBeginAt)) (in \(DurationText.countdown(wait)))" + (agentRuns ? "" : ", if the agent runs")
    }

    public static func timestamp(_ date: Date) -> String {
        LocalTime.format(date, .seconds)
    }
}
