import UploadCore
import Foundation
import GRDB

extension Journal {
    /// Adds the job, or updates the one with the same key (the same watched folder): its spec and
    /// interval are replaced and its next run set to `firstRunAt`; what a watch has seen stays.
    /// Returns the job and whether it is new.
    public func registerJob(_ spec: JobSpec, every interval: Double, firstRunAt: Date, at now: Date) throws -> (JobSnapshot, created: Bool) {
        try pool.write { db in
            if var row = try JobRow.filter(Column("key") == spec.key).fetchOne(db) {
                row.spec = spec
                row.intervalSeconds = interval
                row.earliestBeginAt = Self.readable(firstRunAt)
                try row.update(db)
                return (try Self.snapshot(of: row, db), false)
            }
            var row = JobRow(
                id: nil, kind: spec.kind, key: spec.key, spec: spec, intervalSeconds: interval,
                earliestBeginAt: Self.readable(firstRunAt), lastRunAt: nil, lastResult: nil, lastFailed: false, runs: 0, createdAt: now)
            try row.insert(db)
            return (try Self.snapshot(of: row, db), true)
        }
    }

    /// Adds the job only when no job has its key (the default maintenance job).
    @discardableResult
    public func ensureJob(_ spec: JobSpec, every interval: Double, firstRunAt: Date, at now: Date) throws -> Bool {
        try pool.write { db in
            guard try JobRow.filter(Column("key") == spec.key).fetchCount(db) == 0 else { return false }
            var row = JobRow(
                id: nil, kind: spec.kind, key: spec.key, spec: spec, intervalSeconds: interval,
                earliestBeginAt: Self.readable(firstRunAt), lastRunAt: nil, lastResult: nil, lastFailed: false, runs: 0, createdAt: now)
            try row.insert(db)
            return true
        }
    }

    /// Removes a job and what it has seen. Returns whether it existed.
    @discardableResult
    public func removeJob(_ id: Int64) throws -> Bool {
        try pool.write { db in try JobRow.deleteOne(db, key: id) }
    }

    /// Every job, as the agent runs them.
    public func scheduledJobs() throws -> [ScheduledJob] {
        try pool.read { db in try JobRow.order(Column("id")).fetchAll(db).map(\.scheduled) }
    }

    /// Job `id`, or nil when there is none.
    public func scheduledJob(_ id: Int64) throws -> ScheduledJob? {
        try pool.read { db in try JobRow.fetchOne(db, key: id)?.scheduled }
    }

    /// Every job, as clients may see them.
    public func jobSnapshots() throws -> [JobSnapshot] {
        try pool.read { db in
            try JobRow.order(Column("id")).fetchAll(db).map { try Self.snapshot(of: $0, db) }
        }
    }

    static func snapshot(of row: JobRow, _ db: Database) throws -> JobSnapshot {
        var counts: [WatchFileState: Int] = [:]
        let rows = try Row.fetchAll(db, sql: "SELECT state, COUNT(*) FROM watch_file WHERE jobID = ? GROUP BY state", arguments: [row.id])
        for counted in rows {
            if let state = WatchFileState(rawValue: counted[0]) { counts[state] = counted[1] }
        }
        let parked = try Row.fetchAll(
            db, sql: "SELECT name, note FROM watch_file WHERE jobID = ? AND state = 'parked' ORDER BY name LIMIT 3", arguments: [row.id]
        ).map { "\($0[0] as String): \(($0[1] as String?) ?? "failed")" }
        return row.snapshot(counts: counts, parked: parked)
    }

    /// Marks a run as begun: the next one may not begin before `now` + the interval, whatever
    /// happens to this one (a crash included), so a job never runs more often than asked.
    /// Returns the job, or `nil` when it was removed meanwhile.
    public func beginJobRun(_ id: Int64, at now: Date) throws -> ScheduledJob? {
        try pool.write { db in
            guard var row = try JobRow.fetchOne(db, key: id) else { return nil }
            row.lastRunAt = now
            row.earliestBeginAt = Self.readable(now.addingTimeInterval(row.intervalSeconds))
            row.runs += 1
            try row.update(db)
            return row.scheduled
        }
    }

    /// Notes how a run went.
    public func endJobRun(_ id: Int64, result: String, failed: Bool) throws {
        try pool.write { db in
            try db.execute(sql: "UPDATE job SET lastResult = ?, lastFailed = ? WHERE id = ?", arguments: [result, failed, id])
        }
    }

    /// Moves a job's next run (`uploadmon jobs run`: now).
    @discardableResult
    public func rescheduleJob(_ id: Int64, earliestBeginAt: Date) throws -> Bool {
        try pool.write { db in
            try db.execute(sql: "UPDATE job SET earliestBeginAt = ? WHERE id = ?", arguments: [earliestBeginAt, id])
            return db.changesCount > 0
        }
    }

    // MARK: Watched folders

    /// What a watch job has seen, by file name.
    public func watchFiles(_ jobID: Int64) throws -> [String: WatchFile] {
        try pool.read { db in
            let files = try WatchFile.filter(Column("jobID") == jobID).fetchAll(db)
            return Dictionary(files.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// Applies one scan in a single transaction: the uploads are added and their files marked
    /// queued together, so a crash can neither lose a file nor queue it twice. Returns the added
    /// uploads, in the order given; none when the job was removed meanwhile.
    public func applyWatchScan(_ jobID: Int64, _ changes: WatchScanChanges, at now: Date) throws -> [UploadRecord] {
        guard !changes.isEmpty else { return [] }
        return try pool.write { db in
            guard try JobRow.fetchOne(db, key: jobID) != nil else { return [] }
            for name in changes.forgotten {
                try WatchFile.deleteOne(db, key: ["jobID": jobID, "name": name])
            }
            for file in changes.pending + changes.skipped + changes.failed {
                var file = file
                if let seen = try WatchFile.fetchOne(db, key: ["jobID": jobID, "name": file.name]) {
                    file.firstSeenAt = seen.firstSeenAt
                }
                file.updatedAt = now
                try file.save(db)
            }
            var added: [UploadRecord] = []
            for (name, upload) in changes.queue {
                var row = UploadRow(new: upload, at: now)
                try row.insert(db)
                var file = WatchFile(jobID: jobID, name: name, fingerprint: upload.fingerprint, state: .queued, uploadID: row.id, at: now)
                if let seen = try WatchFile.fetchOne(db, key: ["jobID": jobID, "name": name]) {
                    file.firstSeenAt = seen.firstSeenAt
                }
                try file.save(db)
                added.append(row.record)
            }
            return added
        }
    }

    /// The latest date the journal writes: its dates are text (`YYYY-MM-DD HH:MM:SS.SSS`), and a
    /// year past 9999 would be written but never read back, so every later read would fail.
    static let latestReadableDate = Date(timeIntervalSince1970: 253_402_300_799)  // 9999-12-31 23:59:59 UTC

    /// `date`, kept where the journal can read it back (NaN intervals give the epoch).
    static func readable(_ date: Date) -> Date {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds > 0 else { return Date(timeIntervalSince1970: 0) }
        return min(date, latestReadableDate)
    }
}
