import UploadTesting
import Foundation
import Testing
import UploadCore

/// The one fold of an upload's events: what every view reads.
@Suite struct UploadRecordTests {
    let id = UploadID(7)
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func fresh() -> UploadRecord {
        UploadRecord(id: id, name: "a.jpg", path: "/p/a.jpg", url: "http://h/photo", origin: "send", fileSize: 100, createdAt: t0)
    }

    func folded(_ events: [UploadEvent]) -> UploadRecord {
        var record = fresh()
        for (n, event) in events.enumerated() { record.apply(event, at: t0.addingTimeInterval(Double(n))) }
        return record
    }

    let answer = UploadResponse(
        status: 200, reason: "OK", headers: [("Content-Type", "application/json")], body: Array(#"{"filename":"a.jpg"}"#.utf8), bodyBytesTotal: 20)

    @Test func aSuccessfulUploadEndsFinishedWithItsAnswerAndEveryByteCounted() {
        let record = folded([
            .queued(id, name: "a.jpg", totalBytes: 100),
            .started(id, attempt: 1, url: "http://h/photo", totalBytes: 300),
            .progress(id, bytesSent: 150, totalBytesSent: 150, totalBytesExpected: 300),
            .response(id, answer),
            .finished(id, .answered(status: 200)),
        ])
        #expect(record.phase == .finished(.answered(status: 200)))
        #expect(record.response == answer)
        #expect(record.bytesSent == 300 && record.bytesExpected == 300)
        #expect(record.fraction == 1)
        #expect(record.attempts == 1)
        #expect(record.startedAt == t0.addingTimeInterval(1))
        #expect(record.finishedAt == t0.addingTimeInterval(4))
    }

    @Test func aRedirectIsWhereTheUploadWent() {
        let record = folded([
            .queued(id, name: "a.jpg", totalBytes: 100),
            .started(id, attempt: 1, url: "http://h/photo", totalBytes: 300),
            .progress(id, bytesSent: 300, totalBytesSent: 300, totalBytesExpected: 300),
            .redirected(id, to: "http://other/upload"),
        ])
        #expect(record.url == "http://other/upload")
        #expect(record.bytesSent == 0)
        #expect(record.phase == .sending(attempt: 1))
    }

    @Test func waitingToRetryKeepsTheReasonAndWhenTheNextAttemptIsDue() {
        let record = folded([
            .queued(id, name: "a.jpg", totalBytes: 100),
            .started(id, attempt: 1, url: "http://h/photo", totalBytes: 300),
            .response(id, UploadResponse(status: 503, reason: "Service Unavailable", headers: [], body: [], bodyBytesTotal: 0)),
            .retryScheduled(id, attempt: 2, delaySeconds: 4, reason: "503 Service Unavailable"),
        ])
        #expect(record.phase == .waitingToRetry(attempt: 2, reason: "503 Service Unavailable", due: t0.addingTimeInterval(3 + 4)))
        #expect(record.response?.status == 503, "the answer that made it wait is still there")
        #expect(record.outcome == nil)
    }

    @Test func anUploadWaitingToContinueSaysWhatTheServerKeepsAndUntilWhen() throws {
        let file = FileFingerprint(size: 100, modificationNanoseconds: 1)
        var point = ResumePoint.tus(uploadURL: "http://h/files/1", bodyLength: 1000, file: file, offset: 410, expires: "Mon, 30 Nov 2026 21:05:00 GMT")
        let waiting = folded([
            .queued(id, name: "a.jpg", totalBytes: 1000),
            .resumable(id, point),
            .started(id, attempt: 1, url: "http://h/files/", totalBytes: 1000),
            .retryScheduled(id, attempt: 2, delaySeconds: 4, reason: "connection lost"),
        ])
        let utc = try #require(TimeZone(identifier: "UTC"))
        #expect(waiting.keptText(timeZone: utc) == "the server keeps 41 % until 30 Nov 21:05")
        point.expires = nil
        var unknown = waiting
        unknown.apply(.resumable(id, point), at: t0)
        #expect(unknown.keptText() == "the server keeps 41 %")
        // While it is being sent the progress says it; with nothing kept there is nothing to say.
        var sending = waiting
        sending.apply(.started(id, attempt: 2, url: "http://h/files/", totalBytes: 1000), at: t0)
        #expect(sending.keptText() == nil)
        #expect(fresh().keptText() == nil)
    }

    @Test func aNewAttemptForgetsTheLastAnswerAndAManualRetryTheOutcome() {
        var record = folded([
            .queued(id, name: "a.jpg", totalBytes: 100),
            .started(id, attempt: 1, url: "http://h/photo", totalBytes: 300),
            .response(id, UploadResponse(status: 500, reason: "Internal Server Error", headers: [], body: [], bodyBytesTotal: 0)),
            .finished(id, .answered(status: 500)),
        ])
        record.apply(.queued(id, name: "a.jpg", totalBytes: 100), at: t0.addingTimeInterval(10))
        #expect(record.phase == .queued && record.finishedAt == nil && record.response == nil)
        record.apply(.started(id, attempt: 2, url: "http://h/photo", totalBytes: 300), at: t0.addingTimeInterval(11))
        #expect(record.phase == .sending(attempt: 2) && record.attempts == 2)
    }

    @Test func eventsOfAnotherUploadChangeNothing() {
        var record = fresh()
        record.apply(.finished(UploadID(8), .answered(status: 200)), at: t0)
        record.apply(.allFinished(UploadSummary(succeeded: 1, failed: 0)), at: t0)
        #expect(record == fresh())
    }

    @Test(arguments: [Double.nan, .infinity, -5, 1e300])
    func anyRetryDelayGivesADateThatReadsBack(delay: Double) throws {
        var record = fresh()
        record.apply(.started(id, attempt: 1, url: "http://h/photo", totalBytes: 300), at: t0)
        record.apply(.retryScheduled(id, attempt: 2, delaySeconds: delay, reason: "reset"), at: t0)
        guard case .waitingToRetry(_, _, let due) = record.phase else {
            Issue.record("\(record.phase)")
            return
        }
        #expect(due >= t0 && due <= t0.addingTimeInterval(366 * 86_400))
        let decoded = try JSONDecoder().decode(UploadRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded == record)
    }
}
