import Foundation
import GRDB

/// What a maintenance pass removed.
public struct PruneResult: Sendable, Hashable, Codable {
    public var uploads: Int
    public var events: Int

    public init(uploads: Int, events: Int) {
        self.uploads = uploads
        self.events = events
    }
}

extension Journal {
    /// Removes finished uploads that finished before `cutoff`, and events older than `cutoff`
    /// that belong to no unfinished upload. Unfinished uploads and their history always stay.
    public func prune(finishedBefore cutoff: Date) throws -> PruneResult {
        try pool.write { db in
            inFlight.withLock { $0 = InFlightRows() }
            try db.execute(
                sql: "DELETE FROM upload WHERE state IN ('succeeded', 'failed') AND finishedAt < ?",
                arguments: [cutoff])
            let uploads = db.changesCount
            try db.execute(
                sql: """
                    DELETE FROM event WHERE at < ? AND (uploadID IS NULL OR uploadID NOT IN
                        (SELECT id FROM upload WHERE state NOT IN ('succeeded', 'failed')))
                    """,
                arguments: [cutoff])
            return PruneResult(uploads: uploads, events: db.changesCount)
        }
    }

    /// Rebuilds the file when at least a quarter of it (and at least 1 MiB) is free pages.
    /// Returns whether it vacuumed.
    @discardableResult
    public func vacuumIfWorthwhile() throws -> Bool {
        let (free, total, pageSize) = try pool.read { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0,
                try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0,
                try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            )
        }
        guard total > 0, free * 4 >= total, free * pageSize >= 1 << 20 else { return false }
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        return true
    }

    /// How many rows each of the journal's tables holds (for `journal-bench` and diagnostics).
    public func tableCounts() throws -> [String: Int] {
        try? drainSentLog()
        try settleSent()
        return try pool.read { db in
            var counts: [String: Int] = [:]
            for table in ["upload", "event", "job", "watch_file", "sentContent", "contentCache", "sentPending"] {
                counts[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \"\(table)\"") ?? 0
            }
            return counts
        }
    }

    /// The journal's size on disk, the write-ahead log included.
    public func sizeOnDisk() -> Int64 {
        [path, path + "-wal", path + "-shm"].reduce(Int64(0)) { sum, file in
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value ?? 0
            return sum + size
        }
    }
}
