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
    /// Whether an upload sends its photo without where it was taken.
    public func sendsWithoutLocation(_ id: UploadID) -> Bool { tracker[id]?.record.withoutLocation == true }

    /// The file an upload sends, when known.
    public func path(of id: UploadID) -> String? { tracker[id]?.record.path }

    /// What has happened to each file, by path, with the size it had: what the browser shows
    /// next to a file (kept up to date as uploads are queued and end, not on every progress).
    public private(set) var files: [String: FileUploadStatus] = [:]
    /// The content (SHA-256) of every upload that succeeded at the endpoint: a file with the same
    /// content shows as sent whatever it is called.
    public private(set) var sentContents: Set<String> = []

    /// Works `files` out again from the rows: a file being sent or waiting counts over one sent
    /// before, and one sent over one that failed. Uploads to another endpoint than `endpoint`
    /// (the agent's, queued elsewhere) do not count.
    mutating func refreshFiles(endpoint: String) {
        var files: [String: FileUploadStatus] = [:]
        var contents: Set<String> = []
        for id in rows {
            guard let row = tracker[id] else { continue }
            let url = row.record.url
            guard url.isEmpty || url == endpoint else { continue }
            if row.record.state == .succeeded, let sha256 = row.record.contentSHA256 { contents.insert(sha256) }
            guard let path = path(of: id) else { continue }
            let status = FileUploadStatus(row.record.state, size: row.record.fileSize, modified: row.record.fileModified,
                                          changed: row.record.fileChanged)
            if let known = files[path], known.rank >= status.rank { continue }
            files[path] = status
        }
        self.files = files
        sentContents = contents
    }

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

/// What has happened to a file at the current endpoint.
public struct FileUploadStatus: Sendable, Equatable {
    /// Where the file got to at this endpoint.
    public enum Kind: Sendable, Equatable { case queued, sending, sent, failed }
    public var kind: Kind
    /// The file's size and modification time when it was queued (each when known): a file that
    /// changed since is not the one sent.
    public var size: Int64?
    public var modified: Int64?
    /// The inode's change time when it was queued, when known.
    public var changed: Int64?

    /// Sent before under another name or path (same content).
    static let sentByContent = FileUploadStatus(.succeeded, size: nil)

    init(_ state: UploadState, size: Int64?, modified: Int64? = nil, changed: Int64? = nil) {
        self.modified = modified
        self.changed = changed
        switch state {
        case .queued, .waitingToRetry: kind = .queued
        case .sending: kind = .sending
        case .succeeded: kind = .sent
        case .failed: kind = .failed
        }
        self.size = size
    }

    var rank: Int {
        switch kind {
        case .failed: 0
        case .sent: 1
        case .queued: 2
        case .sending: 3
        }
    }

    /// Whether the file is up there (or on its way): `*` leaves these out the first time.
    public var isSentOrUnderWay: Bool { kind != .failed }
}

extension QueueState {
    /// The status of the file at `path` if it is still the file that was queued: same size, and
    /// the same modification and inode change times where the listing knows them. A file listed
    /// with a change time counts as sent only by a row that kept one (size and mtime can be put
    /// back by any tool; the change time cannot), else its content has to prove it.
    public func status(ofFile path: String, size: Int64, modified: Int64 = 0, changed: Int64 = 0) -> FileUploadStatus? {
        guard let status = files[path], status.size == nil || status.size == size else { return nil }
        if let queued = status.modified, modified != 0, queued != modified { return nil }
        if changed != 0 {
            if let queued = status.changed, queued != changed { return nil }
            if status.changed == nil, status.kind == .sent { return nil }
        }
        return status
    }
}
