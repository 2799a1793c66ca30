import Foundation
import Glibc
import GRDB
import Testing
import UploadCore
@testable import UploadJournal
import UploadTesting

@Suite struct JournalTests {
    let root = TestFiles.makeTemporaryDirectory("journal")

    func newUpload(_ name: String, size: Int64 = 100, secret: String? = "Bearer hush") -> NewUpload {
        NewUpload(
            request: UploadRequest(
                source: .file(path: "/data/\(name)"), url: "http://127.0.0.1:9/photo", uploadName: name,
                formFields: [FormField(name: "k", value: "v")], headers: secret.map { [RequestHeader(name: "Authorization", value: $0)] } ?? []),
            fingerprint: FileFingerprint(size: size, modificationNanoseconds: 1_700_000_000_123_456_789),
            settings: TransportSettings(rateLimit: 1 << 20, retries: 2), origin: "send")
    }

    func mode(_ path: String) -> mode_t {
        var st = stat()
        stat(path, &st)
        return st.st_mode & 0o777
    }

    @Test func stateDirectoriesAndJournalArePrivate() throws {
        let paths = StatePaths.resolve(environment: ["HOME": root, "XDG_RUNTIME_DIR": root + "/run"])
        #expect(paths.stateDirectory == root + "/.local/state/uploadmon")
        #expect(paths.socket == root + "/run/uploadmon/agent.sock")
        try paths.prepare()
        let journal = try Journal(path: paths.journal)
        _ = try journal.add([newUpload("a.png")], at: Date())
        #expect(mode(paths.stateDirectory) == 0o700)
        #expect(mode(paths.runtimeDirectory) == 0o700)
        #expect(mode(paths.journal) == 0o600)
        #expect(mode(paths.journal + "-wal") == 0o600)
        #expect(journal.sizeOnDisk() > 0)

        // A directory someone widened is narrowed again.
        chmod(paths.stateDirectory, 0o755)
        try paths.prepare()
        #expect(mode(paths.stateDirectory) == 0o700)
    }

    /// Opening the journal again must not drop the locks this process holds on it: closing any
    /// descriptor of a file drops all of a process's POSIX locks there, SQLite's included. The
    /// lock is seen through an open-file-description lock query, which reports a process's own
    /// traditional locks (F_GETLK would not).
    @Test func openingTheJournalAgainKeepsTheLocksAlreadyHeldOnIt() throws {
        let path = root + "/locked.sqlite"
        _ = try Journal(path: path)
        let holder = open(path, O_RDWR)
        defer { close(holder) }
        var lock = flock()
        lock.l_type = Int16(F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        #expect(fcntl(holder, F_SETLK, &lock) == 0)
        // Opened once: closing it would itself drop the lock.
        let probe = open(path, O_RDWR)
        defer { close(probe) }
        func locked() -> Bool {
            var query = flock()
            query.l_type = Int16(F_WRLCK)
            query.l_whence = Int16(SEEK_SET)
            _ = fcntl(probe, 36 /* F_OFD_GETLK */, &query)
            return query.l_type != Int16(F_UNLCK)
        }
        #expect(locked())
        // What a second `Journal(path:)` does before SQLite opens the file.
        try StatePaths.makePrivateFile(path)
        #expect(locked(), "the lock survived another open of the journal")
    }

    @Test func runtimeDirectoryFallsBackToTheStateDirectory() {
        let paths = StatePaths.resolve(environment: ["HOME": "/home/u", "XDG_STATE_HOME": "/s", "XDG_RUNTIME_DIR": "relative/ignored"])
        #expect(paths.stateDirectory == "/s/uploadmon")
        #expect(paths.runtimeDirectory == "/s/uploadmon")
    }

    /// Every migration, in the order they run: a new one is added here.
    static let allMigrations = [
        "v1: uploads and events", "v2: scheduled jobs", "v3: readable schedules", "v4: header values only while needed", "v5: one upload record",
        "v6: parked files", "v7: resumable uploads", "v8: cut answers", "v9: verified answers", "v10: sent content", "v11: inode change times",
        "v12: sent, to be hashed", "v13: no index by content on uploads", "v14: sent content, recent", "v15: converted photos' identity",
        "v16: converted photos' names",
    ]

    @Test func migrationsRunOnceAndDataSurvivesReopening() throws {
        let path = root + "/j.sqlite"
        let first = try Journal(path: path)
        #expect(try first.appliedMigrations() == Self.allMigrations)
        let added = try first.add([newUpload("a.png")], at: Date())
        try first.record(.retryScheduled(added[0].id, attempt: 1, delaySeconds: 1, reason: "503"), at: Date())

        let again = try Journal(path: path)
        #expect(try again.appliedMigrations() == Self.allMigrations)
        #expect(try again.snapshots().map(\.name) == ["a.png"])
        #expect(try again.lastSequence() == 1)
        // The uploads' table keeps the index by state and none by content (nothing reads it).
        let indexes = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'upload' AND sql IS NOT NULL")
        }
        #expect(indexes == ["upload_by_state"])
    }

