import UploadCore

/// The uploads the monitor has seen, in queue order, and which row is selected.
public struct QueueState: Sendable {
    public var tracker = TransferTracker()
    /// Rows on show (finished rows leave with `x`).
    public var rows: [UploadID] = []
    public var selected = 0
    public var offset = 0
    /// While true the selection jumps to each upload that finishes, so the response panel shows
    /// the latest answer; moving the selection by hand turns it off.
    public var followLatest = true
    /// Formatted answers, made once when the answer arrives rather than on every frame.
    public var answers: [UploadID: AnswerDigest] = [:]
    /// Uploads queued since the queue last drained: the "All N uploads finished" line counts these.
    public var batch: Set<UploadID> = []
    /// The file of each upload queued from this monitor (the queue's events name it only):
    /// paths handed to the queue wait here, by upload name, until their upload is queued.
    public var paths: [UploadID: String] = [:]
    var pendingPaths: [String: [String]] = [:]

    /// The file an upload sends, when known.
    public func path(of id: UploadID) -> String? { tracker[id]?.record.path ?? paths[id] }

    public init() {}

    public var selectedID: UploadID? { rows.indices.contains(selected) ? rows[selected] : nil }

    public func state(_ id: UploadID) -> TransferState? { tracker[id] }

    /// Uploads queued or sending.
    public var activeCount: Int { rows.count { tracker[$0]?.outcome == nil } }

    public var counts: (active: Int, ok: Int, failed: Int) {
        var active = 0, ok = 0, failed = 0
        for id in rows {
            guard let outcome = tracker[id]?.outcome else { active += 1; continue }
            if outcome.isSuccess { ok += 1 } else { failed += 1 }
        }
        return (active, ok, failed)
    }
}
