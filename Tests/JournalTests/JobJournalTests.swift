import Foundation
import Testing
import UploadCore
@testable import UploadJournal
import UploadTesting

@Suite struct JobJournalTests {
    let root = TestFiles.makeTemporaryDirectory("jobs")

    func watchSpec(_ directory: String, url: String = "http://127.0.0.1:9/photo", secret: String = "Bearer hush") -> JobSpec {
        .watch(
            WatchSpec(
                directory: directory,
                template: UploadRequest(
                    source: .file(path: directory), url: url, uploadName: "-",
                    headers: [RequestHeader(name: "Authorization", value: secret)]),
                settings: TransportSettings()))
    }

    func newUpload(_ path: String, size: Int64) -> NewUpload {
        NewUpload(
            request: UploadRequest(source: .file(path: path), url: "http://127.0.0.1:9/photo", uploadName: (path as NSString).lastPathComponent),
            fingerprint: FileFingerprint(size: size, modificationNanoseconds: 42), settings: TransportSettings(), origin: "watch /in")
    }

    @Test func aVersionOneJournalIsUpgradedAndKeepsItsUploads() throws {
        let path = root + "/old.sqlite"
        let old = try Journal(path: path, migratingUpTo: "v1: uploads and events")
        #expect(try old.appliedMigrations() == ["v1: uploads and events"])
        // A row as version 1 wrote it (today's code writes columns it did not have).
        try old.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO upload (path, fileSize, fileMtimeNs, uploadName, url, field, formFields, headers, allowAnyFile,
                        settings, origin, state, attempts, bytesSent, createdAt, updatedAt)
                    VALUES ('/in/a.png', 10, 42, 'a.png', 'http://127.0.0.1:9/photo', 'photo', '[]',
                        '[{"name":"Authorization","value":"Bearer v1"}]', 0,
                        '{"insecure":false,"connectTimeout":10,"stallTimeout":30,"answerTimeout":60,"retries":0}', 'watch /in', 'queued', 0, 0,
                        '2026-01-01 00:00:00.000', '2026-01-01 00:00:00.000')
                    """)
        }

        let upgraded = try Journal(path: path)
        #expect(try upgraded.appliedMigrations() == JournalTests.allMigrations)
        #expect(try upgraded.snapshots().map(\.name) == ["a.png"])
        // Still queued: its header values stay, to send it.
        #expect(try upgraded.recover(at: Date()).first?.request.headers == [RequestHeader(name: "Authorization", value: "Bearer v1")])
        #expect(try upgraded.jobSnapshots().isEmpty)
    }

    /// A journal a huge interval broke (a next run past year 9999, stored as text nothing reads
    /// back) opens again: the job runs at the next chance, its interval within range.
    @Test func aScheduleNoDateReadsBackIsRepairedWhenTheJournalOpens() throws {
        let path = root + "/broken.sqlite"
        let old = try Journal(path: path, migratingUpTo: "v2: scheduled jobs")
        _ = try old.registerJob(watchSpec("/far"), every: 300, firstRunAt: Date(), at: Date())
        _ = try old.registerJob(watchSpec("/empty"), every: 300, firstRunAt: Date(), at: Date())
        try old.pool.write { db in
            try db.execute(sql: "UPDATE job SET earliestBeginAt = '10240-08-13 00:00:00.000', intervalSeconds = 2.592e11 WHERE key = 'watch:/far'")
            try db.execute(sql: "UPDATE job SET earliestBeginAt = '', intervalSeconds = -5 WHERE key = 'watch:/empty'")
        }
        #expect(throws: (any Error).self) { try old.jobSnapshots() }

        let before = Date().addingTimeInterval(-1)
        let repaired = try Journal(path: path)
        let jobs = try repaired.jobSnapshots()
        #expect(jobs.count == 2)
        for job in jobs {
            #expect(job.earliestBeginAt >= before && job.earliestBeginAt <= Date().addingTimeInterval(1), "\(job)")
            #expect(DurationRule.watchInterval.range.contains(job.intervalSeconds), "\(job)")
        }
    }

    /// However far away a run is asked for, what is written reads back.
    @Test(arguments: [1e300, 9.3e10, Double(Int64.max), -1e300, .nan, .infinity])
    func anyFirstRunOrIntervalIsWrittenSoItReadsBack(seconds: Double) throws {
        let journal = try Journal(path: root + "/any-\(seconds).sqlite")
        let (job, _) = try journal.registerJob(
            watchSpec("/in"), every: seconds.isFinite ? max(seconds, 1) : 300, firstRunAt: Date(timeIntervalSinceNow: seconds), at: Date())
        _ = try journal.beginJobRun(job.id, at: Date())
        let read = try #require(try journal.jobSnapshots().first)
        #expect(read.earliestBeginAt <= Journal.latestReadableDate)
    }

    @Test func registeringTheSameFolderAgainUpdatesTheJob() throws {
        let journal = try Journal(path: root + "/j.sqlite")
        let now = Date()
        let (first, created) = try journal.registerJob(watchSpec("/in"), every: 300, firstRunAt: now, at: now)
        #expect(created)
        #expect(first.kind == .watch && first.title == "/in" && first.detail == "→ http://127.0.0.1:9/photo")
        let (second, createdAgain) = try journal.registerJob(watchSpec("/in", url: "http://127.0.0.1:9/other"), every: 60, firstRunAt: now, at: Date())
        #expect(!createdAgain)
        #expect(second.id == first.id)
        #expect(second.intervalSeconds == 60 && second.detail == "→ http://127.0.0.1:9/other")
        let (other, _) = try journal.registerJob(watchSpec("/elsewhere"), every: 60, firstRunAt: now, at: Date())
        #expect(other.id != first.id)
        #expect(try journal.jobSnapshots().map(\.title) == ["/in", "/elsewhere"])

        // The maintenance job is added once, whatever its settings next time.
        #expect(try journal.ensureJob(.maintenance(MaintenanceSpec()), every: 86400, firstRunAt: now, at: Date()))
        #expect(try !journal.ensureJob(.maintenance(MaintenanceSpec(keepSeconds: 1)), every: 1, firstRunAt: now, at: Date()))
        let maintenance = try #require(try journal.jobSnapshots().first { $0.kind == .maintenance })
        #expect(maintenance.intervalSeconds == 86400 && maintenance.detail == "keeps 7d of history")
    }

    @Test func aRunPushesTheNextRunOneIntervalAwayFromItsStart() throws {
        let journal = try Journal(path: root + "/j.sqlite")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let (job, _) = try journal.registerJob(watchSpec("/in"), every: 300, firstRunAt: start, at: Date())
        let begun = try #require(try journal.beginJobRun(job.id, at: start.addingTimeInterval(7)))
        #expect(begun.lastRunAt == start.addingTimeInterval(7))
        #expect(begun.earliestBeginAt == start.addingTimeInterval(307))
        try journal.endJobRun(job.id, result: "nothing new", failed: false)
        let after = try #require(try journal.jobSnapshots().first)
        #expect(after.runs == 1 && after.lastResult == "nothing new" && !after.lastFailed)

        #expect(try journal.rescheduleJob(job.id, earliestBeginAt: start))
        #expect(try journal.scheduledJob(job.id)?.earliestBeginAt == start)
        #expect(try !journal.rescheduleJob(999, earliestBeginAt: start))
        #expect(try journal.beginJobRun(999, at: Date()) == nil)
    }

    @Test func aScanQueuesAndMarksInOneStepAndRemovingTheJobForgetsItsFiles() throws {
        let journal = try Journal(path: root + "/j.sqlite")
        let (job, _) = try journal.registerJob(watchSpec("/in"), every: 300, firstRunAt: Date(), at: Date())
        var first = WatchScanChanges()
        first.pending = [
            WatchFile(
                jobID: job.id, name: "a.png", fingerprint: FileFingerprint(size: 10, modificationNanoseconds: 42), state: .pending,
                at: Date(timeIntervalSinceNow: -60))
        ]
        first.skipped = [
            WatchFile(
                jobID: job.id, name: "notes.txt", fingerprint: FileFingerprint(size: 5, modificationNanoseconds: 1), state: .skipped, note: "not an image",
                at: Date())
        ]
        #expect(try journal.applyWatchScan(job.id, first, at: Date()).isEmpty)

        var second = WatchScanChanges()
        second.queue = [("a.png", newUpload("/in/a.png", size: 10))]
        second.forgotten = ["notes.txt"]
        let added = try journal.applyWatchScan(job.id, second, at: Date())
        #expect(added.map(\.name) == ["a.png"])
        #expect(added.first?.origin == "watch /in")
        let files = try journal.watchFiles(job.id)
        #expect(files.keys.sorted() == ["a.png"])
        let a = try #require(files["a.png"])
        #expect(a.state == .queued && a.uploadID == Int64(added[0].id.rawValue))
        // When it was first seen is kept across scans.
        #expect(a.firstSeenAt < a.updatedAt)
        let snapshot = try #require(try journal.jobSnapshots().first)
        #expect(snapshot.filesQueued == 1 && snapshot.filesPending == 0 && snapshot.filesSkipped == 0)

        #expect(try journal.removeJob(job.id))
        #expect(try journal.watchFiles(job.id).isEmpty)
        #expect(try journal.jobSnapshots().isEmpty)
        // A scan that finishes after its job was removed adds nothing.
        #expect(try journal.applyWatchScan(job.id, second, at: Date()).isEmpty)
        #expect(try journal.snapshots().count == 1)
    }

    @Test func headersOfAWatchNeverLeaveTheJournal() throws {
        let journal = try Journal(path: root + "/j.sqlite")
        _ = try journal.registerJob(watchSpec("/in", secret: "Bearer top-secret-value"), every: 300, firstRunAt: Date(), at: Date())
        let encoded = try JSONEncoder().encode(try journal.jobSnapshots())
        #expect(!String(decoding: encoded, as: UTF8.self).contains("top-secret-value"))
        // …but the agent gets them back to send.
        guard case .watch(let spec) = try #require(try journal.scheduledJobs().first).spec else {
            Issue.record("not a watch")
            return
        }
        #expect(spec.request(forFileNamed: "x.png").headers == [RequestHeader(name: "Authorization", value: "Bearer top-secret-value")])
        #expect(spec.request(forFileNamed: "x.png").source == .file(path: "/in/x.png"))
    }

    @Test func durationsReadBackWhatTheyPrint() {
        for seconds: Double in [1, 45, 60, 300, 5400, 86400, 604_800, 90061] {
            #expect(DurationText.parse(DurationText.format(seconds)) == seconds)
        }
        #expect(DurationText.format(5400) == "1h30m")
        #expect(DurationText.format(7 * 86400) == "7d")
        #expect(DurationText.format(0) == "0s")
    }
}