    @Test func eventsUpdateTheRowAndAreLoggedInOrder() throws {
        let journal = try Journal(path: root + "/j.sqlite")
        let id = try journal.add([newUpload("a.png")], at: Date())[0].id
        let body = Array(repeating: UInt8(ascii: "x"), count: Journal.bodyLimit + 10)
        let events: [UploadEvent] = [
            .queued(id, name: "a.png", totalBytes: 100),
            .started(id, attempt: 1, url: "http://127.0.0.1:9/photo", totalBytes: 300),
            .response(id, UploadResponse(status: 201, reason: "Created", headers: [], body: body, bodyBytesTotal: Int64(body.count))),
            .finished(id, .answered(status: 201)),
        ]
        var seqs: [Int64?] = []
        for (index, event) in events.enumerated() {
            if index == 2 { try journal.checkpoint(id, bytesSent: 150, expected: 300, at: Date()) }
            if index == 2 { #expect(try journal.snapshot(id)?.bytesSent == 150) }
            seqs.append(try journal.record(event, at: Date())?.seq)
        }
        // Each event went into the row; the log keeps what the row does not say: the finish.
        #expect(seqs == [nil, nil, nil, 1])
        let row = try #require(try journal.snapshot(id))
        #expect(row.state == .succeeded)
        #expect(row.response?.status == 201 && row.response?.reason == "Created")
        #expect(row.response?.body.count == Journal.bodyLimit)
        #expect(row.response?.bodyBytesTotal == Int64(body.count))
        #expect(row.bytesSent == 300)
        #expect(row.outcome == .answered(status: 201))
        // Progress and the drain summary are not logged.
        #expect(try journal.record(.progress(id, bytesSent: 1, totalBytesSent: 1, totalBytesExpected: 300), at: Date()) == nil)
        #expect(try journal.record(.allFinished(UploadSummary(succeeded: 1, failed: 0)), at: Date()) == nil)
        #expect(try journal.entries(after: 0).map(\.seq) == [1])
    }

    /// An upload's log keeps the way it went (a retry, a redirect) and its finish; its queued
    /// record, starts, content and answer are in its row, and what an earlier version logged of
    /// those goes once it is finished.
    @Test func anUploadsLogKeepsWhatItsRowDoesNotSay() throws {
        let path = root + "/compact.sqlite"
        let journal = try Journal(path: path)
        let ids = try journal.add([newUpload("a.png"), newUpload("b.png")], at: Date()).map(\.id)
        let answer = UploadResponse(status: 200, reason: "OK", headers: [], body: [], bodyBytesTotal: 0)
        for id in ids {
            try journal.record(.queued(id, name: "x", totalBytes: 10), at: Date())
            try journal.record(.started(id, attempt: 1, url: "u", totalBytes: 10), at: Date())
            try journal.record(.retryScheduled(id, attempt: 2, delaySeconds: 1, reason: "503"), at: Date())
            try journal.record(.started(id, attempt: 2, url: "u", totalBytes: 10), at: Date())
            try journal.record(.redirected(id, to: "http://127.0.0.1:9/elsewhere"), at: Date())
            try journal.record(.content(id, sha256: String(repeating: "b", count: 64)), at: Date())
            try journal.record(.response(id, answer), at: Date())
        }
        let kinds = { (id: UploadID) in try journal.entries(after: 0).filter { $0.event.uploadID == id }.compactMap { Journal.kind(of: $0.event) } }
        #expect(try kinds(ids[0]) == ["retryScheduled", "redirected"])
        // As an earlier version logged: a start, for each.
        try DatabaseQueue(path: path).write { db in
            for id in ids {
                try db.execute(
                    sql: "INSERT INTO event (uploadID, kind, event, at) VALUES (?, 'started', ?, ?)",
                    arguments: [
                        id.rawValue, #"{"started":{"_0":\#(id.rawValue),"attempt":1,"url":"u"}}"#, Date(),
                    ])
            }
        }
        try journal.record(.finished(ids[0], .answered(status: 200)), at: Date())
        #expect(try kinds(ids[0]) == ["retryScheduled", "redirected", "finished"])
        #expect(try kinds(ids[1]) == ["retryScheduled", "redirected", "started"])
        let row = try #require(try journal.snapshot(ids[0]))
        #expect(row.attempts == 2 && row.contentSHA256 == String(repeating: "b", count: 64) && row.response?.status == 200)
    }

    /// Successes recorded one by one wait in `sentRecent` and reach the ledger in one go: every
    /// read of the ledger sees them at once, a content sent twice is one entry, and the waiting
    /// rows move on their own once `recentLimit` of them are there.
    @Test func successesOneByOneReachTheLedgerInOneGo() throws {
        let path = root + "/sent.sqlite"
        let journal = try Journal(path: path)
        let waiting = { try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sentRecent") ?? -1 } }
        let ids = try journal.add([newUpload("a.png"), newUpload("b.png"), newUpload("c.png")], at: Date()).map(\.id)
        let digests = ["a", "b", "a"].map { String(repeating: $0, count: 64) }
        for (id, digest) in zip(ids, digests) {
            try journal.record(.content(id, sha256: digest), at: Date())
            try journal.record(.finished(id, .answered(status: 200)), at: Date())
        }
        #expect(try waiting() == 3)
        let endpoint = try #require(try journal.snapshot(ids[0])).url
        #expect(try journal.sentBefore(sha256: digests[1], to: endpoint)?.name == "b.png")
        #expect(try waiting() == 0)
        #expect(try journal.sentContents(to: endpoint) == Set(digests))
        #expect(try journal.tableCounts()["sentContent"] == 2)

        // A burst: the rows move by themselves at the limit, the rest wait for the next read.
        let count = Int(Journal.recentLimit) + 4
        let burst = try journal.add((0..<count).map { newUpload("p\($0).png") }, at: Date()).map(\.id)
        let events = burst.enumerated().flatMap { index, id -> [UploadEvent] in
            let hex = String(index, radix: 16)
            let digest = String(repeating: "0", count: 64 - hex.count) + hex
            return [.content(id, sha256: digest), .finished(id, .answered(status: 200))]
        }
        _ = try journal.record(events, at: Date())
        #expect(try waiting() == 4)
        #expect(try journal.sentContents(to: endpoint).count == 2 + count)
        #expect(try waiting() == 0)
    }

    @Test func nothingIsReportedFinishedTwice() throws {
        let journal = try Journal(path: root + "/j.sqlite")
        let id = try journal.add([newUpload("a.png")], at: Date())[0].id
        try journal.record(.started(id, attempt: 1, url: "u", totalBytes: 10), at: Date())
        #expect(try journal.record(.finished(id, .failed(UploadFailure(.connectionLost, "reset", code: 104))), at: Date()) != nil)
        #expect(try journal.record(.finished(id, .answered(status: 200)), at: Date()) == nil)
        let row = try #require(try journal.snapshot(id))
        #expect(row.state == .failed)
        #expect(row.failure == UploadFailure(.connectionLost, "reset", code: 104))
        #expect(try journal.entries(after: 0).filter { if case .finished = $0.event { true } else { false } }.count == 1)
    }

    @Test func recoveryRequeuesInterruptedUploadsAndKeepsFinishedOnes() throws {
        let journal = try Journal(path: root + "/j.sqlite")
        let ids = try journal.add(["done.png", "sending.png", "waiting.png", "queued.png"].map { newUpload($0) }, at: Date()).map(\.id)
        try journal.record(.started(ids[0], attempt: 1, url: "u", totalBytes: 10), at: Date())
        try journal.record(.finished(ids[0], .answered(status: 200)), at: Date())
        try journal.record(.started(ids[1], attempt: 1, url: "u", totalBytes: 10), at: Date())
        try journal.checkpoint(ids[1], bytesSent: 5, expected: 10, at: Date())
        try journal.record(.started(ids[2], attempt: 1, url: "u", totalBytes: 10), at: Date())
        try journal.record(.retryScheduled(ids[2], attempt: 2, delaySeconds: 4, reason: "503"), at: Date())
        try journal.record(.queued(ids[3], name: "queued.png", totalBytes: 100), at: Date())

        let before = try journal.lastSequence()
        let pending = try Journal(path: root + "/j.sqlite").recover(at: Date())
        #expect(pending.map(\.id) == Array(ids[1...]))
        #expect(pending.map(\.attempts) == [1, 1, 0])
        // What the agent resends is what was queued: headers, fields, settings, fingerprint.
        let resend = pending[0]
        #expect(resend.request.headers == [RequestHeader(name: "Authorization", value: "Bearer hush")])
        #expect(resend.request.formFields == [FormField(name: "k", value: "v")])
        #expect(resend.request.expectedFile == FileFingerprint(size: 100, modificationNanoseconds: 1_700_000_000_123_456_789))
        #expect(resend.settings == TransportSettings(rateLimit: 1 << 20, retries: 2))
        #expect(try journal.snapshot(ids[0])?.state == .succeeded)
        // Each interrupted one waits to be retried at once, and says why: what its logged note
        // folds to, as every event does.
        let interrupted = try #require(try journal.snapshot(ids[1]))
        guard case .waitingToRetry(2, let reason, _) = interrupted.phase else {
            Issue.record("\(interrupted.phase)")
            return
        }
        #expect(reason == "the agent stopped during attempt 1 after 5 bytes; sending again from the start")
        let notes = try journal.entries(after: before)
        #expect(notes.count == 2)
        #expect(notes.allSatisfy { if case .retryScheduled = $0.event { true } else { false } })
        // Queued again (as the agent does at once), a second recovery finds nothing more to note.
        // (The queued events are applied to the rows and not logged: the rows say them.)
        for upload in pending { try journal.record(.queued(upload.record), at: Date()) }
        _ = try journal.recover(at: Date())
        #expect(try journal.lastSequence() == before + 2)
    }

    @Test func headersNeverLeaveTheJournal() throws {
        let journal = try Journal(path: root + "/j.sqlite")
        let id = try journal.add([newUpload("a.png", secret: "Bearer top-secret-value")], at: Date())[0].id
        try journal.record(.queued(id, name: "a.png", totalBytes: 100), at: Date())
        let encoded = try JSONEncoder().encode(try journal.snapshots())
        #expect(!String(decoding: encoded, as: UTF8.self).contains("top-secret-value"))
        let logged = try JSONEncoder().encode(try journal.entries(after: 0))
        #expect(!String(decoding: logged, as: UTF8.self).contains("top-secret-value"))
    }

    /// Header values are kept only while an upload may still be sent: gone from the file itself
    /// once it ends, and a retry from the journal then says why it cannot send it the same way.
    @Test func headerValuesLeaveTheJournalWhenTheUploadEnds() throws {
        let path = root + "/cleared.sqlite"
        let journal = try Journal(path: path)
        let ids = try journal.add([newUpload("ok.png", secret: "Bearer ok-secret"), newUpload("failed.png", secret: "Bearer failed-secret")], at: Date()).map(
            \.id)
        try journal.record(.finished(ids[0], .answered(status: 200)), at: Date())
        try journal.record(.finished(ids[1], .failed(UploadFailure(.cannotConnect, "refused"))), at: Date())
        try journal.pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        for file in [path, path + "-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            #expect(bytes.range(of: Data("ok-secret".utf8)) == nil, "\(file)")
            #expect(bytes.range(of: Data("failed-secret".utf8)) == nil, "\(file)")
        }
        #expect(throws: Journal.HeadersCleared.self) { try journal.pendingForRetry(ids[1]) }

        // The URL's password and signature go the same way; the URL is still shown, redacted.
        var signed = newUpload("signed.png", secret: nil)
        signed.request.url = "http://user:url-password@127.0.0.1:9/photo?X-Amz-Signature=url-signature&part=1"
        let signedID = try journal.add([signed], at: Date())[0].id
        try journal.record(.finished(signedID, .answered(status: 200)), at: Date())
        try journal.pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        for file in [path, path + "-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data()
            #expect(bytes.range(of: Data("url-password".utf8)) == nil, "\(file)")
            #expect(bytes.range(of: Data("url-signature".utf8)) == nil, "\(file)")
        }
        #expect(try journal.snapshot(signedID)?.url == "http://***@127.0.0.1:9/photo?X-Amz-Signature=***&part=1")

        let plain = try journal.add([newUpload("plain.png", secret: nil)], at: Date())[0].id
        try journal.record(.finished(plain, .failed(UploadFailure(.cannotConnect, "refused"))), at: Date())
        #expect(try journal.pendingForRetry(plain)?.request.headers == [])
    }

    @Test func pruningKeepsUnfinishedUploadsAndSequenceNumbers() throws {
        let journal = try Journal(path: root + "/j.sqlite")
        let ids = try journal.add([newUpload("old.png"), newUpload("new.png"), newUpload("pending.png")], at: Date()).map(\.id)
        let long = Date(timeIntervalSinceNow: -10 * 86400)
        try journal.record(.started(ids[0], attempt: 1, url: "u", totalBytes: 1), at: long)
        try journal.record(.finished(ids[0], .answered(status: 200)), at: long)
        try journal.record(.queued(ids[2], name: "pending.png", totalBytes: 1), at: long)
        try journal.record(.started(ids[1], attempt: 1, url: "u", totalBytes: 1), at: Date())
        try journal.record(.finished(ids[1], .answered(status: 200)), at: Date())
        let last = try journal.lastSequence()

        let pruned = try journal.prune(finishedBefore: Date(timeIntervalSinceNow: -7 * 86400))
        // Only the finishes were logged (the rows say the starts and the queueing); old.png's
        // goes with its row.
        #expect(pruned == PruneResult(uploads: 1, events: 1))
        #expect(try journal.snapshots().map(\.name) == ["new.png", "pending.png"])
        #expect(try journal.entries(after: 0).map { Journal.kind(of: $0.event) } == ["finished"])
        #expect(try journal.lastSequence() == last)
        let id = try journal.add([newUpload("later.png")], at: Date())[0].id
        #expect(id.rawValue == 4)
        #expect(try journal.record(.finished(id, .answered(status: 200)), at: Date())?.seq == last + 1)
    }

    /// Rows are kept between events (so each event need not read its row back), but only those
    /// of uploads just added or in flight, and never more than the limit: 1,100 uploads added
    /// at once and sent four at a time keep at most the limit, none once they all end, and every
    /// event still finds the row the journal holds (debug builds check it).
    /// The agent reads the uploads it starts next a window at a time: those still waiting, in
    /// the order asked for.
    @Test func pendingGivesTheWaitingUploadsInTheOrderAsked() throws {
        let journal = try Journal(path: root + "/pending.sqlite")
        let added = try journal.add((0..<5).map { newUpload("p\($0).png", secret: nil) }, at: Date())
        let ids = added.map(\.id)
        try journal.record(.started(ids[1], attempt: 1, url: "u", totalBytes: 100), at: Date())
        try journal.record(.finished(ids[1], .answered(status: 200)), at: Date())
        let asked = [ids[4], ids[1], ids[0], UploadID(99), ids[2]]
        let pending = try journal.pending(asked)
        #expect(pending.map(\.id) == [ids[4], ids[0], ids[2]])
        #expect(pending.map(\.record.name) == ["p4.png", "p0.png", "p2.png"])
        #expect(try journal.recoverQueue(at: Date()) == [ids[0], ids[2], ids[3], ids[4]])
    }

    @Test func onlyTheRowsOfUploadsAboutToStartOrInFlightAreKept() throws {
        let journal = try Journal(path: root + "/kept.sqlite")
        let added = try journal.add((0..<1_100).map { newUpload("p\($0).png", secret: nil) }, at: Date())
        var most = journal.inFlight.withLock { $0.count }
        for batch in stride(from: 0, to: added.count, by: 4) {
            let ids = added[batch..<min(batch + 4, added.count)].map(\.id)
            // Read as the agent reads the next uploads to start, a few at a time.
            #expect(try journal.pending(ids).count == ids.count)
            for id in ids { try journal.record(.started(id, attempt: 1, url: "u", totalBytes: 100), at: Date()) }
            for id in ids { try journal.checkpoint(id, bytesSent: 50, expected: 100, at: Date()) }
            for id in ids { try journal.record(.content(id, sha256: String(repeating: "a", count: 64)), at: Date()) }
            most = max(most, journal.inFlight.withLock { $0.count })
            for id in ids {
                try journal.record(
                    .response(id, UploadResponse(status: 200, reason: "OK", headers: [("A", "b")], body: Array("{}".utf8), bodyBytesTotal: 2)), at: Date())
                try journal.record(.finished(id, .answered(status: 200)), at: Date())
            }
        }
        #expect(most <= InFlightRows.limit)
        #expect(journal.inFlight.withLock { $0.count } == 0)
        let last = try #require(try journal.snapshot(added[1_099].id))
        #expect(last.state == .succeeded)
        #expect(last.response?.status == 200)
        #expect(last.contentSHA256 == String(repeating: "a", count: 64))
    }

    /// Another writer of the same journal (here a second `Journal`, as a restarted agent would
    /// be) makes the kept rows stale: the next event reads the row again and folds into it.
    @Test func aRowChangedByAnotherWriterIsReadAgain() throws {
        let path = root + "/two.sqlite"
        let journal = try Journal(path: path)
        let id = try #require(try journal.add([newUpload("a.png")], at: Date()).first).id
        try journal.record(.started(id, attempt: 1, url: "u", totalBytes: 10), at: Date())
        #expect(journal.inFlight.withLock { $0.count } == 1)
        // The other writer puts it back to wait for a retry.
        _ = try Journal(path: path).recover(at: Date())
        try journal.record(.started(id, attempt: 2, url: "u", totalBytes: 10), at: Date())
        let record = try #require(try journal.snapshot(id))
        #expect(record.attempts == 2)
        #expect(record.state == .sending)
        let logged = try journal.entries(after: 0).map(\.event)
        #expect(logged.contains { if case .retryScheduled = $0 { true } else { false } })
    }

    /// A batch is recorded in order, each event as it would be alone: what is not applied
    /// (progress, a second finish, an unknown upload) gives nil in its place, and only what the
    /// log keeps (the finishes; the rows say the starts) is numbered.
    @Test func aBatchIsRecordedInOrderEachEventAsAlone() throws {
        let journal = try Journal(path: root + "/batch.sqlite")
        let ids = try journal.add([newUpload("a.png"), newUpload("b.png")], at: Date()).map(\.id)
        let batch: [UploadEvent] = [
            .started(ids[0], attempt: 1, url: "u", totalBytes: 10),
            .progress(ids[0], bytesSent: 5, totalBytesSent: 5, totalBytesExpected: 10),
            .started(ids[1], attempt: 1, url: "u", totalBytes: 10),
            .finished(ids[0], .answered(status: 200)),
            .finished(ids[0], .answered(status: 500)),
            .started(UploadID(99), attempt: 1, url: "u", totalBytes: 10),
            .finished(ids[1], .failed(UploadFailure(.cannotConnect, "refused"))),
        ]
        let results = try journal.record(batch, at: Date()).map { try $0.get() }
        #expect(results.map { $0 != nil } == [true, false, true, true, false, false, true])
        #expect(results.map { $0?.entry != nil } == [false, false, false, true, false, false, true])
        let seqs = results.compactMap { $0?.entry?.seq }
        #expect(seqs.count == 2 && seqs[0] < seqs[1])
        #expect(try journal.entries(after: 0).map(\.seq) == seqs)
        #expect(try journal.snapshot(ids[0])?.state == .succeeded)
        #expect(try journal.snapshot(ids[1])?.state == .failed)
    }

    /// A batch writes each upload's row once, after its last event: the rows and the log are
    /// those that recording the events one at a time gives.
    @Test func aBatchLeavesTheRowsThatEventsOneAtATimeLeave() throws {
        let at = Date(timeIntervalSince1970: 1_800_000_000.123)
        let answer = UploadResponse(
            status: 201, reason: "Created", headers: [("Content-Type", "application/json"), ("Set-Cookie", "s=1")],
            body: Array(#"{"filename":"a.png"}"#.utf8), bodyBytesTotal: 20)
        func events(_ ids: [UploadID]) -> [UploadEvent] {
            [
                .started(ids[0], attempt: 1, url: "http://h/p", totalBytes: 300),
                .started(ids[1], attempt: 1, url: "http://h/p", totalBytes: 300),
                .content(ids[0], sha256: String(repeating: "b", count: 64)),
                .response(ids[0], answer),
                .retryScheduled(ids[1], attempt: 2, delaySeconds: 1, reason: "reset"),
                .finished(ids[0], .answered(status: 201)),
                .started(ids[1], attempt: 2, url: "http://h/p", totalBytes: 300),
                .redirected(ids[1], to: "http://h/q"),
                .finished(ids[1], .failed(UploadFailure(.cannotConnect, "refused"))),
            ]
        }
        let batched = try Journal(path: root + "/batched.sqlite")
        let alone = try Journal(path: root + "/alone.sqlite")
        let ids = try batched.add([newUpload("a.png"), newUpload("b.png")], at: at).map(\.id)
        #expect(try alone.add([newUpload("a.png"), newUpload("b.png")], at: at).map(\.id) == ids)
        _ = try batched.record(events(ids), at: at)
        for event in events(ids) { try alone.record(event, at: at) }
        #expect(try batched.snapshots() == alone.snapshots())
        #expect(try batched.entries(after: 0) == alone.entries(after: 0))
        #expect(try batched.snapshot(ids[0])?.response?.headers.map(\.1) == ["application/json", "***"])
    }

    /// Answer headers are written as JSON by hand: what any JSON reader reads back is what was
    /// written, whatever a server put in them.
    @Test func answerHeadersWrittenByHandReadBackAsTheyWere() throws {
        let tricky = [
            ["Content-Type", "image/png"], ["X-Odd", "quote \" back \\ slash / nl \n tab \t bell \u{7} nul \u{0} del \u{7F}"],
            ["X-Intl", "写真 é 🙂"], [], ["", ""],
        ]
        let text = JSONColumns.text(tricky)
        #expect(try JSONDecoder().decode([[String]].self, from: Data(text.utf8)) == tricky)
        #expect(JSONColumns.text([]) == "[]")
    }

    /// A row with every column set reads back as it was written, whether written whole (its
    /// Codable encoding) or column by column; the settings a run of rows shares as well.
    @Test func aRowWithEveryColumnSetReadsBackAsWritten() throws {
        let journal = try Journal(path: root + "/every.sqlite")
        var settings = TransportSettings()
        settings.proxy = "http://proxy:3128"
        settings.stripLocation = true
        var upload = newUpload("every.png")
        upload.settings = settings
        upload.request.formFields = [FormField(name: "key", value: "uploads/every.png")]
        let at = Date(timeIntervalSince1970: 1_800_000_000.5)
        var row = UploadRow(new: upload, at: at)
        (row.fileCtimeNs, row.state, row.attempts, row.bytesSent, row.bytesExpected) = (7, .failed, 3, 250, 300)
        (row.status, row.reason, row.body, row.bodyBytesTotal) = (503, "Busy", Data("no".utf8), 2)
        (row.failureKind, row.failureMessage, row.failureCode) = ("other", "gave up", 9)
        (row.startedAt, row.finishedAt, row.retryAt, row.retryReason) = (at, at, at, "busy")
        (row.headersCleared, row.shownURL, row.responseHeaders) = (true, "http://h/q", [["Retry-After", "1"], ["X", "\"q\" \\"]])
        row.resume = ResumePoint(
            uploadURL: "http://h/resumable/t", version: 8, boundary: "B", bodyLength: 300,
            file: FileFingerprint(size: 250, modificationNanoseconds: 1), offset: 100)
        (row.bytesSaved, row.idempotencyKey, row.answerCut, row.verified, row.contentSHA256) = (100, "k", "cut", "sha-256", "ab")
        try journal.pool.write { db in
            var whole = row
            try whole.insert(db)
            var prepared = row
            try prepared.insertPrepared(db)
            for id in [whole.id, prepared.id] {
                var read = try #require(try UploadRow.fetchOne(db, key: id))
                read.id = nil
                #expect(read == row)
            }
        }
    }

    @Test func tableCountsSayWhatEachTableHolds() throws {
        let journal = try Journal(path: root + "/counts.sqlite")
        let ids = try journal.add([newUpload("a.png"), newUpload("b.png")], at: Date()).map(\.id)
        try journal.record(.started(ids[0], attempt: 1, url: "u", totalBytes: 10), at: Date())
        try journal.record(.finished(ids[0], .answered(status: 200)), at: Date())
        let counts = try journal.tableCounts()
        #expect(counts["upload"] == 2)
        #expect(counts["event"] == 1, "the finish alone is logged")
        #expect(counts["sentContent"] == 0, "no digest was recorded")
        #expect(try journal.unfinishedCounts() == [.queued: 1])
        try journal.record(.started(ids[1], attempt: 1, url: "u", totalBytes: 10), at: Date())
        #expect(try journal.unfinishedCounts() == [.sending: 1])
    }

    /// An event the journal cannot take fails alone: the rest of its batch is recorded as if
    /// it came by itself (the batch is tried whole, then event by event).
    @Test func anEventThatCannotBeRecordedFailsAloneInItsBatch() throws {
        let journal = try Journal(path: root + "/refusing.sqlite")
        let ids = try journal.add([newUpload("a.png"), newUpload("b.png")], at: Date()).map(\.id)
        try journal.pool.write { db in
            try db.execute(
                sql: """
                    CREATE TEMP TRIGGER refuse_b AFTER INSERT ON event WHEN NEW.uploadID = \(ids[1].rawValue)
                    BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
                    """)
        }
        let results = try journal.record(
            [
                .started(ids[0], attempt: 1, url: "u", totalBytes: 10),
                .started(ids[1], attempt: 1, url: "u", totalBytes: 10),
                .finished(ids[1], .answered(status: 200)),
                .finished(ids[0], .answered(status: 200)),
            ], at: Date())
        #expect(results.map { (try? $0.get()) != nil } == [true, true, false, true])
        #expect(try journal.snapshot(ids[0])?.state == .succeeded)
        #expect(try journal.snapshot(ids[1])?.state == .sending, "its start stays; its end was refused")
        #expect(try journal.entries(after: 0).map(\.event) == [.finished(ids[0], .answered(status: 200))])
    }
}
