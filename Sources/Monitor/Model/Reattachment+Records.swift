import Foundation
import UploadCore

extension Reattachment {
    /// What a monitor needs from the agent's records to show each upload as a monitor that
    /// watched it live would: its rows are rebuilt from the records' events, each dated as it
    /// happened (the URL the last attempt went to, a wait before a retry with its time left).
    /// `finishedWhileAway` are the uploads whose finish the monitor missed, in the order they
    /// finished; one that finished twice is told once, at its last finish, and only if it is
    /// finished now.
    public init(records: [UploadRecord], finishedWhileAway: [UploadID], at now: Date) {
        func ago(_ date: Date?) -> Double { date.map { max(0, now.timeIntervalSince($0)) } ?? 0 }
        var replay: [ReplayedEvent] = []
        for upload in records {
            let id = upload.id
            replay.append(ReplayedEvent(.queued(id, name: upload.name, totalBytes: upload.fileSize), secondsAgo: ago(upload.createdAt)))
            if upload.attempts > 0, upload.phase != .queued {
                replay.append(ReplayedEvent(
                    .started(id, attempt: upload.attempts, url: upload.url, totalBytes: upload.bytesExpected),
                    secondsAgo: ago(upload.startedAt ?? upload.createdAt)))
            }
            if case .sending = upload.phase, upload.bytesSent > 0 {
                replay.append(ReplayedEvent(
                    .progress(id, bytesSent: upload.bytesSent, totalBytesSent: upload.bytesSent, totalBytesExpected: upload.bytesExpected),
                    secondsAgo: 0))
            }
            if let response = upload.response {
                replay.append(ReplayedEvent(.response(id, response), secondsAgo: ago(upload.finishedAt ?? upload.startedAt)))
            }
            if case .waitingToRetry(let attempt, let reason, let due) = upload.phase {
                replay.append(ReplayedEvent(
                    .retryScheduled(id, attempt: attempt, delaySeconds: max(0, due.timeIntervalSince(now)), reason: reason),
                    secondsAgo: 0))
            }
            if let outcome = upload.outcome {
                replay.append(ReplayedEvent(.finished(id, outcome), secondsAgo: ago(upload.finishedAt)))
            }
        }
        var seen = Set<UploadID>()
        let once = finishedWhileAway.reversed().filter { seen.insert($0).inserted }.reversed()
        let current = Set(records.filter(\.isFinished).map(\.id))
        self.init(replay: replay, finishedWhileAway: once.filter { current.contains($0) })
    }
}
