import Foundation
import Testing
@testable import UploadAgent
import UploadCore
import UploadJournal
import UploadReports
import UploadTesting

/// A file of a watched folder that fails the same way look after look is parked with its
/// reason, and looked at again only when it changes.
@Suite struct ParkedFileTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let entry = WatchScanner.Entry(name: "a.jpg", fingerprint: FileFingerprint(size: 10, modificationNanoseconds: 1), access: "0000 1000:1000")

    @Test func theThirdFailureTheSameWayParksIt() {
        var seen: WatchFile? = WatchFile(jobID: 1, name: "a.jpg", fingerprint: entry.fingerprint, state: .pending, at: now)
        var states: [WatchFileState] = []
        for look in 1...3 {
            let file = WatchScanner.failed(entry, seen: seen, reason: "Permission denied", jobID: 1, at: now.addingTimeInterval(Double(look)))
            #expect(file.failures == look)
            #expect(file.note == "Permission denied")
            #expect(file.firstSeenAt == now)
            states.append(file.state)
            seen = file
        }
        #expect(states == [.pending, .pending, .parked])
        // Another reason starts the count again.
        let other = WatchScanner.failed(
            entry, seen: WatchScanner.failed(entry, seen: nil, reason: "Permission denied", jobID: 1, at: now),
            reason: "Input/output error", jobID: 1, at: now)
        #expect(other.failures == 1 && other.state == .pending)
    }

    @Test func aParkedFileWaitsUntilItsSizeTimeOrPermissionsChange() {
        let parked = WatchFile(
            jobID: 1, name: "a.jpg", fingerprint: entry.fingerprint, state: .parked,
            note: "Permission denied", access: "0000 1000:1000", failures: 3, at: now)
        func plan(_ listed: WatchScanner.Entry) -> WatchScanner.Plan {
            WatchScanner.plan(jobID: 1, listing: [listed], known: ["a.jpg": parked], at: now.addingTimeInterval(60))
        }
        let unchanged = plan(entry)
        #expect(unchanged.settled.isEmpty && unchanged.changes.isEmpty, "not looked at again")
        var readable = entry
        readable.access = "0644 1000:1000"
        var rewritten = entry
        rewritten.fingerprint = FileFingerprint(size: 10, modificationNanoseconds: 2)
        var grown = entry
        grown.fingerprint = FileFingerprint(size: 11, modificationNanoseconds: 1)
        for changed in [readable, rewritten, grown] {
            let woken = plan(changed)
            #expect(woken.settled.isEmpty, "a woken file settles first")
            #expect(woken.changes.pending.map(\.state) == [.pending])
            #expect(woken.changes.pending.first?.failures == 0 && woken.changes.pending.first?.note == nil)
            #expect(woken.changes.pending.first?.firstSeenAt == now)
        }
    }

    @Test func theJournalKeepsTheCountAndJobsSayWhatIsParkedAndWhy() throws {
        let root = TestFiles.makeTemporaryDirectory("parked")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let journal = try Journal(path: root + "/j.sqlite")
        let spec = WatchSpec(
            directory: root, template: UploadRequest(source: .file(path: root), url: "http://127.0.0.1:9/photo", uploadName: "-"), settings: TransportSettings()
        )
        let (job, _) = try journal.registerJob(.watch(spec), every: 60, firstRunAt: now, at: now)
        var changes = WatchScanChanges()
        changes.failed = [
            WatchFile(
                jobID: job.id, name: "a.jpg", fingerprint: entry.fingerprint, state: .parked, note: "Permission denied", access: "0000 0:0", failures: 3,
                at: now),
            WatchFile(
                jobID: job.id, name: "b.jpg", fingerprint: entry.fingerprint, state: .pending, note: "Permission denied", access: "0000 0:0", failures: 1,
                at: now),
        ]
        _ = try journal.applyWatchScan(job.id, changes, at: now)
        let files = try journal.watchFiles(job.id)
        #expect(files["a.jpg"]?.failures == 3 && files["a.jpg"]?.access == "0000 0:0" && files["a.jpg"]?.state == .parked)
        #expect(files["b.jpg"]?.failures == 1 && files["b.jpg"]?.state == .pending)
        let snapshot = try #require(try journal.jobSnapshots().first)
        #expect(snapshot.filesParked == 1 && snapshot.parked == ["a.jpg: Permission denied"])
        #expect(JobsTable.describe(snapshot).contains("1 parked until changed: a.jpg: Permission denied"), "\(JobsTable.describe(snapshot))")
    }
}
