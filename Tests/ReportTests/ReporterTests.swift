import UploadTesting
import Foundation
import Testing
import UploadCore
import UploadReports

/// Collects what a reporter writes.
final class Captured: TextSink, @unchecked Sendable {
    private let lock = NSLock()
    private var chunks: [String] = []
    func write(_ text: String) { lock.withLock { chunks.append(text) } }
    var text: String { lock.withLock { chunks.joined() } }
    var lines: [String] { text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty } }
}

/// Runs events through a tracker into a reporter, as `send` does.
func report<R: SendReporter>(_ reporter: inout R, _ events: [UploadEvent]) {
    var tracker = TransferTracker()
    for (n, event) in events.enumerated() {
        tracker.apply(event, now: Double(n), date: Date(timeIntervalSince1970: 1_800_000_000 + Double(n)))
        reporter.handle(event, tracker: tracker, now: Double(n))
    }
    reporter.finish(tracker: tracker)
}

let one = UploadID(1)
let two = UploadID(2)
let created = UploadResponse(status: 201, reason: "Created", headers: [], body: Array(#"{"filename": "a.jpg"}"#.utf8), bodyBytesTotal: 21)

let story: [UploadEvent] = [
    .queued(one, name: "a.jpg", totalBytes: 2000),
    .queued(two, name: "\u{202E}gnp.exe", totalBytes: 10),
    .started(one, attempt: 1, url: "http://h/photo", totalBytes: 2200),
    .progress(one, bytesSent: 2200, totalBytesSent: 2200, totalBytesExpected: 2200),
    .response(one, created),
    .finished(one, .answered(status: 201)),
    .started(two, attempt: 1, url: "http://h/photo", totalBytes: 200),
    .response(two, UploadResponse(status: 503, reason: "Service Unavailable", headers: [], body: [0x1B, 0x5B, 0x32, 0x4A], bodyBytesTotal: 4)),
    .retryScheduled(two, attempt: 2, delaySeconds: 4, reason: "503 Service Unavailable"),
    .started(two, attempt: 2, url: "http://h/photo", totalBytes: 200),
    .finished(two, .failed(UploadFailure(.connectionLost, "connection lost during the upload: Connection reset by peer", code: 104))),
    .allFinished(UploadSummary(succeeded: 1, failed: 1)),
]

@Suite struct PlainReporterTests {
    @Test func oneLinePerStepWithTheAnswerAndNamesEscaped() {
        let out = Captured()
        var reporter = PlainReporter(console: out)
        report(&reporter, story)
        #expect(
            out.lines == [
                "#1 a.jpg queued (2.00 kB)",
                "#2 <U+202E>gnp.exe queued (10 B)",
                "#1 a.jpg sending to http://h/photo",
                "#1 a.jpg 100% 2.20 kB / 2.20 kB  2.20 kB/s  ETA 0:00",
                "#1 a.jpg answer 201 Created",
                #"#1 a.jpg OK 201 Created {"filename": "a.jpg"}"#,
                "#2 <U+202E>gnp.exe sending to http://h/photo",
                "#2 <U+202E>gnp.exe answer 503 Service Unavailable",
                "#2 <U+202E>gnp.exe 503 Service Unavailable; attempt 2 in 4.0 s",
                "#2 <U+202E>gnp.exe sending to http://h/photo (attempt 2)",
                "#2 <U+202E>gnp.exe FAILED connection lost during the upload: Connection reset by peer (code 104)",
                "all 2 uploads finished: 1 ok, 1 failed",
            ], "\(out.text)")
    }
}

/// A resumable upload: cut, continued, and one that has to start over, with the reason.
let resumedStory: [UploadEvent] = {
    let point = ResumePoint(
        uploadURL: "http://h/resumable/t1", version: 8, boundary: "B", bodyLength: 2000,
        file: FileFingerprint(size: 1800, modificationNanoseconds: 1))
    return [
        .queued(one, name: "big.png", totalBytes: 1800),
        .resumable(one, point),
        .started(one, attempt: 1, url: "http://h/photo", totalBytes: 2000),
        .retryScheduled(one, attempt: 2, delaySeconds: 0, reason: "the server closed the connection during the upload"),
        .started(one, attempt: 2, url: "http://h/photo", totalBytes: 2000),
        .resumed(one, offset: 820, of: 2000),
        .resumable(one, nil),
        .finished(one, .answered(status: 200)),
        .queued(two, name: "moved.png", totalBytes: 1800),
        .resumable(two, nil, startedOver: "the file changed since the upload began"),
    ]
}()

@Suite struct ResumedReportTests {
    @Test func plainLinesSayWhereItResumedAndWhyOneStartsOver() {
        let out = Captured()
        var reporter = PlainReporter(console: out)
        report(&reporter, resumedStory)
        #expect(out.lines.contains("#1 big.png resumed at 41 %: 820 B of 2.00 kB not sent again"), "\(out.text)")
        #expect(out.lines.contains("#2 moved.png starting over from 0: the file changed since the upload began"), "\(out.text)")
    }

    @Test func jsonCarriesTheUploadURLTheOffsetAndTheReason() throws {
        let out = Captured()
        var reporter = JSONReporter(console: out)
        report(&reporter, resumedStory)
        let objects = try out.lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        let resumable = objects.filter { $0["event"] as? String == "resumable" }
        #expect(resumable.first?["uploadURL"] as? String == "http://h/resumable/t1")
        #expect(resumable.first?["interopVersion"] as? Int == 8)
        #expect(resumable.last?["startedOver"] as? String == "the file changed since the upload began")
        #expect(resumable.last?["resumable"] as? Bool == false)
        let resumed = try #require(objects.first { $0["event"] as? String == "resumed" })
        #expect(resumed["offset"] as? Int == 820 && resumed["bodyBytes"] as? Int == 2000)
    }
}

@Suite struct JSONReporterTests {
    @Test func everyLineIsOneJSONObjectWithTheFieldsOfItsEvent() throws {
        let out = Captured()
        var reporter = JSONReporter(console: out)
        report(&reporter, story)
        let objects = try out.lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(
            objects.map { $0["event"] as? String } == [
                "queued", "queued", "started", "progress", "response", "finished", "started", "response", "retry", "started", "finished", "allFinished",
            ])
        #expect(objects[1]["name"] as? String == "\u{202E}gnp.exe", "JSON carries the exact name; escaping is the reader's")
        #expect(objects[5]["ok"] as? Bool == true)
        #expect(objects[8]["reason"] as? String == "503 Service Unavailable")
    }
}

/// The terminal reporter redraws lines in place: cursor up over the lines still running,
/// finished lines turn into their answer and scroll into the output once all above are done.
@Suite struct TTYReporterTests {
    @Test func finishedLinesBecomeTheirAnswerAndRunningOnesAreRedrawn() {
        let out = Captured()
        var reporter = TTYReporter(style: OutputStyle(isTTY: true, color: false, width: 100), console: out)
        report(&reporter, story)
        let text = out.text
        #expect(text.contains("\u{1B}[2K✓ a.jpg  201 Created"), "\(text.debugDescription)")
        #expect(text.contains(#"{"filename": "a.jpg"}"#))
        #expect(text.contains("… <U+202E>gnp.exe 503 Service Unavailable; waiting to retry"))
        #expect(text.contains("✗ <U+202E>gnp.exe  connection lost during the upload: Connection reset by peer (code 104)"))
        #expect(text.hasSuffix("All 2 uploads finished: 1 ok, 1 failed\n"))
        #expect(text.contains("\r\u{1B}[1A"), "the running line is redrawn in place")
        #expect(!text.contains("\u{1B}[2J"), "a binary body (here a clear-screen escape) is never printed")
        #expect(!text.contains("\u{1B}[3"), "no colour without colour")
    }

    @Test func colourMarksSuccessGreenAndFailureRed() {
        let out = Captured()
        var reporter = TTYReporter(style: OutputStyle(isTTY: true, color: true, width: 100), console: out)
        report(&reporter, story)
        #expect(out.text.contains("\u{1B}[32m✓ a.jpg"))
        #expect(out.text.contains("\u{1B}[31m✗ <U+202E>gnp.exe"))
    }
}

/// A server that keeps the upload on another origin (a tus creation's or the draft's `Location`
/// naming another host or port): followed, as the protocols mean, and said once.
@Suite struct UploadElsewhereReportTests {
    @Test func theOtherOriginIsSaidOnceAndTheSameOriginNever() {
        let file = FileFingerprint(size: 1800, modificationNanoseconds: 1)
        func queued(_ id: UploadID, _ url: String) -> UploadEvent {
            .queued(
                UploadRecord(
                    id: id, name: "\(id.rawValue).jpg", path: nil, url: url, origin: "", fileSize: 1800,
                    createdAt: Date(timeIntervalSince1970: 1_700_000_000)))
        }
        var far = ResumePoint.tus(uploadURL: "http://store.example:9000/files/abc", bodyLength: 1800, file: file)
        let near = ResumePoint.tus(uploadURL: "http://h/files/def", bodyLength: 1800, file: file)
        let s3 = ResumePoint.s3(objectURL: "https://b.s3.us-east-1.amazonaws.com/k.jpg", uploadID: "U", partSize: 8 << 20, bodyLength: 1800, file: file)
        let out = Captured()
        var reporter = PlainReporter(console: out)
        var events: [UploadEvent] = [queued(one, "http://h/files"), .resumable(one, far)]
        far.offset = 900
        events += [
            .resumable(one, far), queued(two, "http://h/files"), .resumable(two, near),
            queued(UploadID(3), "s3://b/"), .resumable(UploadID(3), s3),
        ]
        report(&reporter, events)
        let said = out.lines.filter { $0.contains("another origin") }
        #expect(
            said == ["#1 1.jpg the server keeps the upload at http://store.example:9000/files/abc, another origin than the endpoint's; its bytes go there"],
            "\(out.text)")
    }
}
