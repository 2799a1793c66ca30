import Foundation
import GRDB
import UploadCore

/// What the journal holds, read: uploads' records, counts by state, the event log.
extension Journal {
    /// Upload `id`'s record as the journal has it now.
    public func snapshot(_ id: UploadID) throws -> UploadRecord? {
        try pool.read { db in try UploadRow.fetchOne(db, key: Int64(id.rawValue))?.record }
    }

    /// Uploads, oldest first; with `limit`, the most recent `limit` of them.
    public func snapshots(limit: Int? = nil) throws -> [UploadRecord] {
        try pool.read { db in
            var request = UploadRow.order(UploadRow.Columns.id.desc)
            if let limit { request = request.limit(limit) }
            return try request.fetchAll(db).reversed().map(\.record)
        }
    }

    /// The failed uploads before upload `id`, oldest first: the newest `limit` of them.
    public func failed(before id: UploadID, limit: Int) throws -> [UploadRecord] {
        try pool.read { db in
            try UploadRow.filter(UploadRow.Columns.state == UploadState.failed.rawValue && UploadRow.Columns.id < Int64(id.rawValue))
                .order(UploadRow.Columns.id.desc).limit(limit).fetchAll(db).reversed().map(\.record)
        }
    }

    /// The uploads whose end was logged after `seq`, by how they stand now: succeeded and
    /// failed (each once, however often it ended), counted by SQLite over the log's range.
    public func finishedCounts(after seq: Int64) throws -> (succeeded: Int, failed: Int) {
        try pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT u.state, COUNT(DISTINCT u.id) FROM event e JOIN upload u ON u.id = e.uploadID
                    WHERE e.seq > ? AND e.kind = 'finished' GROUP BY u.state
                    """, arguments: [seq])
            var counts = (succeeded: 0, failed: 0)
            for row in rows {
                let state: String = row[0]
                if state == UploadState.succeeded.rawValue { counts.succeeded = row[1] }
                if state == UploadState.failed.rawValue { counts.failed = row[1] }
            }
            return counts
        }
    }

    /// How many uploads are in each unfinished state, counted by SQLite: an agent asked for its
    /// status with 100,000 uploads waiting reads no row.
    public func unfinishedCounts() throws -> [UploadState: Int] {
        try pool.read { db in
            var counts: [UploadState: Int] = [:]
            let rows = try Row.fetchAll(
                db, sql: "SELECT state, COUNT(*) FROM upload WHERE state NOT IN (?, ?) GROUP BY state",
                arguments: [UploadState.succeeded, UploadState.failed])
            for row in rows {
                if let state = UploadState(rawValue: row[0]) { counts[state] = row[1] }
            }
            return counts
        }
    }

    /// How many uploads are in each state, over the whole journal (not only the rows shown).
    public func stateCounts() throws -> [UploadState: Int] {
        try pool.read { db in
            var counts: [UploadState: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) FROM upload GROUP BY state") {
                if let state = UploadState(rawValue: row[0]) { counts[state] = row[1] }
            }
            return counts
        }
    }

    /// The ids of the uploads in `states`, oldest first.
    public func ids(in states: [UploadState]) throws -> [UploadID] {
        try pool.read { db in
            try Int64.fetchAll(
                db,
                UploadRow.select(UploadRow.Columns.id).filter(states.map(\.rawValue).contains(UploadRow.Columns.state))
                    .order(UploadRow.Columns.id)
            ).map { UploadID(Int($0)) }
        }
    }

    /// Logged events after `seq`, oldest first, at most `limit`.
    public func entries(after seq: Int64, limit: Int = 100_000) throws -> [JournalEntry] {
        try pool.read { db in
            try EventRow.filter(Column("seq") > seq).order(Column("seq")).limit(limit).fetchAll(db)
                .map { JournalEntry(seq: $0.seq ?? 0, event: $0.event, at: $0.at) }
        }
    }

    /// The newest sequence number ever logged (0 for a new journal), pruned events included.
    public func lastSequence() throws -> Int64 {
        try pool.read { db in
            let logged = try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM event") ?? 0
            let ever = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'event'") ?? 0
            return max(logged, ever)
        }
    }
}
