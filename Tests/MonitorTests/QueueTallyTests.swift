import Foundation
@testable import Monitor
import TerminalCanvas
import Testing
import UploadCore

/// The queue's tallies (counts by state, the overall bar's bytes, each file's status, the
/// contents sent, the moving and failed rows) are kept by what each event changed. Driven here
/// through thousands of mixed events, they must always equal what counting every row afresh
/// gives.
@Suite struct QueueTallyTests {
    static let endpoint = "http://127.0.0.1:3000/photo"

    /// What the tallies are, counted from every row the slow way.
    static func counted(_ queue: QueueState, endpoint: String) -> (QueueTally, [String: FileUploadStatus.Kind], Set<String>, Set<UploadID>, Set<UploadID>) {
        var tally = QueueTally()
        var files: [String: (rank: Int, kind: FileUploadStatus.Kind)] = [:]
        var contents: Set<String> = []
        var moving: Set<UploadID> = []
        var failed: Set<UploadID> = []
        for id in queue.rows {
            guard let row = queue.state(id) else { continue }
            let size = row.totalBytes ?? row.sentBytes
            tally.totalBytes += size
            if let outcome = row.outcome {
                tally.sentBytes += size
                if outcome.isSuccess {
                    tally.ok += 1
                } else {
                    tally.failed += 1
                    failed.insert(id)
                }
            } else {
                tally.sentBytes += row.sentBytes
                tally.active += 1
            }
            switch row.record.phase {
            case .sending, .waitingToRetry: moving.insert(id)
            default: break
            }
            guard row.record.url.isEmpty || row.record.url == endpoint else { continue }
            if row.record.state == .succeeded, let sha = row.record.contentSHA256 { contents.insert(sha) }
            guard let path = row.record.path else { continue }
            let kind: FileUploadStatus.Kind
            let rank: Int
            switch row.record.state {
            case .failed: (kind, rank) = (.failed, 0)
            case .succeeded: (kind, rank) = (.sent, 1)
            case .queued, .waitingToRetry: (kind, rank) = (.queued, 2)
            case .sending: (kind, rank) = (.sending, 3)
            }
            if let known = files[path], known.rank >= rank { continue }
            files[path] = (rank, kind)
        }
        return (tally, files.mapValues(\.kind), contents, moving, failed)
    }

    static func expectAgrees(_ state: MonitorState, _ step: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let (tally, files, contents, moving, failed) = counted(state.queue, endpoint: state.endpoint)
        #expect(state.queue.tally == tally, "step \(step)", sourceLocation: sourceLocation)
        #expect(state.queue.files.mapValues(\.kind) == files, "step \(step)", sourceLocation: sourceLocation)
        #expect(state.queue.sentContents == contents, "step \(step)", sourceLocation: sourceLocation)
        #expect(state.queue.moving == moving && state.queue.failedRows == failed, "step \(step)", sourceLocation: sourceLocation)
        #expect(state.queue.activeCount == tally.active, sourceLocation: sourceLocation)
    }

