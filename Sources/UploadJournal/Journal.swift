import Foundation
import GRDB
import Synchronization
import UploadCore

/// The agent's persistent record of every upload and of everything that happened to them.
///
/// SQLite in WAL mode through GRDB: the agent writes, any number of readers (`uploadmon status`,
/// tests) read at the same time. Every state change is one transaction that updates the upload's
/// row and appends to the event log, so after a crash the two always agree; progress is only a
/// checkpoint of the row (the caller limits it to about once a second). The log keeps what the
/// row does not say (the finish, retries, redirects, resumes), not what it does (the queued
/// record, starts, the content's digest, the answer): a client coming back gets the rows and
/// those.
public final class Journal: Sendable {
    /// How much of an answer's body the journal keeps.
    public static let bodyLimit = 64 * 1024

    public let path: String
    let pool: DatabasePool
    /// The rows of uploads in flight as the journal holds them, so the events of an upload in
    /// flight (started, content, response, finished…) do not read and decode its row again each
    /// time: that read was a fifth of the agent's work per upload. Only the agent writes rows, and
    /// only inside `pool.write`; every writer keeps this in step or empties it.
    let inFlight = Mutex(InFlightRows())

    /// Opens (creating when missing, as a 0600 file) and migrates the journal at `path`.
    public convenience init(path: String) throws {
        try self.init(path: path, migratingUpTo: nil)
    }

