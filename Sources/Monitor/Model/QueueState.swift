import Foundation
import UploadCore

/// The uploads the monitor has seen, in queue order, and which row is selected.
///
/// Everything the views and the browser ask of the whole queue (counts by state, the overall
/// bar's bytes, each file's status, the contents sent) is kept up to date by what each event
/// changed, never worked out again over every row: with 20,000 photos queued, one event costs
/// what one upload's change costs, and a frame what the rows on screen cost.
public struct QueueState: Sendable {
    public private(set) var tracker = TransferTracker()
    /// Rows on show (finished rows leave with `x`).
    public private(set) var rows: [UploadID] = []
    /// Where each row is in `rows`.
    private var position: [UploadID: Int] = [:]
    public var selected = 0
    public var offset = 0
    /// While true the selection jumps to each upload that finishes, so the response panel shows
    /// the latest answer; moving the selection by hand turns it off.
    public var followLatest = true
    /// The endpoint whose files the browser marks (uploads queued elsewhere for the agent's
    /// other endpoints do not count); changing it counts the rows again.
    public var endpoint = "" {
        didSet { if endpoint != oldValue { recount() } }
    }

    /// What has happened to each file, by path, with the size it had: what the browser shows
    /// next to a file (kept up to date as uploads are queued and end, not on every progress).
    public private(set) var files: [String: FileUploadStatus] = [:]
    /// The content (SHA-256) of every upload that succeeded at the endpoint: a file with the same
    /// content shows as sent whatever it is called.
    public private(set) var sentContents: Set<String> = []
    /// How many succeeded rows have each content.
    private var contentRows: [String: Int] = [:]
    /// The rows of each path at the endpoint, in queue order (a file queued again has two).
    private var pathRows: [String: [UploadID]] = [:]
    /// Counts and bytes over every row.
    public private(set) var tally = QueueTally()
    /// Rows that are sending or waiting to retry: the only ones whose bytes move and whose
    /// rate counts, however long the queue.
    public private(set) var moving: Set<UploadID> = []
    /// The failed rows, for jumping from one to the next (`nextFailed`).
    public private(set) var failedRows: Set<UploadID> = []
    /// The rows the server refused for their format, which a conversion would answer
    /// (`FormatRefusal`), each with the format it wants: `C` sends them again converted.
    public private(set) var formatRefused: [UploadID: PhotoConversion.Format] = [:]
    /// Rows refused for their format that `C` sent again already: counting the rows again (the
    /// endpoint changed) must not offer them a second time.
    private var resentForFormat: Set<UploadID> = []

    public init() {}

    /// Whether an upload sends its photo without where it was taken.
    public func sendsWithoutLocation(_ id: UploadID) -> Bool { tracker[id]?.record.withoutLocation == true }

    /// The file an upload sends, when known.
    public func path(of id: UploadID) -> String? { tracker[id]?.record.path }

    public var selectedID: UploadID? { rows.indices.contains(selected) ? rows[selected] : nil }

    public func state(_ id: UploadID) -> TransferState? { tracker[id] }

    /// Whether `id` has a row.
    public func contains(_ id: UploadID) -> Bool { position[id] != nil }

    /// Where `id`'s row is, when it has one.
    public func index(of id: UploadID) -> Int? { position[id] }

    /// Uploads queued or sending.
    public var activeCount: Int { tally.active }

    public var counts: (active: Int, ok: Int, failed: Int) { (tally.active, tally.ok, tally.failed) }

    // MARK: Changes

    /// A row for an upload just queued (nothing when it has one).
    mutating func addRow(_ id: UploadID) {
        guard position[id] == nil else { return }
        position[id] = rows.count
        rows.append(id)
        if let row = tracker[id] { count(id, row, sign: 1) }
    }

    /// Applies one event to its upload and to what the queue keeps of it.
    mutating func apply(_ event: UploadEvent, now: Double, date: Date) {
        guard let id = event.uploadID else {
            tracker.apply(event, now: now, date: date)
            return
        }
        let before = tracker[id]
        tracker.apply(event, now: now, date: date)
        changed(id, from: before)
    }

    /// Takes an upload as the agent has it (on attaching), with a row.
    mutating func adopt(_ record: UploadRecord, now: Double, date: Date) {
        let before = tracker[record.id]
        tracker.adopt(record, now: now, date: date)
        if contains(record.id) { changed(record.id, from: before) } else { addRow(record.id) }
    }

    /// Folds "nothing more was sent" into the rates of the uploads that are sending.
    mutating func sampleRates(now: Double) {
        tracker.sampleRates(moving, now: now)
    }

    /// Removes the finished rows (`x`); returns how many went.
    mutating func clearFinished() -> Int {
        let finished = Set(rows.filter { tracker[$0]?.outcome != nil })
        guard !finished.isEmpty else { return 0 }
        rows.removeAll { finished.contains($0) }
        tracker.forget(finished)
        resentForFormat.subtract(finished)
        recount()
        return finished.count
    }