    @Test func theTalliesAlwaysEqualCountingEveryRow() {
        var state = MonitorState(width: 120, height: 40, endpoint: Self.endpoint, directory: "/photos", home: "/")
        state.focus = .queue
        var seed: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            // A small deterministic generator: the same steps every run.
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(bound))
        }
        var queued: [UploadID] = []
        var nextID = 1
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        for step in 0..<6_000 {
            let time = EventTime(seconds: Double(step) * 0.01, clock: "12:00:00", date: date.addingTimeInterval(Double(step) * 0.01))
            func upload(_ event: UploadEvent) { _ = MonitorReducer.reduce(&state, .upload(event, time)) }
            let roll = next(100)
            if roll < 15 || queued.isEmpty {
                // A new upload; some of the same path again, some to another endpoint.
                let id = UploadID(nextID)
                nextID += 1
                let path = "/photos/p\(next(40)).jpg"
                let url = next(10) == 0 ? "http://elsewhere/photo" : Self.endpoint
                upload(
                    .queued(
                        UploadRecord(
                            id: id, name: "p.jpg", path: path, url: url, origin: "monitor", fileSize: Int64(1_000 + next(9_000)),
                            createdAt: time.date)))
                queued.append(id)
            } else if roll < 97 {
                let id = queued[next(queued.count)]
                guard let row = state.queue.state(id) else { continue }
                let total = (row.totalBytes ?? 1_000) + 200
                switch next(8) {
                case 0: upload(.started(id, attempt: row.attempt + 1, url: Self.endpoint, totalBytes: total))
                case 1, 2: upload(.progress(id, bytesSent: 100, totalBytesSent: min(total, row.sentBytes + Int64(next(3_000))), totalBytesExpected: total))
                case 3: upload(.content(id, sha256: "sha\(next(30))"))
                case 4: upload(.finished(id, .answered(status: next(4) == 0 ? 500 : 200)))
                case 5: upload(.finished(id, .failed(UploadFailure(.connectionLost, "reset"))))
                case 6: upload(.retryScheduled(id, attempt: row.attempt + 1, delaySeconds: 2, reason: "503"))
                default:
                    // A finished upload queued again (retried by hand).
                    if let outcome = row.outcome, !outcome.isSuccess { upload(.queued(row.record)) }
                }
            } else if roll < 99, next(6) == 0 {
                _ = MonitorReducer.reduce(&state, .key(.character("x"), time))
                queued.removeAll { !state.queue.contains($0) }
            } else {
                _ = MonitorReducer.reduce(&state, .tick(time))
            }
            Self.expectAgrees(state, step)
        }
        #expect(state.queue.rows.count > 100, "the walk reached a long queue")
    }

    /// `f` goes from failed row to failed row (round again after the last), however long the
    /// queue; the title counts the rows by state.
    @Test func fJumpsToTheNextFailedUploadAndTheTitleCountsByState() {
        var state = MonitorState(width: 120, height: 40, endpoint: Self.endpoint, directory: "/photos", home: "/")
        state.focus = .queue
        let time = EventTime(seconds: 1, clock: "12:00:00", date: Date(timeIntervalSince1970: 1_700_000_000))
        func upload(_ event: UploadEvent) { _ = MonitorReducer.reduce(&state, .upload(event, time)) }
        func press(_ key: Key) { _ = MonitorReducer.reduce(&state, .key(key, time)) }
        press(.character("f"))
        #expect(state.message?.text == "No failed uploads in the queue")
        for i in 1...2_000 {
            upload(
                .queued(
                    UploadRecord(
                        id: UploadID(i), name: "p\(i).jpg", path: "/photos/p\(i).jpg", url: Self.endpoint, origin: "monitor",
                        fileSize: 1_000, createdAt: time.date)))
        }
        for i in [5, 1_500] { upload(.finished(UploadID(i), .failed(UploadFailure(.connectionLost, "reset")))) }
        upload(.started(UploadID(7), attempt: 1, url: Self.endpoint, totalBytes: 1_200))
        upload(.finished(UploadID(8), .answered(status: 200)))
        press(.character("g"))
        press(.character("f"))
        #expect(state.queue.selectedID == UploadID(5))
        press(.character("f"))
        #expect(state.queue.selectedID == UploadID(1_500))
        press(.character("f"))
        #expect(state.queue.selectedID == UploadID(5), "round again")
        #expect(MonitorView.queueTitle(state.queue) == "Queue · 2000 · 1 sending · 1996 waiting · 1 ok · 2 failed (f)")
    }
}

/// A monitor attaching after a camera roll finished while it was away: the totals of all of
/// them, every failure as a row and a line, one notification, not 20,000.
@Suite struct LargeReattachTests {
    @Test func theTotalsAndEveryFailureShowNotOnlyTheRecentRows() {
        var state = MonitorState(width: 120, height: 40, endpoint: "http://h/photo", directory: "/photos", home: "/")
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        func record(_ id: Int, failed: Bool) -> UploadRecord {
            var record = UploadRecord(
                id: UploadID(id), name: "p\(id).jpg", path: "/photos/p\(id).jpg", url: "http://h/photo",
                origin: "send", fileSize: 100, createdAt: date)
            record.apply(.started(UploadID(id), attempt: 1, url: "http://h/photo", totalBytes: 300), at: date)
            record.apply(.finished(UploadID(id), failed ? .failed(UploadFailure(.connectionLost, "reset")) : .answered(status: 200)), at: date)
            return record
        }
        let failures = [3, 70, 500, 9_000, 12_345]
        let earlier = failures.map { record($0, failed: true) }
        let recent = (19_001...20_000).map { record($0, failed: false) }
        let outcomes = (1...20_000).map { id -> (UploadID, UploadOutcome) in
            (UploadID(id), failures.contains(id) ? .failed(UploadFailure(.connectionLost, "reset")) : .answered(status: 200))
        }
        let attachment = Reattachment(records: earlier + recent, missedOutcomes: outcomes, at: date)
        #expect(attachment.awayTotals == AwayTotals(ok: 19_995, failed: 5))
        let effects = MonitorReducer.reduce(&state, .attached(attachment, EventTime(seconds: 1, clock: "12:00:00", date: date)))
        let texts = state.log.map(\.text)
        #expect(texts.first == "While you were away: 20000 finished (19995 ok, 5 failed)")
        for id in failures { #expect(texts.contains { $0.hasPrefix("✗ p\(id).jpg") }, "p\(id).jpg") }
        #expect(texts.contains("19995 sent (not listed one by one)"))
        #expect(texts.count == 7, "\(texts.count) lines")
        #expect(effects == [.notify(title: "uploadmon", body: "While you were away: 20000 finished (19995 ok, 5 failed)")])
        #expect(state.queue.counts.failed == 5 && state.queue.rows.count == 1_005)
    }
}
