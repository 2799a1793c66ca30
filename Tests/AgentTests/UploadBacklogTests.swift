import Foundation
import Testing
@testable import UploadAgent
@testable import UploadClient
import UploadCore

/// The agent's backlog: the queue gets handed-over uploads a window at a time, so what the
/// agent holds per waiting upload is an id.
@Suite struct UploadBacklogTests {
    func ids(_ range: Range<Int>) -> [UploadID] { range.map { UploadID($0) } }

    @Test func theQueueIsFilledToTheWindowAndFedAgainOnceHalfOfItIsFree() {
        var backlog = UploadBacklog(window: 4)
        backlog.add(ids(1..<11))
        let r1 = backlog.take()
        #expect(r1 == ids(1..<5))
        let r2 = backlog.take()
        #expect(r2 == [], "full")
        backlog.finished(UploadID(1))
        let r3 = backlog.take()
        #expect(r3 == [], "more than half the window still held: not one read per upload")
        backlog.finished(UploadID(2))
        let r4 = backlog.take()
        #expect(r4 == ids(5..<7))
        #expect(backlog.waitingCount == 4)
        #expect(backlog.inQueue.count == 4)
    }

    @Test func theQueuesOwnQueuedRepeatsTheHandOverOnce() {
        var backlog = UploadBacklog(window: 4)
        backlog.add(ids(1..<3))
        _ = backlog.take()
        let r5 = backlog.isRepeatedQueued(UploadID(1))
        #expect(r5)
        let r6 = backlog.isRepeatedQueued(UploadID(1))
        #expect(!r6, "a later queued (a retry by hand) is news")
        let r7 = backlog.isRepeatedQueued(UploadID(7))
        #expect(!r7)
    }

    @Test func aCancelTakesAnUploadOutOfTheWaitingOnesOnly() {
        var backlog = UploadBacklog(window: 2)
        backlog.add(ids(1..<5))
        _ = backlog.take()
        let r8 = backlog.cancel(UploadID(1))
        #expect(!r8, "in the queue: the queue cancels it")
        let r9 = backlog.cancel(UploadID(3))
        #expect(r9)
        let r10 = backlog.cancel(UploadID(3))
        #expect(!r10)
        let r11 = backlog.isRepeatedQueued(UploadID(3))
        #expect(r11, "its queued and end come from the queue")
        backlog.finished(UploadID(3))
        backlog.finished(UploadID(1))
        backlog.finished(UploadID(2))
        let r12 = backlog.take()
        #expect(r12 == [UploadID(4)])
    }

    @Test func uploadsThatCouldNotBeReadWaitAgainFirstAndGoneOnesAreForgotten() {
        var backlog = UploadBacklog(window: 4)
        backlog.add(ids(1..<7))
        let taken = backlog.take()
        backlog.putBack(Array(taken[2...]))
        backlog.dropped([taken[0]])
        #expect(backlog.inQueue == [taken[1]])
        let r13 = backlog.take()
        #expect(r13 == [UploadID(3), UploadID(4), UploadID(5)])
    }

    /// 100,000 uploads handed over in requests of 1,000, through the backlog and the queue's
    /// machine as the agent drives them (each finished upload forgotten): what either holds
    /// stays within the window however many have gone through, and every upload ends once.
    @Test func a100000UploadDrainKeepsTheHeldEntriesWithinTheWindow() {
        let concurrency = 4
        var backlog = UploadBacklog(window: UploadBacklog.window(concurrency: concurrency))
        var machine = UploadQueueMachine(concurrency: concurrency, retryPolicy: RetryPolicy())
        let at = Date(timeIntervalSince1970: 1_700_000_000)
        var sending: [(UploadID, Int)] = []
        var finished = 0
        var mostEntries = 0
        var mostInQueue = 0
        var nextID = 1
        func handle(_ actions: [UploadQueueMachine.Action]) {
            for action in actions {
                switch action {
                case .start(let id, let attempt, _): sending.append((id, attempt))
                case .emit(.finished(let id, _)):
                    finished += 1
                    backlog.finished(id)
                    _ = machine.forgetFinished([id])
                default: break
                }
            }
        }
        func feed() {
            for id in backlog.take() {
                let request = UploadRequest(source: .file(path: "/nowhere/\(id.rawValue).jpg"), url: "http://h/p", uploadName: "\(id.rawValue).jpg")
                handle(machine.enqueue(request, record: .queued(id, request: request, fileSize: 10, origin: "test", at: at)))
                let r14 = backlog.isRepeatedQueued(id)
                #expect(r14)
            }
        }
        while finished < 100_000 {
            if nextID <= 100_000, backlog.waitingCount < 2_000 {
                backlog.add((nextID..<nextID + 1_000).map { UploadID($0) })
                nextID += 1_000
            }
            feed()
            mostEntries = max(mostEntries, machine.entries.count)
            mostInQueue = max(mostInQueue, backlog.inQueue.count)
            // The uploads sending end, oldest first, two at a time.
            for _ in 0..<min(2, sending.count) {
                let (id, attempt) = sending.removeFirst()
                handle(
                    machine.attemptEnded(
                        id, attempt: attempt, result: AttemptResult(outcome: .answered(status: 200), response: nil, bytesSent: 10),
                        reported: nil, at: at))
            }
        }
        #expect(finished == 100_000)
        #expect(mostEntries <= backlog.window)
        #expect(mostInQueue <= backlog.window)
        #expect(machine.entries.isEmpty && backlog.inQueue.isEmpty && backlog.isEmpty)
    }
}
