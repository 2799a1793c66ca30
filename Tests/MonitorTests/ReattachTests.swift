import UploadTesting
import Foundation
import Monitor
import Testing
import UploadCore

@Suite struct ReattachTests {
    let done = UploadID(1), failed = UploadID(2), sending = UploadID(3), old = UploadID(4)

    static let date = Date(timeIntervalSince1970: 1_800_000_000)

    /// A record as the agent keeps it, folded from its events `secondsAgo` before `date`.
    func record(_ id: UploadID, _ name: String, size: Int64, _ story: [(secondsAgo: Double, event: UploadEvent)]) -> UploadRecord {
        var record = UploadRecord(
            id: id, name: name, path: "/photos/\(name)", url: "http://h/photo", origin: "send", fileSize: size,
            createdAt: Self.date.addingTimeInterval(-story[0].secondsAgo))
        for (ago, event) in story { record.apply(event, at: Self.date.addingTimeInterval(-ago)) }
        return record
    }

    func attachment() -> Reattachment {
        Reattachment(
            records: [
                record(
                    old, "old.png", size: 10,
                    [
                        (900, .queued(old, name: "old.png", totalBytes: 10)),
                        (890, .started(old, attempt: 1, url: "http://h/photo", totalBytes: 20)),
                        (880, .response(old, Fixtures.response(200, #"{"filename":"old.png"}"#, reason: "OK"))),
                        (880, .finished(old, .answered(status: 200))),
                    ]),
                record(
                    done, "cat.jpg", size: 100,
                    [
                        (60, .queued(done, name: "cat.jpg", totalBytes: 100)),
                        (50, .started(done, attempt: 1, url: "http://h/photo", totalBytes: 300)),
                        (40, .response(done, Fixtures.response(201, #"{"filename":"cat.jpg"}"#, reason: "Created"))),
                        (40, .finished(done, .answered(status: 201))),
                    ]),
                record(
                    failed, "dog.png", size: 100,
                    [
                        (60, .queued(failed, name: "dog.png", totalBytes: 100)),
                        (30, .started(failed, attempt: 2, url: "http://h/photo", totalBytes: 300)),
                        (29, .finished(failed, .failed(UploadFailure(.cannotConnect, "Connection refused", code: 111)))),
                    ]),
                record(
                    sending, "big.png", size: 1000,
                    [
                        (20, .queued(sending, name: "big.png", totalBytes: 1000)),
                        (10, .started(sending, attempt: 1, url: "http://h/photo", totalBytes: 1200)),
                        (0, .progress(sending, bytesSent: 600, totalBytesSent: 600, totalBytesExpected: 1200)),
                    ]),
            ], missedFinishes: [done, failed], at: Self.date)
    }

    @Test func rowsComeBackQuietlyAndWhatFinishedWhileAwayIsToldOnce() {
        var state = Fixtures.state()
        let effects = MonitorReducer.reduce(&state, .attached(attachment(), Fixtures.at(1000)))
        #expect(state.queue.rows == [old, done, failed, sending])
        #expect(state.queue.state(done)?.outcome == .answered(status: 201))
        #expect(state.queue.state(done)?.elapsed == 10)
        #expect(state.queue.state(sending)?.outcome == nil)
        #expect(state.queue.state(sending)?.sentBytes == 600)
        #expect(
            state.log.map(\.text) == [
                "While you were away: 2 finished (1 ok, 1 failed)",
                "✓ cat.jpg → 201 in 10 s, 300 B sent",
                "✗ dog.png → cannot connect: Connection refused (code 111)",
            ])
        #expect(
            effects == [
                .notify(title: "uploadmon", body: "✓ cat.jpg → 201 in 10 s, 300 B sent"),
                .notify(title: "uploadmon", body: "✗ dog.png → cannot connect: Connection refused (code 111)"),
            ])
        // The response panel follows the latest news.
        #expect(state.queue.selectedID == failed)
    }

    @Test func attachingAgainWithNothingNewSaysNothing() {
        var state = Fixtures.state()
        _ = MonitorReducer.reduce(&state, .attached(attachment(), Fixtures.at(1000)))
        let before = state.log
        var again = attachment()
        again.finishedWhileAway = []
        let effects = MonitorReducer.reduce(&state, .attached(again, Fixtures.at(1001)))
        #expect(effects.isEmpty)
        #expect(state.log == before)
        #expect(state.queue.rows == [old, done, failed, sending])
    }

    @Test func quittingLeavesAgentUploadsRunningWithoutAsking() {
        var state = Fixtures.state()
        state.uploadsOutliveMonitor = true
        _ = MonitorReducer.reduce(&state, .attached(attachment(), Fixtures.at(1000)))
        #expect(state.queue.activeCount == 1)
        let effects = Fixtures.press(&state, .character("q"))
        #expect(effects == [.quit])
        #expect(state.modal == nil)

        var local = Fixtures.state()
        _ = MonitorReducer.reduce(&local, .attached(attachment(), Fixtures.at(1000)))
        #expect(Fixtures.press(&local, .character("q")).isEmpty)
        #expect(local.modal == .confirmQuit)
    }

    @Test func noticesAreLogged() {
        var state = Fixtures.state()
        _ = MonitorReducer.reduce(&state, .notice("Lost the agent", isError: true, Fixtures.time))
        #expect(state.log.last == LogEntry(clock: "12:00:00", text: "Lost the agent", kind: .failed))
        #expect(state.message?.isError == true)
    }
}