    /// `id`'s row changed from `before`: its old share of the tallies goes, its new one comes.
    /// Progress moves bytes only; the file's status and the contents sent change with its state.
    private mutating func changed(_ id: UploadID, from before: TransferState?) {
        guard position[id] != nil, let after = tracker[id] else { return }
        guard let before else { return count(id, after, sign: 1) }
        tally.add(QueueTally(before), sign: -1)
        tally.add(QueueTally(after), sign: 1)
        let (was, now) = (before.record, after.record)
        guard
            was.phase != now.phase || was.contentSHA256 != now.contentSHA256 || was.path != now.path || was.url != now.url
                || was.fileSize != now.fileSize || was.fileModified != now.fileModified || was.fileChanged != now.fileChanged
        else { return }
        files(id, before, sign: -1)
        files(id, after, sign: 1)
    }

    /// Adds (`sign` 1) or takes away (-1) what `row` counts for.
    private mutating func count(_ id: UploadID, _ row: TransferState, sign: Int) {
        tally.add(QueueTally(row), sign: sign)
        files(id, row, sign: sign)
    }

    /// What `row` counts for beyond its bytes: whether it moves or failed, its content among
    /// those sent, its file's status.
    private mutating func files(_ id: UploadID, _ row: TransferState, sign: Int) {
        if sign > 0 {
            switch row.record.phase {
            case .sending, .waitingToRetry: moving.insert(id)
            case .queued, .finished: moving.remove(id)
            }
            if let outcome = row.outcome, !outcome.isSuccess { failedRows.insert(id) } else { failedRows.remove(id) }
            formatRefused[id] = resentForFormat.contains(id) ? nil : Self.wantedFormat(row)
        }
        let url = row.record.url
        guard url.isEmpty || url == endpoint else { return }
        if row.record.state == .succeeded, let sha256 = row.record.contentSHA256 {
            let left = (contentRows[sha256] ?? 0) + sign
            contentRows[sha256] = left > 0 ? left : nil
            if left > 0 { sentContents.insert(sha256) } else { sentContents.remove(sha256) }
        }
        guard let path = row.record.path else { return }
        if sign > 0, !(pathRows[path]?.contains(id) ?? false) { pathRows[path, default: []].append(id) }
        // The file's status from its own rows (a file queued again: a few), the first of the
        // highest rank in queue order.
        if sign > 0 { files[path] = status(ofPath: path) }
    }

    /// The status of `path` from its rows: one being sent or waiting counts over one sent
    /// before, and one sent over one that failed.
    private func status(ofPath path: String) -> FileUploadStatus? {
        var best: FileUploadStatus?
        for id in pathRows[path] ?? [] {
            guard let row = tracker[id] else { continue }
            let status = FileUploadStatus(
                row.record.state, size: row.record.fileSize, modified: row.record.fileModified,
                changed: row.record.fileChanged)
            if let known = best, known.rank >= status.rank { continue }
            best = status
        }
        return best
    }

    /// Every tally counted again from the rows (the endpoint changed, rows were cleared).
    private mutating func recount() {
        position = [:]
        for (index, id) in rows.enumerated() { position[id] = index }
        (files, sentContents, contentRows, pathRows, tally, moving, failedRows, formatRefused) = ([:], [], [:], [:], QueueTally(), [], [], [:])
        for id in rows {
            if let row = tracker[id] { count(id, row, sign: 1) }
        }
    }

    /// The format `row`'s server asked for when it refused the photo for its format; nil when it
    /// did not, or the photo went converted already (its identity names the conversion).
    static func wantedFormat(_ row: TransferState) -> PhotoConversion.Format? {
        guard case .answered? = row.outcome, let response = row.response, row.record.sourceSHA256 == nil else { return nil }
        return FormatRefusal.wanted(name: row.name, response: response, conversion: nil)
    }

    /// The rows refused for their format, in queue order, taken out of `formatRefused` (they
    /// are being sent again).
    mutating func takeFormatRefused() -> [(id: UploadID, format: PhotoConversion.Format)] {
        let taken = formatRefused.sorted { (position[$0.key] ?? 0) < (position[$1.key] ?? 0) }.map { (id: $0.key, format: $0.value) }
        formatRefused = [:]
        resentForFormat.formUnion(taken.map(\.id))
        return taken
    }

    /// The next failed row after the selection (wrapping), when there is one.
    public func nextFailed(after index: Int) -> Int? {
        let positions = failedRows.compactMap { position[$0] }
        return positions.filter { $0 > index }.min() ?? positions.min()
    }
}

/// Counts and bytes over the queue's rows, kept by adding each row's share as it changes.
public struct QueueTally: Sendable, Equatable {
    public var active = 0, ok = 0, failed = 0
    /// Each row's body length (the file's size before it starts), added up.
    public var totalBytes: Int64 = 0
    /// What finished rows count whole and the others have sent so far.
    public var sentBytes: Int64 = 0
    public var done: Int { ok + failed }

    public init() {}

    /// One row's share.
    init(_ row: TransferState) {
        let size = row.totalBytes ?? row.sentBytes
        totalBytes = size
        if let outcome = row.outcome {
            sentBytes = size
            if outcome.isSuccess { ok = 1 } else { failed = 1 }
        } else {
            sentBytes = row.sentBytes
            active = 1
        }
    }

    mutating func add(_ share: QueueTally, sign: Int) {
        active += sign * share.active
        ok += sign * share.ok
        failed += sign * share.failed
        totalBytes += Int64(sign) * share.totalBytes
        sentBytes += Int64(sign) * share.sentBytes
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