    /// `migratingUpTo` stops at an older schema (to test upgrades of old journals).
    init(path: String, migratingUpTo lastMigration: String?) throws {
        self.path = path
        try StatePaths.makePrivateFile(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "uploadmon.journal"
        configuration.prepareDatabase { db in
            // WAL + NORMAL survives any crash of the process (SIGKILL included); only a power
            // loss may drop the last transactions, which costs a resend, never a wrong state.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Header values removed when an upload ends must not linger in freed pages.
            try db.execute(sql: "PRAGMA secure_delete = ON")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        if let lastMigration {
            try JournalSchema.migrator.migrate(pool, upTo: lastMigration)
        } else {
            try JournalSchema.migrator.migrate(pool)
            // What foreground sends remembered since (a log that cannot be read waits).
            try? drainSentLog()
        }
    }

    /// The migrations this journal has applied, oldest first.
    public func appliedMigrations() throws -> [String] {
        try pool.read { db in try JournalSchema.migrator.appliedMigrations(db) }
    }

    // MARK: Adding and recording

    /// Adds uploads in one transaction, queued, and returns them with their new ids (the row is
    /// what their `queued` says: the queue's own `queued` for them need not be recorded).
    public func add(_ uploads: [NewUpload], at now: Date) throws -> [UploadRecord] {
        try pool.write { db in
            try uploads.map { upload in
                var row = UploadRow(new: upload, at: now)
                #if DEBUG
                    // The prepared insert must store what the record's own encoding stores.
                    var viaRecord: UploadRow?
                    try db.inSavepoint {
                        var copy = row
                        try copy.insert(db)
                        viaRecord = try UploadRow.fetchOne(db, key: copy.id)
                        return .rollback
                    }
                #endif
                try row.insertPrepared(db)
                #if DEBUG
                    var inserted = try UploadRow.fetchOne(db, key: row.id)
                    inserted?.id = viaRecord?.id
                    precondition(inserted == viaRecord, "the prepared insert differs: \(String(describing: inserted)) vs \(String(describing: viaRecord))")
                #endif
                return row.record
            }
        }
    }

    /// Applies one event to its upload's row and, when the log keeps its kind, appends it to the
    /// log, atomically. Returns the logged entry; `nil` for events the log does not keep (those
    /// the row says all of, progress, the drain summary) and for a `finished` of an upload that
    /// is already finished: nothing is ever reported finished twice.
    @discardableResult
    public func record(_ event: UploadEvent, at now: Date) throws -> JournalEntry? {
        try record([event], at: now)[0].get()?.entry
    }

    /// Records `events` in order in one transaction (one commit for all, which is most of what
    /// recording costs when many uploads are small), each in a savepoint of its own: an event
    /// that cannot be recorded fails alone, as it would by itself. Returns each event's result.
    public func record(_ events: [UploadEvent], at now: Date) throws -> [Result<RecordedEvent?, any Error>] {
        guard events.contains(where: { $0.uploadID != nil && Self.kind(of: $0) != nil }) else {
            return events.map { _ in .success(nil) }
        }
        do {
            return try pool.write { db in try record(events, at: now, db) }
        } catch {
            // The commit failed: no row kept from this batch may be trusted.
            inFlight.withLock { $0 = InFlightRows() }
            throw error
        }
    }

    /// As `record`, suspending the caller while the journal's writer works instead of blocking
    /// its thread: an agent's batches of events are written while its queue goes on.
    public func recordInBackground(_ events: [UploadEvent], at now: Date) async throws -> [Result<RecordedEvent?, any Error>] {
        guard events.contains(where: { $0.uploadID != nil && Self.kind(of: $0) != nil }) else {
            return events.map { _ in .success(nil) }
        }
        do {
            return try await pool.write { db in try self.record(events, at: now, db) }
        } catch {
            inFlight.withLock { $0 = InFlightRows() }
            throw error
        }
    }

    /// The batch inside its transaction: all of it in one savepoint, and only when an event
    /// fails there, again event by event (a savepoint per event was a twentieth of the work).
    private func record(_ events: [UploadEvent], at now: Date, _ db: Database) throws -> [Result<RecordedEvent?, any Error>] {
        let version = try Self.dataVersion(db)
        inFlight.withLock { $0.check(version) }
        // Each upload's row is written once for the batch, after its last event (a small
        // upload's start, digest, answer and end often come in one batch).
        var changed = ChangedRows()
        var whole: [Result<RecordedEvent?, any Error>]?
        do {
            try db.inSavepoint {
                whole = try events.map { event in
                    guard let id = event.uploadID, let kind = Self.kind(of: event) else { return .success(nil) }
                    return .success(try record(event, id: id, kind: kind, at: now, into: &changed, db))
                }
                try changed.write(db)
                return .commit
            }
        } catch let error as DatabaseError where !db.isInsideTransaction {
            throw error  // the transaction itself is gone: nothing of the batch stays
        } catch {
            whole = nil
        }
        if let whole {
            inFlight.withLock { kept in
                for row in changed.rows { kept.keep(row) }
            }
            return whole
        }
        changed = ChangedRows()
        let results = try events.map { event -> Result<RecordedEvent?, any Error> in
            guard let id = event.uploadID, let kind = Self.kind(of: event) else { return .success(nil) }
            var entry: RecordedEvent?
            do {
                try db.inSavepoint {
                    entry = try record(event, id: id, kind: kind, at: now, into: &changed, db)
                    return .commit
                }
            } catch let error as DatabaseError where !db.isInsideTransaction {
                throw error  // the transaction itself is gone: nothing of the batch stays
            } catch {
                inFlight.withLock { $0.forget(Int64(id.rawValue)) }
                return .failure(error)
            }
            return .success(entry)
        }
        try changed.write(db)
        inFlight.withLock { kept in
            for row in changed.rows { kept.keep(row) }
        }
        return results
    }

    /// SQLite's count of commits by other connections (another process, another `Journal` on
    /// the same file): when it moved, rows kept from before may be stale.
    static func dataVersion(_ db: Database) throws -> Int {
        try Int.fetchOne(db.cachedStatement(sql: "PRAGMA data_version")) ?? 0
    }

    /// One event, inside the batch's transaction.
    private func record(_ event: UploadEvent, id: UploadID, kind: String, at now: Date, into changed: inout ChangedRows, _ db: Database) throws
        -> RecordedEvent?
    {
        // A statement compiled once per connection: compiling it (SQLite's parser and
        // authorizer over every column) cost more than the rest of the read.
        let select = try db.cachedStatement(sql: UploadRow.selectByID)
        let key = Int64(id.rawValue)
        let before = changed[key]
        guard var row = try before ?? inFlight.withLock({ $0[key] }) ?? UploadRow.fetchAll(columns: select, arguments: [key]).first else { return nil }
        #if DEBUG
            if before == nil {
                let stored = try UploadRow.fetchAll(columns: select, arguments: [key]).first
                precondition(row == stored, "the kept row of \(id) is not the journal's: \(row) vs \(String(describing: stored))")
            }
        #endif
        let read = row
        var logged = event
        var record = row.record
        switch event {
        case .response(let id, let response):
            // The answer's body is kept up to a limit, and its credentials (a cookie the
            // server set) not at all, in the row and in the log alike.
            var kept = UploadResponse(
                status: response.status, reason: response.reason, headers: response.headers,
                body: Array(response.body.prefix(Self.bodyLimit)), bodyBytesTotal: response.bodyBytesTotal, cut: response.cut)
            kept.verified = response.verified
            logged = .response(id, kept.redactingSecrets())
        case .finished:
            guard !record.isFinished else { return nil }
            // Header values (tokens, cookies) and the URL's secrets (a password, a signature)
            // are kept only to send the upload; it is done. The URL stays, as it is shown.
            if !row.headers.isEmpty {
                row.headers = []
                row.headersCleared = true
            }
            let shown = RedactedURL.display(row.url)
            if shown != row.url {
                row.url = shown
                row.headersCleared = true
            }
            // A proxy's login likewise.
            if let proxy = row.settings.proxy, RedactedURL.display(proxy) != proxy {
                row.settings.proxy = RedactedURL.display(proxy)
                row.headersCleared = true
            }
        default:
            break
        }
        // The endpoint as kept (redacted once finished; the key is the redacted form anyway).
        let endpoint = row.url
        record.apply(logged, at: now)
        row.store(record)
        row.updatedAt = now
        row.roundTripDates(since: read, now: now)
        if case .finished(_, let outcome) = event, outcome.isSuccess, let sha256 = record.sentIdentity {
            try Self.rememberRecent(
                SentContent(endpoint: endpoint, sha256: sha256, size: record.fileSize ?? 0, name: record.sentName ?? record.name, sentAt: now), in: db)
        }
        // Noted once nothing of the event can fail: a failure rolls its savepoint back, and the
        // row stays as the batch's earlier events left it.
        guard Self.logs(kind) else {
            changed.note(row, readAs: read)
            return RecordedEvent(event: logged, entry: nil)
        }
        #if DEBUG
            // The prepared insert must store what the record's own encoding stores.
            var viaRecord: Row?
            try db.inSavepoint {
                var entry = EventRow(seq: nil, uploadID: Int64(id.rawValue), kind: kind, event: logged, at: now)
                try entry.insert(db)
                viaRecord = try Row.fetchOne(db, sql: "SELECT uploadID, kind, event, at FROM event WHERE seq = ?", arguments: [entry.seq])
                return .rollback
            }
        #endif
        let seq = try EventRow.append(uploadID: Int64(id.rawValue), kind: kind, event: logged, at: now, db)
        if case .finished = event {
            // Such events logged by an earlier version go once the upload is finished.
            try db.cachedStatement(sql: "DELETE FROM event WHERE uploadID = ? AND seq < ? AND kind IN (\(Self.repeatedByTheRow))")
                .execute(arguments: [key, seq])
        }
        #if DEBUG
            let appended = try Row.fetchOne(db, sql: "SELECT uploadID, kind, event, at FROM event WHERE seq = ?", arguments: [seq])
            precondition(appended == viaRecord, "the appended event differs: \(String(describing: appended)) vs \(String(describing: viaRecord))")
        #endif
        changed.note(row, readAs: read)
        return RecordedEvent(event: logged, entry: JournalEntry(seq: seq, event: logged, at: now))
    }

    /// Notes how far a running upload got; only rows still sending are touched.
    public func checkpoint(_ id: UploadID, bytesSent: Int64, expected: Int64?, at now: Date) throws {
        try pool.write { db in
            try db.cachedStatement(sql: "UPDATE upload SET bytesSent = ?, bytesExpected = ?, updatedAt = ? WHERE id = ? AND state = 'sending'")
                .execute(arguments: [bytesSent, expected, JournalDates.text(now), id.rawValue])
            let version = try Self.dataVersion(db)
            inFlight.withLock { rows in
                let key = Int64(id.rawValue)
                rows.check(version)
                guard var row = rows[key] else { return }
                guard row.state == .sending else { return }
                row.bytesSent = bytesSent
                row.bytesExpected = expected
                row.updatedAt = JournalDates.stored(now)
                rows.keep(row)
            }
        }
    }

    /// The kinds whose every word the upload's row keeps (its queued record, its start, the
    /// content's digest, the answer); `repeatedByTheRow` is the list as SQL. The log does not
    /// repeat them: it holds the way an upload went (retries, redirects, resumes) and its
    /// finish, which the row does not say. They were half of what the journal cost per upload.
    static let repeatedKinds = ["queued", "started", "content", "response"]
    static let repeatedByTheRow = repeatedKinds.map { "'\($0)'" }.joined(separator: ", ")

    static func logs(_ kind: String) -> Bool { !repeatedKinds.contains(kind) }

    static func kind(of event: UploadEvent) -> String? {
        switch event {
        case .queued: "queued"
        case .started: "started"
        case .response: "response"
        case .redirected: "redirected"
        case .retryScheduled: "retryScheduled"
        case .finished: "finished"
        case .resumable: "resumable"
        case .resumed: "resumed"
        case .content: "content"
        case .progress, .allFinished: nil
        }
    }
}

extension UploadRow {
    init(new upload: NewUpload, at now: Date) {
        let request = upload.request
        let path: String
        if case .file(let p) = request.source { path = p } else { path = "-" }
        self.init(
            id: nil, path: path, fileSize: upload.fingerprint.size, fileMtimeNs: upload.fingerprint.modificationNanoseconds,
            fileCtimeNs: upload.fingerprint.changeNanoseconds,
            uploadName: request.uploadName, url: request.url, field: request.field, formFields: request.formFields,
            headers: request.headers,
            allowAnyFile: request.allowAnyFile, settings: upload.settings, origin: upload.origin,
            state: .queued, attempts: 0, bytesSent: 0, bytesExpected: nil, status: nil, reason: nil, body: nil,
            bodyBytesTotal: nil, failureKind: nil, failureMessage: nil, failureCode: nil,
            createdAt: now, updatedAt: now, startedAt: nil, finishedAt: nil, headersCleared: false,
            shownURL: nil, retryReason: nil, retryAt: nil, responseHeaders: nil, resume: request.resume, bytesSaved: 0,
            idempotencyKey: request.idempotencyKey ?? UploadRequest.newIdempotencyKey(), answerCut: nil, verified: nil,
            contentSHA256: nil, sourceSHA256: nil, sentName: nil)
    }

    var pending: PendingUpload {
        PendingUpload(request: request, settings: settings, attempts: attempts, record: record)
    }
}
