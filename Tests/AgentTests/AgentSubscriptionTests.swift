import UploadTesting
import Foundation
import Testing
import UploadAgent
import UploadCore
import UploadJournal

/// The monitor's subscription to the agent, input by input, without a socket.
@Suite struct AgentSubscriptionTests {
    let id = UploadID(3)
    let at = Date(timeIntervalSince1970: 1_800_000_000)

    func snapshot(last: Int64) -> AgentSnapshot {
        let record = UploadRecord(id: id, name: "a.png", path: "/p/a.png", url: "http://h/photo", origin: "send", fileSize: 10, createdAt: at)
        return AgentSnapshot(uploads: [record], missed: [], lastSequence: last, jobs: [])
    }

    func event(_ seq: Int64?, _ event: UploadEvent) -> AgentMessage { .event(seq: seq, event: event, at: at) }

    @Test func eventsThatComeBeforeTheRecordsWaitAndFollowThemInOrder() {
        var subscription = AgentSubscription(cursor: 10)
        subscription.connecting()
        let started = UploadEvent.started(id, attempt: 1, url: "http://h/photo", totalBytes: 20)
        let finished = UploadEvent.finished(id, .answered(status: 201))
        #expect(subscription.received(event(11, started)) == [])
        #expect(subscription.received(event(nil, .progress(id, bytesSent: 5, totalBytesSent: 5, totalBytesExpected: 20))) == [])
        #expect(subscription.received(event(12, finished)) == [.saveCursor(12)], "a finish saves the cursor even while held")
        let actions = subscription.subscribed(snapshot(last: 12))
        #expect(
            actions == [
                .jobs([]), .attach(snapshot(last: 12)),
                .deliver(started), .deliver(.progress(id, bytesSent: 5, totalBytesSent: 5, totalBytesExpected: 20)), .deliver(finished),
                .saveCursor(12),
            ])
        // Attached: events go straight through.
        #expect(
            subscription.received(event(13, .queued(UploadID(4), name: "b.png", totalBytes: 1))) == [
                .deliver(.queued(UploadID(4), name: "b.png", totalBytes: 1))
            ])
        #expect(subscription.cursor == 13)
    }

    @Test func theCursorNeverGoesBack() {
        var subscription = AgentSubscription(cursor: 50)
        subscription.connecting()
        _ = subscription.received(event(20, .finished(id, .answered(status: 200))))
        #expect(subscription.cursor == 50)
        #expect(subscription.subscribed(snapshot(last: 40)).last == .saveCursor(50))
    }

    @Test func aLostConnectionReconnectsUnlessTheClientIsClosingAndHoldsAgainUntilTheNextAnswer() {
        var subscription = AgentSubscription(cursor: nil)
        subscription.connecting()
        _ = subscription.subscribed(snapshot(last: 5))
        #expect(subscription.closed() == [.lost, .reconnect(after: 1)])
        subscription.connecting()
        #expect(subscription.received(event(6, .queued(id, name: "a.png", totalBytes: 10))) == [], "held again until the new answer")
        #expect(subscription.close() == 6)
        #expect(subscription.closed() == [])
        #expect(subscription.isClosing)
    }

    /// An agent that cannot be reached or started is tried again less and less often, then
    /// every `longestWait`; a connection that works starts the count again; closing stops it.
    /// `agent stop` (or a signal) is the user's: the monitor says so and does not start the
    /// agent again until files are queued.
    @Test func anAgentStoppedOnPurposeIsNotStartedAgainUntilWorkIsAsked() {
        var subscription = AgentSubscription(cursor: nil)
        subscription.connecting()
        _ = subscription.subscribed(snapshot(last: 4))
        #expect(subscription.received(.stopping(reason: "asked to stop")) == [])
        let whileConnected = subscription.wanted()
        #expect(!whileConnected, "still connected: nothing to reach again")
        #expect(subscription.closed() == [.stopped(reason: "asked to stop")])
        let first = subscription.wanted()
        let second = subscription.wanted()
        #expect(first)
        #expect(!second, "reached again once")
        // The next connection is like any other: lost, it is reached again by itself.
        subscription.connecting()
        #expect(subscription.closed() == [.lost, .reconnect(after: 1)])
        // A client that is quitting neither says nor starts anything.
        subscription.connecting()
        _ = subscription.received(.stopping(reason: "signal 15"))
        _ = subscription.close()
        #expect(subscription.closed() == [])
        let quitting = subscription.wanted()
        #expect(!quitting)
    }

    @Test func failedReconnectsWaitLongerEachTimeUpToALimit() {
        var subscription = AgentSubscription(cursor: nil)
        subscription.connecting()
        #expect(subscription.closed() == [.lost, .reconnect(after: 1)])
        let waits = (0..<7).map { _ in subscription.reconnectFailed() }
        #expect(waits == [2, 4, 8, 16, 30, 30, 30].map { [.reconnect(after: $0)] })
        subscription.connecting()
        #expect(subscription.reconnectFailed() == [.reconnect(after: 2)], "counted afresh after a connection")
        _ = subscription.close()
        #expect(subscription.reconnectFailed() == [], "a closing client tries no more")
    }

    @Test func jobsPassAtAnyTimeAndRepliesAreNotEvents() {
        var subscription = AgentSubscription(cursor: nil)
        subscription.connecting()
        #expect(subscription.received(.jobs([])) == [.jobs([])])
        #expect(subscription.received(.reply(id: 1, reply: .ok)) == [])
    }
}
