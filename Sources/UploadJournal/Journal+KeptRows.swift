import Foundation
import GRDB

/// The rows `Journal.record` keeps between events: those of uploads in flight (at most `limit`;
/// the agent's concurrency is far below it) and those `Journal.pending` just read for the queue,
/// whose start comes soon (at most `limit` too). Never a finished one, so it stays small however
/// many uploads are queued or have ended.
struct InFlightRows {
    static let limit = 1024
    private var sending: [Int64: UploadRow] = [:]
    private var added: [Int64: UploadRow] = [:]
    /// `PRAGMA data_version` when the rows were last checked against it.
    private var version: Int?

    /// Forgets every row when a writer other than this journal has committed since the last
    /// check (`version` moved): they may be stale.
    mutating func check(_ now: Int) {
        guard version != now else { return }
        sending.removeAll(keepingCapacity: true)
        added.removeAll(keepingCapacity: true)
        version = now
    }

    subscript(id: Int64) -> UploadRow? { sending[id] ?? added[id] }

    mutating func keep(_ row: UploadRow) {
        guard let id = row.id else { return }
        added[id] = nil
        sending[id] = nil
        switch row.state {
        case .sending, .waitingToRetry:
            // Over the limit (more in flight than any concurrency allows): start again.
            if sending.count >= Self.limit { sending.removeAll(keepingCapacity: true) }
            sending[id] = row
        case .queued:
            // Read for the queue's window; only the latest reads are worth keeping.
            if added.count >= Self.limit { added.removeAll(keepingCapacity: true) }
            added[id] = row
        case .succeeded, .failed:
            break
        }
    }

    mutating func forget(_ id: Int64) {
        sending[id] = nil
        added[id] = nil
    }

    var count: Int { sending.count + added.count }
}

extension UploadRow {
    /// The dates as the journal reads them back (millisecond text): a kept row must be equal
    /// to what a read of the journal gives. Dates `earlier` (as read back) already had are
    /// kept; `now`, which most new dates are, is converted once (the text round trip through
    /// a date formatter was a twentieth of the agent's work when done for every date).
    mutating func roundTripDates(since earlier: UploadRow, now: Date) {
        let storedNow = JournalDates.stored(now)
        func stored(_ date: Date, _ before: Date?) -> Date {
            date == before ? date : date == now ? storedNow : JournalDates.stored(date)
        }
        createdAt = stored(createdAt, earlier.createdAt)
        updatedAt = stored(updatedAt, earlier.updatedAt)
        startedAt = startedAt.map { stored($0, earlier.startedAt) }
        finishedAt = finishedAt.map { stored($0, earlier.finishedAt) }
        retryAt = retryAt.map { stored($0, earlier.retryAt) }
    }
}

/// The rows a batch of events changed, each written once when the batch ends: the changed
/// columns between the row as the batch first had it and as its last event left it. Rows sit
/// in arrays in the order they were first changed, found by an index: a dictionary of pairs of
/// rows (forty columns each) was copied and rehashed on every event, a quarter of recording one.
struct ChangedRows {
    private var index: [Int64: Int] = [:]
    private var reads: [UploadRow] = []
    private(set) var rows: [UploadRow] = []

    /// The row as the batch's events so far left it.
    subscript(id: Int64) -> UploadRow? { index[id].map { rows[$0] } }

    /// `row` after an event; `read` is the row as it was before that event.
    mutating func note(_ row: consuming UploadRow, readAs read: borrowing UploadRow) {
        guard let id = row.id else { return }
        if let at = index[id] {
            rows[at] = row
        } else {
            index[id] = rows.count
            reads.append(copy read)
            rows.append(row)
        }
    }

    func write(_ db: Database) throws {
        for (read, row) in zip(reads, rows) {
            #if DEBUG
                let id = row.id
                // Writing the changed columns alone must leave the row as writing all of them does.
                let select = try db.cachedStatement(sql: "SELECT * FROM upload WHERE id = ?")
                var whole: UploadRow?
                try db.inSavepoint {
                    try row.update(db)
                    whole = try UploadRow.fetchOne(select, arguments: [id])
                    return .rollback
                }
            #endif
            try row.updateChanges(from: read, db)
            #if DEBUG
                let written = try UploadRow.fetchOne(select, arguments: [id])
                precondition(written == whole, "the changed columns differ from the whole row: \(String(describing: written)) vs \(String(describing: whole))")
                precondition(written == row, "the row written is not the row kept: \(String(describing: written)) vs \(row)")
            #endif
        }
    }
}
