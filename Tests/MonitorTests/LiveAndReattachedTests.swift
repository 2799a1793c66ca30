import UploadTesting
import Foundation
import Monitor
import TerminalCanvas
import Testing
import UploadCore

/// A monitor that attaches to the agent later must show an upload as a monitor that watched
/// it live shows it: the same queue row and the same response panel.
@Suite struct LiveAndReattachedTests {
    let id = UploadID(5)
    /// The fixtures' clock: `Fixtures.at(t)` is this date plus t.
    let d0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// The queue and response panes' text of both monitors at `now`, after `story`.
    func screens(_ story: [(Double, UploadEvent)], now: Double) -> (live: [String], reattached: [String]) {
        var live = Fixtures.state(width: 160, height: 30)
        var record = UploadRecord(id: id, name: "big.png", path: "/photos/big.png", url: "http://h/photo", origin: "monitor", fileSize: 1000, createdAt: d0)
        for (t, event) in story {
            _ = MonitorReducer.reduce(&live, .upload(event, Fixtures.at(t)))
            record.apply(event, at: d0.addingTimeInterval(t))
        }
        var reattached = Fixtures.state(width: 160, height: 30)
        let attachment = Reattachment(records: [record], missedFinishes: [], at: d0.addingTimeInterval(now))
        _ = MonitorReducer.reduce(&reattached, .attached(attachment, Fixtures.at(now)))
        _ = MonitorReducer.reduce(&live, .tick(Fixtures.at(now)))
        _ = MonitorReducer.reduce(&reattached, .tick(Fixtures.at(now)))
        return (panes(live), panes(reattached))
    }

    func panes(_ state: MonitorState) -> [String] {
        let canvas = MonitorView.render(state, theme: Theme(colors: false, glyphs: .unicode))
        let layout = MonitorLayout(width: state.width, height: state.height)
        return [layout.queue, layout.response].flatMap { rect in
            (rect.y..<(rect.y + rect.height)).map { y in
                String(canvas.line(y).dropFirst(rect.x).prefix(rect.width))
            }
        }
    }

    /// A photo the agent sends without its location keeps its row marker in a monitor that
    /// attached later: the agent's record carries it.
    @Test func aPhotoSentWithoutItsLocationSaysSoAfterReattaching() {
        var record = UploadRecord(id: id, name: "paris.jpg", path: "/photos/paris.jpg", url: "http://h/photo", origin: "monitor", fileSize: 1000, createdAt: d0)
        record.apply(.queued(id, name: "paris.jpg", totalBytes: 1000), at: d0)
        let plain = record
        record.withoutLocation = true
        for (kept, expected) in [(record, true), (plain, false)] {
            var reattached = Fixtures.state(width: 160, height: 30)
            _ = MonitorReducer.reduce(&reattached, .attached(Reattachment(records: [kept], missedFinishes: [], at: d0), Fixtures.at(1)))
            #expect(panes(reattached).contains { $0.contains("paris.jpg · no location") } == expected, "\(panes(reattached))")
        }
    }

    @Test func anUploadWaitingToRetryShowsWhyAndForHowLong() {
        let (live, reattached) = screens(
            [
                (0, .queued(id, name: "big.png", totalBytes: 1000)),
                (1, .started(id, attempt: 1, url: "http://h/photo", totalBytes: 1200)),
                (3, .response(id, Fixtures.response(503, "busy", reason: "Service Unavailable"))),
                (3, .retryScheduled(id, attempt: 2, delaySeconds: 4, reason: "503 Service Unavailable")),
            ], now: 4)
        #expect(
            live.contains { $0.contains("↻ big.png") && $0.contains("waiting to retry in 3 s (attempt 2: 503 Service Unavailable)") },
            "\(live.joined(separator: "\n"))")
        #expect(live == reattached, "live:\n\(live.joined(separator: "\n"))\nreattached:\n\(reattached.joined(separator: "\n"))")
    }

    @Test func aResumedUploadSaysWhereItContinuedAndTheLogWhatItSaved() {
        let story: [(Double, UploadEvent)] = [
            (0, .queued(id, name: "big.png", totalBytes: 1000)),
            (1, .started(id, attempt: 2, url: "http://h/photo", totalBytes: 1000)),
            (1, .resumed(id, offset: 410, of: 1000)),
            (2, .progress(id, bytesSent: 90, totalBytesSent: 500, totalBytesExpected: 1000)),
        ]
        let (live, reattached) = screens(story, now: 3)
        // (The rate differs: a reattached monitor estimates it from the record alone.)
        for screen in [live, reattached] {
            #expect(screen.contains { $0.contains("↑ big.png · resumed at 41 %") && $0.contains("50%") }, "\(screen.joined(separator: "\n"))")
        }
        var state = Fixtures.state(width: 160, height: 30)
        for (t, event) in story + [(4, .response(id, Fixtures.response(200, "{}", reason: "OK"))), (4, .finished(id, .answered(status: 200)))] {
            _ = MonitorReducer.reduce(&state, .upload(event, Fixtures.at(t)))
        }
        let log = state.log.map(\.text)
        #expect(log.contains("↻ big.png: resumed at 41 % (410 B of 1.00 kB not sent again)"), "\(log)")
        #expect(log.contains { $0.hasPrefix("✓ big.png → 200") && $0.hasSuffix("(resumed: 410 B not sent again)") }, "\(log)")
    }

    @Test func anUploadThatCannotBeContinuedSaysWhyItStartsOver() {
        var state = Fixtures.state(width: 160, height: 30)
        for (t, event) in [
            (0.0, UploadEvent.queued(id, name: "big.png", totalBytes: 1000)),
            (1, .resumable(id, nil, startedOver: "the file changed since the upload began")),
        ] {
            _ = MonitorReducer.reduce(&state, .upload(event, Fixtures.at(t)))
        }
        #expect(state.log.map(\.text).contains("↺ big.png: starting over from 0: the file changed since the upload began"))
    }

    @Test func aRedirectedUploadShowsWhereItWent() {
        let (live, reattached) = screens(
            [
                (0, .queued(id, name: "big.png", totalBytes: 1000)),
                (1, .started(id, attempt: 1, url: "http://h/photo", totalBytes: 1200)),
                (2, .redirected(id, to: "http://other/upload")),
                (3, .response(id, Fixtures.response(201, #"{"filename":"big.png"}"#, reason: "Created"))),
                (3, .finished(id, .answered(status: 201))),
            ], now: 5)
        #expect(live.contains { $0.contains("http://other/upload") }, "\(live.joined(separator: "\n"))")
        #expect(live == reattached, "live:\n\(live.joined(separator: "\n"))\nreattached:\n\(reattached.joined(separator: "\n"))")
    }
}
