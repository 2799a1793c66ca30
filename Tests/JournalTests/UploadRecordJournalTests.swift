import Foundation
import GRDB
import Testing
import UploadCore
import UploadJournal
import UploadTesting

/// The journal keeps an upload as the one record every view folds: what it gives back is what
/// folding the same events in memory gives, field for field.
@Suite struct UploadRecordJournalTests {
    let root = TestFiles.makeTemporaryDirectory("records")
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func add(_ journal: Journal) throws -> UploadRecord {
        let request = UploadRequest(
            source: .file(path: "/data/a.png"), url: "http://user:pw@127.0.0.1:9/photo?token=t", uploadName: "a.png",
            headers: [RequestHeader(name: "Authorization", value: "Bearer hush")])
        let new = NewUpload(
            request: request, fingerprint: FileFingerprint(size: 100, modificationNanoseconds: 1, changeNanoseconds: 3),
            settings: TransportSettings(), origin: "send")
        return try #require(try journal.add([new], at: t0).first)
    }

    /// The inode's change time is kept with the upload and comes back with it (the monitor's
    /// `✓` compares it), as does the request's expected file.
    @Test func theFilesChangeTimeIsKept() throws {
        let journal = try Journal(path: root + "/ctime.sqlite")
        let added = try add(journal)
        #expect(added.fileChanged == 3)
        let pending = try #require(try journal.recover(at: t0).first)
        #expect(pending.record.fileChanged == 3)
        #expect(pending.request.expectedFile?.changeNanoseconds == 3)
    }

