import Foundation
import GRDB
import UploadCore

/// What a scheduled job does.
public enum JobKind: String, Sendable, Codable, DatabaseValueConvertible {
    /// Queue the new, fully written image files of a folder.
    case watch
    /// Prune old history, remove leftover temporary files, vacuum.
    case maintenance
}

/// A watched folder and how the files found in it are sent.
public struct WatchSpec: Sendable, Hashable, Codable {
    /// Absolute path of the folder; only its own entries are looked at, not subfolders.
    public var directory: String
    public var url: String
    public var field: String
    public var formFields: [FormField]
    /// Kept to send with every upload; never displayed or logged.
    var headers: [RequestHeader]
    public var allowAnyFile: Bool
    public var settings: TransportSettings
    /// Files whose content was already sent to `url` are passed over (`watch --skip-sent`).
    public var skipSent: Bool?

    /// `template` gives everything but the file and its name (its source and upload name are ignored).
    public init(directory: String, template: UploadRequest, settings: TransportSettings) {
        self.directory = directory
        url = template.url
        field = template.field
        formFields = template.formFields
        headers = template.headers
        allowAnyFile = template.allowAnyFile
        self.settings = settings
    }

    /// The upload of one file found in the folder, sent under its own name.
    public func request(forFileNamed name: String) -> UploadRequest {
        UploadRequest(
            source: .file(path: directory + "/" + name), url: url, field: field, uploadName: name,
            formFields: formFields, headers: headers,
            allowAnyFile: allowAnyFile)
    }
}

/// How the maintenance job tidies up.
public struct MaintenanceSpec: Sendable, Hashable, Codable {
    /// Finished uploads and events older than this are pruned.
    public var keepSeconds: Double

    public init(keepSeconds: Double = 7 * 86400) {
        self.keepSeconds = keepSeconds
    }
}

/// What a scheduled job does: scan a watched folder, or maintain the journal.
public enum JobSpec: Sendable, Hashable, Codable {
    case watch(WatchSpec)
    case maintenance(MaintenanceSpec)

    public var kind: JobKind {
        switch self {
        case .watch: .watch
        case .maintenance: .maintenance
        }
    }

    /// What makes a job unique: one job per watched folder, one maintenance job.
    var key: String {
        switch self {
        case .watch(let spec): "watch:" + spec.directory
        case .maintenance: "maintenance"
        }
    }
}

/// A job as the agent runs it (with what it needs, headers included).
public struct ScheduledJob: Sendable, Hashable {
    public let id: Int64
    public let spec: JobSpec
    public let intervalSeconds: Double
    public let earliestBeginAt: Date
    public let lastRunAt: Date?
}

/// A job as clients may see it: no headers.
public struct JobSnapshot: Sendable, Hashable, Codable {
    public var id: Int64
    public var kind: JobKind
    /// The watched folder, or "maintenance".
    public var title: String
    /// Where a watch sends files; what maintenance keeps.
    public var detail: String
    public var intervalSeconds: Double
    /// Not before this time (it runs at the first chance after it, if the agent runs then).
    public var earliestBeginAt: Date
    public var lastRunAt: Date?
    public var lastResult: String?
    public var lastFailed: Bool
    public var runs: Int
    public var createdAt: Date
    /// For a watch: files queued so far, files waiting for their size to settle, files passed over.
    public var filesQueued: Int
    public var filesPending: Int
    public var filesSkipped: Int
    /// Files parked after failing the same way look after look, and the first few of them as
    /// `name: reason`.
    public var filesParked: Int
    public var parked: [String]
}

/// One row of the `job` table.
struct JobRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "job"

    var id: Int64?
    var kind: JobKind
    var key: String
    var spec: JobSpec
    var intervalSeconds: Double
    var earliestBeginAt: Date
    var lastRunAt: Date?
    var lastResult: String?
    var lastFailed: Bool
    var runs: Int
    var createdAt: Date

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    var scheduled: ScheduledJob {
        ScheduledJob(id: id ?? 0, spec: spec, intervalSeconds: intervalSeconds, earliestBeginAt: earliestBeginAt, lastRunAt: lastRunAt)
    }

    func snapshot(counts: [WatchFileState: Int], parked: [String] = []) -> JobSnapshot {
        let title: String
        let detail: String
        switch spec {
        case .watch(let watch):
            title = watch.directory
            detail = "→ " + RedactedURL.display(watch.url)
        case .maintenance(let maintenance):
            title = "maintenance"
            detail = "keeps \(DurationText.format(maintenance.keepSeconds)) of history"
        }
        return JobSnapshot(
            id: id ?? 0, kind: kind, title: title, detail: detail, intervalSeconds: intervalSeconds,
            earliestBeginAt: earliestBeginAt, lastRunAt: lastRunAt, lastResult: lastResult, lastFailed: lastFailed,
            runs: runs, createdAt: createdAt, filesQueued: counts[.queued] ?? 0, filesPending: counts[.pending] ?? 0,
            filesSkipped: counts[.skipped] ?? 0, filesParked: counts[.parked] ?? 0, parked: parked)
    }
}

/// Where a file of a watched folder stands.
public enum WatchFileState: String, Sendable, Codable, DatabaseValueConvertible {
    /// Seen, but not yet with the same size and time twice in a row: maybe still being written.
    case pending
    /// Queued as an upload; never queued again while it stays in the folder.
    case queued
    /// Passed over (not an image…), with the reason in `note`.
    case skipped
    /// Failed the same way on `WatchScanner.parkAfter` looks in a row (unreadable, say), with the
    /// reason in `note`: not tried again until its size, modification time or permissions change.
    case parked
}

/// A file a watch job has seen (the `watch_file` table).
public struct WatchFile: Sendable, Hashable, Codable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "watch_file"

    public var jobID: Int64
    public var name: String
    public var size: Int64
    public var mtimeNs: Int64
    public var state: WatchFileState
    public var uploadID: Int64?
    public var note: String?
    public var firstSeenAt: Date
    public var updatedAt: Date
    /// Looks in a row at which the file failed the same way (`note` says how).
    public var failures: Int
    /// Its permissions and owner when last looked at (`0644 1000:1000`): a change of them is
    /// what may make an unreadable file readable.
    public var access: String?

    public init(
        jobID: Int64, name: String, fingerprint: FileFingerprint, state: WatchFileState, uploadID: Int64? = nil,
        note: String? = nil, access: String? = nil, failures: Int = 0, at now: Date
    ) {
        self.jobID = jobID
        self.name = name
        size = fingerprint.size
        mtimeNs = fingerprint.modificationNanoseconds
        self.state = state
        self.uploadID = uploadID
        self.note = note
        firstSeenAt = now
        updatedAt = now
        self.failures = failures
        self.access = access
    }

    public var fingerprint: FileFingerprint { FileFingerprint(size: size, modificationNanoseconds: mtimeNs) }
}

/// What one scan of a watched folder changes, applied in one transaction.
public struct WatchScanChanges: Sendable {
    /// Files seen for the first time or changed since the last scan (still settling).
    public var pending: [WatchFile] = []
    /// Files that left the folder: forgotten, so a new file under the same name is new.
    public var forgotten: [String] = []
    /// Files passed over, with the reason.
    public var skipped: [WatchFile] = []
    /// Files that failed again (still pending, one failure more) or are parked now.
    public var failed: [WatchFile] = []
    /// Settled files to queue: their name in the folder and the upload.
    public var queue: [(name: String, upload: NewUpload)] = []

    public init() {}

    public var isEmpty: Bool { pending.isEmpty && forgotten.isEmpty && skipped.isEmpty && failed.isEmpty && queue.isEmpty }
}
