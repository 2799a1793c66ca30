import Foundation
import GRDB
import UploadCore

extension Journal {
    // MARK: Recovery

    /// After the agent stopped (or died) with uploads unfinished: the ones that were sending or
    /// waiting to retry go back to queued, with a logged note, and every unfinished upload is
    /// returned in the order it was queued, to be started again. Finished ones stay finished.
    public func recover(at now: Date) throws -> [PendingUpload] {
        try pending(recoverQueue(at: now))
    }

    /// As `recover`, returning the ids alone: an agent with thousands of uploads waiting reads
    /// them a window at a time (`pending`), not all at once.
    public func recoverQueue(at now: Date) throws -> [UploadID] {
        try pool.write { db in
            inFlight.withLock { $0 = InFlightRows() }
            let interrupted = try UploadRow.filter([UploadState.sending, .waitingToRetry].contains(UploadRow.Columns.state)).fetchAll(db)
            for var row in interrupted {
                // Through the fold, as every event: the upload waits to be retried at once.
                let note = UploadEvent.retryScheduled(
                    row.uploadID, attempt: row.attempts + 1, delaySeconds: 0,
                    reason: row.state == .sending
                        ? "the agent stopped during attempt \(row.attempts) after \(row.bytesSent) bytes; "
                            + (row.resume == nil ? "sending again from the start" : "continuing where the server has it")
                        : "the agent stopped while the upload waited to retry")
                var record = row.record
                record.apply(note, at: now)
                row.store(record)
                row.updatedAt = now
                try row.update(db)
                var entry = EventRow(seq: nil, uploadID: row.id, kind: "retryScheduled", event: note, at: now)
                try entry.insert(db)
            }
            return try UploadRow.select(UploadRow.Columns.id, as: Int64.self)
                .filter([UploadState.queued, .waitingToRetry].contains(UploadRow.Columns.state))
                .order(UploadRow.Columns.id).fetchAll(db)
                .map { UploadID(Int($0)) }
        }
    }

    /// The uploads among `ids` that wait to be sent (queued, or waiting to retry after a
    /// restart), in the order given. Their rows are kept for the events that follow (their
    /// start comes soon), as those of uploads just added are.
    public func pending(_ ids: [UploadID]) throws -> [PendingUpload] {
        guard !ids.isEmpty else { return [] }
        // On the writing connection: rows kept for `record` are checked against its data version.
        return try pool.write { db in
            let version = try Self.dataVersion(db)
            // One statement whatever the number of ids (a JSON array), read by position.
            let rows = try UploadRow.fetchAll(columns: db.cachedStatement(sql: Self.selectPending), arguments: [JSONColumns.list(ids)])
            inFlight.withLock { kept in
                kept.check(version)
                for row in rows { kept.keep(row) }
            }
            let byID = Dictionary(rows.map { ($0.uploadID, $0) }, uniquingKeysWith: { first, _ in first })
            return ids.compactMap { byID[$0]?.pending }
        }
    }

    static let selectPending = """
        SELECT \(UploadRow.selection) FROM upload WHERE id IN (SELECT value FROM json_each(?)) \
        AND state IN ('\(UploadState.queued.rawValue)', '\(UploadState.waitingToRetry.rawValue)')
        """

    /// An upload to queue again by hand (retry): only one that finished without success.
    public func pendingForRetry(_ id: UploadID) throws -> PendingUpload? {
        try pool.read { db in
            guard let row = try UploadRow.fetchOne(db, key: Int64(id.rawValue)), row.state == .failed else { return nil }
            if row.headersCleared { throw HeadersCleared(id: id) }
            return row.pending
        }
    }

    /// A failed upload whose header values were removed when it ended cannot be sent again the
    /// same way: sending it without them would look like it, and fail or do something else.
    public struct HeadersCleared: Error, CustomStringConvertible {
        public let id: UploadID
        public var description: String {
            "\(id) cannot be retried: its secrets (header values, the URL's credentials) were removed from the journal when it ended; send the file again with its -H options and full URL"
        }
    }
}