    static let created = UploadResponse(
        status: 201, reason: "Created", headers: [("Content-Type", "application/json"), ("X-Id", "9")],
        body: Array(#"{"filename":"a.png"}"#.utf8), bodyBytesTotal: 20)
    static let busy = UploadResponse(status: 503, reason: "Service Unavailable", headers: [("Retry-After", "4")], body: [], bodyBytesTotal: 0)
    static let early = UploadResponse(status: 200, reason: "OK", headers: [], body: Array("{}".utf8), bodyBytesTotal: 2)

    /// Event sequences with each phase and kind of ending; `id` is filled in.
    static let stories: [[@Sendable (UploadRecord) -> UploadEvent]] = [
        [{ .queued($0) }],
        [{ .queued($0) }, { .started($0.id, attempt: 1, url: "http://***@127.0.0.1:9/photo?token=***", totalBytes: 300) }],
        [
            { .queued($0) }, { .started($0.id, attempt: 1, url: "http://127.0.0.1:9/photo", totalBytes: 300) },
            { .redirected($0.id, to: "http://127.0.0.1:10/elsewhere") }, { .response($0.id, created) }, { .finished($0.id, .answered(status: 201)) },
        ],
        [
            { .queued($0) }, { .started($0.id, attempt: 1, url: "http://127.0.0.1:9/photo", totalBytes: 300) },
            { .response($0.id, busy) }, { .retryScheduled($0.id, attempt: 2, delaySeconds: 4, reason: "503 Service Unavailable") },
        ],
        [
            { .queued($0) }, { .started($0.id, attempt: 1, url: "http://127.0.0.1:9/photo", totalBytes: 300) },
            { .finished($0.id, .failed(UploadFailure(.connectionLost, "reset", code: 104))) },
        ],
        [
            { .queued($0) }, { .started($0.id, attempt: 1, url: "http://127.0.0.1:9/photo", totalBytes: 300) },
            { .response($0.id, early) }, { .finished($0.id, .failed(UploadFailure(.answeredEarly, "answered 200 after 140 B of 300 B"))) },
        ],
        [
            { .queued($0) }, { .started($0.id, attempt: 1, url: "http://127.0.0.1:9/photo", totalBytes: 300) },
            { .finished($0.id, .answered(status: 204)) },
        ],
    ]

    @Test(arguments: 0..<stories.count)
    func theJournalGivesBackWhatTheEventsFoldTo(story: Int) throws {
        let journal = try Journal(path: root + "/j\(story).sqlite")
        let added = try add(journal)
        var expected = added
        #expect(expected.url == "http://***@127.0.0.1:9/photo?token=***", "the record never carries the secrets")
        for (n, make) in Self.stories[story].enumerated() {
            let at = t0.addingTimeInterval(Double(n + 1))
            let event = make(added)
            try journal.record(event, at: at)
            expected.apply(event, at: at)
        }
        let stored = try #require(try journal.snapshot(expected.id))
        #expect(stored == expected)
        #expect(stored.response?.headers.map { "\($0.0): \($0.1)" } == expected.response?.headers.map { "\($0.0): \($0.1)" })
        // And after the journal is opened again.
        #expect(try Journal(path: root + "/j\(story).sqlite").snapshot(expected.id) == expected)
    }

    @Test func aRedirectedUploadIsJournalledWhereItWent() throws {
        let journal = try Journal(path: root + "/redirect.sqlite")
        let id = try add(journal).id
        try journal.record(.started(id, attempt: 1, url: "http://127.0.0.1:9/photo", totalBytes: 300), at: t0)
        try journal.record(.redirected(id, to: "http://127.0.0.1:10/elsewhere"), at: t0)
        try journal.record(.finished(id, .answered(status: 200)), at: t0)
        #expect(try journal.snapshot(id)?.url == "http://127.0.0.1:10/elsewhere")
    }

    @Test func waitingToRetryIsJournalledWithItsReasonAndDueTime() throws {
        let journal = try Journal(path: root + "/retry.sqlite")
        let id = try add(journal).id
        try journal.record(.started(id, attempt: 1, url: "http://127.0.0.1:9/photo", totalBytes: 300), at: t0)
        try journal.record(.retryScheduled(id, attempt: 2, delaySeconds: 4, reason: "503 Service Unavailable"), at: t0)
        let record = try #require(try journal.snapshot(id))
        #expect(record.phase == .waitingToRetry(attempt: 2, reason: "503 Service Unavailable", due: t0.addingTimeInterval(4)))
        #expect(record.state == .waitingToRetry)
    }
}

/// `status --json` prints the journal's records in their JSON form; a monitor shows its
/// tracker's records. The two must say the same of every upload.
@Suite struct StatusAndMonitorAgreeTests {
    let root = TestFiles.makeTemporaryDirectory("agree")
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// The record's JSON form, each field as canonical JSON text (keys sorted).
    func json(_ record: UploadRecord) throws -> [String: String] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let object = try JSONSerialization.jsonObject(with: encoder.encode(record)) as? [String: Any] ?? [:]
        return try object.mapValues { value in
            String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
        }
    }

    @Test(arguments: 0..<UploadRecordJournalTests.stories.count)
    func statusJSONAndTheMonitorSayTheSame(story: Int) throws {
        let journal = try Journal(path: root + "/j\(story).sqlite")
        let new = NewUpload(
            request: UploadRequest(source: .file(path: "/data/a.png"), url: "http://127.0.0.1:9/photo", uploadName: "a.png"),
            fingerprint: FileFingerprint(size: 100, modificationNanoseconds: 1), settings: TransportSettings(), origin: "monitor")
        let added = try #require(try journal.add([new], at: t0).first)
        let id = added.id
        var live = TransferTracker()
        for (n, make) in UploadRecordJournalTests.stories[story].enumerated() {
            let at = t0.addingTimeInterval(Double(n + 1))
            try journal.record(make(added), at: at)
            live.apply(make(added), now: Double(n + 1), date: at)
        }
        let stored = try #require(try journal.snapshot(id))
        var reattached = TransferTracker()
        reattached.adopt(stored, now: 100, date: t0.addingTimeInterval(100))

        let status = try json(stored)
        // A monitor that attached later has the agent's record, and one that watched it live
        // folded the same events into the record its `queued` carried: every field agrees.
        #expect(try json(try #require(reattached[id]).record) == status)
        #expect(try json(try #require(live[id]).record) == status)
        // And the JSON form reads back as the record.
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        #expect(try decoder.decode(UploadRecord.self, from: encoder.encode(stored)) == stored)
    }

    /// Whether an upload goes without its location is the upload's own setting: its record
    /// (what the monitor and `status --json` read) says so.
    @Test func theRecordSaysWhenThePhotoGoesWithoutItsLocation() throws {
        let journal = try Journal(path: root + "/location.sqlite")
        var settings = TransportSettings()
        settings.stripLocation = true
        let uploads = [settings, TransportSettings()].map { settings in
            NewUpload(
                request: UploadRequest(source: .file(path: "/data/a.jpg"), url: "http://127.0.0.1:9/photo", uploadName: "a.jpg"),
                fingerprint: FileFingerprint(size: 100, modificationNanoseconds: 1), settings: settings, origin: "monitor")
        }
        let added = try journal.add(uploads, at: t0)
        #expect(added.map(\.withoutLocation) == [true, false])
        let stripped = try #require(try journal.snapshot(added[0].id))
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(stripped)) as? [String: Any]
        #expect(object?["withoutLocation"] as? Bool == true)
        let plain = try JSONSerialization.jsonObject(with: JSONEncoder().encode(try #require(try journal.snapshot(added[1].id)))) as? [String: Any]
        #expect(plain?["withoutLocation"] == nil)
    }

    /// A journal written by an earlier version logged `queued` with the name and size alone:
    /// it still reads back (a monitor catching up gets those events), as the record it stands for.
    @Test func aQueuedEventLoggedByAnEarlierVersionReadsBack() throws {
        let path = root + "/legacy.sqlite"
        let journal = try Journal(path: path)
        let id = try #require(
            try journal.add(
                [
                    NewUpload(
                        request: UploadRequest(source: .file(path: "/data/a.png"), url: "http://127.0.0.1:9/photo", uploadName: "a.png"),
                        fingerprint: FileFingerprint(size: 100, modificationNanoseconds: 1), settings: TransportSettings(), origin: "send")
                ], at: t0
            ).first
        ).id
        try DatabaseQueue(path: path).write { db in
            try db.execute(
                sql: "INSERT INTO event (uploadID, kind, event, at) VALUES (?, 'queued', ?, ?)",
                arguments: [
                    id.rawValue, #"{"queued":{"_0":\#(id.rawValue),"name":"a.png","totalBytes":100}}"#, t0,
                ])
        }
        let entries = try journal.entries(after: 0)
        #expect(entries.count == 1)
        guard case .queued(let record) = entries.first?.event else {
            Issue.record("\(entries)")
            return
        }
        #expect(record.id == id && record.name == "a.png" && record.fileSize == 100 && record.createdAt == t0)
    }

    @Test func credentialsTheServerSetAreNeitherKeptNorShown() throws {
        let journal = try Journal(path: root + "/cookie.sqlite")
        let new = NewUpload(
            request: UploadRequest(source: .file(path: "/data/a.png"), url: "http://127.0.0.1:9/photo", uploadName: "a.png"),
            fingerprint: FileFingerprint(size: 100, modificationNanoseconds: 1), settings: TransportSettings(), origin: "send")
        let id = try #require(try journal.add([new], at: t0).first).id
        let answer = UploadResponse(status: 200, reason: "OK", headers: [("Set-Cookie", "session=s3cr3t"), ("X-Id", "9")], body: [], bodyBytesTotal: 0)
        try journal.record(.response(id, answer), at: t0)
        let stored = try #require(try journal.snapshot(id))
        #expect(stored.response?.headers.map { "\($0.0): \($0.1)" } == ["Set-Cookie: ***", "X-Id: 9"])
        #expect(try journal.entries(after: 0).allSatisfy { !"\($0.event)".contains("s3cr3t") })
        #expect(try !String(decoding: JSONEncoder().encode(stored), as: UTF8.self).contains("s3cr3t"))
    }
}
