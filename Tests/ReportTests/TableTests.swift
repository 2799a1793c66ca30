import Foundation
import Testing
import UploadCore
import UploadReports

@Suite struct StatusTableTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func record(_ id: Int, _ name: String, _ events: [UploadEvent]) -> UploadRecord {
        var record = UploadRecord(id: UploadID(id), name: name, path: "/p/\(name)", url: "http://h/photo", origin: "send", fileSize: 2000, createdAt: t0)
        for event in events { record.apply(event, at: t0) }
        return record
    }

    @Test func eachUploadIsARowThatSaysWhereItStands() {
        let id1 = UploadID(1)
        let id2 = UploadID(2)
        let id3 = UploadID(3)
        let uploads = [
            record(1, "a.jpg", [.started(id1, attempt: 1, url: "http://h/photo", totalBytes: 2200), .finished(id1, .answered(status: 201))]),
            record(
                2, "b.jpg",
                [
                    .started(id2, attempt: 1, url: "http://h/photo", totalBytes: 2200),
                    .retryScheduled(id2, attempt: 2, delaySeconds: 4, reason: "503 Service Unavailable"),
                ]),
            record(
                3, "c.jpg",
                [
                    .started(id3, attempt: 1, url: "http://h/photo", totalBytes: 2000),
                    .progress(id3, bytesSent: 500, totalBytesSent: 500, totalBytesExpected: 2000),
                ]),
        ]
        let lines = StatusTable.render(uploads, now: t0.addingTimeInterval(1)).split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("ID  STATE      NAME   TO              PROGRESS"))
        #expect(lines[1].hasPrefix("#1  succeeded  a.jpg  http://h/photo  2.00 kB") && lines[1].contains("201 Created"), "\(lines)")
        #expect(
            StatusTable.totalsLine([.succeeded: 19_990, .failed: 6, .queued: 4], shown: 50)
                == "All 20000 uploads: 19990 sent · 6 failed or cancelled · 4 queued (the newest 50 shown; --limit N shows more)")
        #expect(lines[2].contains("retrying") && lines[2].contains("waiting to retry in 3 s (attempt 2: 503 Service Unavailable)"), "\(lines)")
        #expect(lines[3].contains("sending") && lines[3].contains("25 % of 2.00 kB"), "\(lines)")
    }

    @Test func aResumedUploadSaysWhereItResumedAndWhatItSaved() {
        let id = UploadID(4)
        var events: [UploadEvent] = [
            .started(id, attempt: 1, url: "http://h/photo", totalBytes: 2000),
            .progress(id, bytesSent: 800, totalBytesSent: 800, totalBytesExpected: 2000),
            .started(id, attempt: 2, url: "http://h/photo", totalBytes: 2000),
            .resumed(id, offset: 1000, of: 2000),
            .progress(id, bytesSent: 500, totalBytesSent: 1500, totalBytesExpected: 2000),
        ]
        let sending = StatusTable.render([record(4, "d.jpg", events)], now: t0).split(separator: "\n").map(String.init)
        #expect(sending[1].contains("75 % of 2.00 kB (resumed at 50 %)"), "\(sending)")
        events.append(.finished(id, .answered(status: 200)))
        let done = StatusTable.render([record(4, "d.jpg", events)], now: t0).split(separator: "\n").map(String.init)
        #expect(done[1].contains("2.00 kB (1.00 kB not sent again)"), "\(done)")
    }

    @Test func theAgentLineSaysWhatHappensToUnfinishedUploads() {
        #expect(StatusTable.agentLine(nil, unfinished: 0) == "Agent: not running.")
        #expect(StatusTable.agentLine(nil, unfinished: 2).hasPrefix("Agent: not running. 2 unfinished upload(s) continue when it starts"))
    }
}

@Suite struct TableLayoutTests {
    @Test func columnsLineUpByDisplayWidth() {
        #expect(Table.render([["A", "B"], ["夕焼け", "x"], ["b", "y"]]) == "A       B\n夕焼け  x\nb       y")
    }
}
