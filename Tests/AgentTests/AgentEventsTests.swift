import Foundation
import Testing
import UploadCore
import UploadJournal
@testable import UploadAgent

/// What the agent does with each upload event, decided without a journal, a queue or clients.
struct AgentEventsTests {
    struct JournalDown: Error {}

    func machine() -> AgentEvents { AgentEvents(checkpointInterval: 1, progressInterval: 0.1) }

    func recorded(_ event: UploadEvent, seq: Int64?) -> Result<RecordedEvent?, any Error> {
        .success(RecordedEvent(event: event, entry: seq.map { JournalEntry(seq: $0, event: event, at: Date(timeIntervalSince1970: 0)) }))
    }

    func progress(_ id: UploadID, _ sent: Int64, of expected: Int64? = 1000) -> UploadEvent {
        .progress(id, bytesSent: 10, totalBytesSent: sent, totalBytesExpected: expected)
    }

    @Test func progressIsToldAtMostEveryIntervalAndCheckpointedOnlyOnceAnUploadRunsLong() {
        var events = machine()
        let id = UploadID(7)
        // The first is told at once; the first checkpoint waits a whole interval.
        #expect(events.handle(progress(id, 100), recorded: .success(nil), backlogEmpty: true, moment: 1000) == [.broadcast(seq: nil, progress(id, 100))])
        #expect(events.handle(progress(id, 200), recorded: .success(nil), backlogEmpty: true, moment: 1000.05) == [])
        #expect(events.handle(progress(id, 300), recorded: .success(nil), backlogEmpty: true, moment: 1000.1) == [.broadcast(seq: nil, progress(id, 300))])
        #expect(
            events.handle(progress(id, 400), recorded: .success(nil), backlogEmpty: true, moment: 1001)
                == [.checkpoint(id, bytesSent: 400, expected: 1000), .broadcast(seq: nil, progress(id, 400))])
        // The last bytes are always told, however soon.
        #expect(events.handle(progress(id, 1000), recorded: .success(nil), backlogEmpty: true, moment: 1001.01) == [.broadcast(seq: nil, progress(id, 1000))])
        #expect(events.tracked == 1)
    }

    @Test func aFinishedUploadFreesItsSlotIsForgottenLoggedAndToldWithItsNumber() {
        var events = machine()
        let id = UploadID(3)
        _ = events.handle(progress(id, 10), recorded: .success(nil), backlogEmpty: true, moment: 5)
        let finished = UploadEvent.finished(id, .answered(status: 201))
        #expect(
            events.handle(finished, recorded: recorded(finished, seq: 42), backlogEmpty: true, moment: 6)
                == [.freeSlot(id), .forget(id), .log("\(id) finished: ok, 201 Created"), .broadcast(seq: 42, finished)])
        #expect(events.tracked == 0)
    }

    @Test func anEndTheJournalCouldNotTakeFreesTheSlotButTheQueueKeepsTheUpload() {
        var events = machine()
        let id = UploadID(4)
        let actions = events.handle(.finished(id, .answered(status: 500)), recorded: .failure(JournalDown()), backlogEmpty: true, moment: 1)
        #expect(actions.first == .freeSlot(id))
        #expect(actions.count == 2)
        guard case .log(let line)? = actions.last else {
            Issue.record("the failure is logged")
            return
        }
        #expect(line.hasPrefix("journal: cannot record \(id)"))
        // One the journal did not know: forgotten, not told.
        #expect(events.handle(.finished(id, .answered(status: 200)), recorded: .success(nil), backlogEmpty: true, moment: 2) == [.freeSlot(id), .forget(id)])
    }

    @Test func aDrainIsSaidOnceTheBacklogIsEmptyCoveringEveryDrainBeforeIt() {
        var events = machine()
        #expect(events.handle(.allFinished(UploadSummary(succeeded: 3, failed: 1)), recorded: .success(nil), backlogEmpty: false, moment: 1) == [])
        #expect(events.drained == UploadSummary(succeeded: 3, failed: 1))
        #expect(
            events.handle(.allFinished(UploadSummary(succeeded: 2, failed: 0)), recorded: .success(nil), backlogEmpty: true, moment: 2)
                == [.broadcast(seq: nil, .allFinished(UploadSummary(succeeded: 5, failed: 1))), .settleSent, .releaseMemory])
        #expect(events.drained == UploadSummary(succeeded: 0, failed: 0))
    }

    /// A day of a busy folder: what the agent keeps per upload ends with the upload.
    @Test func a100000UploadsLeaveNothingBehind() {
        var events = machine()
        var moment = 1000.0
        var running: [UploadID] = []
        var peak = 0
        for n in 1...100_000 {
            let id = UploadID(n)
            running.append(id)
            moment += 0.001
            _ = events.handle(progress(id, 500), recorded: .success(nil), backlogEmpty: false, moment: moment)
            peak = max(peak, events.tracked)
            if running.count == 4 {
                let done = running.removeFirst()
                let finished = UploadEvent.finished(done, .answered(status: 200))
                _ = events.handle(finished, recorded: recorded(finished, seq: Int64(n)), backlogEmpty: false, moment: moment)
            }
        }
        for id in running {
            let finished = UploadEvent.finished(id, .failed(UploadFailure(.cancelled, "stopped")))
            _ = events.handle(finished, recorded: recorded(finished, seq: nil), backlogEmpty: true, moment: moment)
        }
        #expect(peak == 4)
        #expect(events.tracked == 0)
    }
}

/// When jobs run and how long the scheduler sleeps, decided without a journal.
struct JobScheduleTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func jobsWhoseTimeHasComeRunInOrderAndTheSchedulerSleepsUntilTheNext() {
        let jobs: [(id: Int64, begin: Date)] = [(3, now.addingTimeInterval(-5)), (1, now.addingTimeInterval(30)), (2, now)]
        #expect(JobSchedule.due(jobs, at: now) == [3, 2])
        #expect(JobSchedule.next(jobs, after: now) == now.addingTimeInterval(-5))
        #expect(JobSchedule.next([], after: now) == now.addingTimeInterval(60))
        #expect(JobSchedule.sleep(until: now.addingTimeInterval(30), now: now) == 30)
        // Never a busy loop, never longer than a minute: the wall clock may jump.
        #expect(JobSchedule.sleep(until: now.addingTimeInterval(-5), now: now) == 0.01)
        #expect(JobSchedule.sleep(until: now.addingTimeInterval(86400), now: now) == 60)
    }
}

/// A subscriber is not told the progress of an upload that ends well in the same batch: the
/// good end counts every byte as sent.
@Suite struct QuietProgressTests {
    @Test func onlyTheUploadsThatEndWellInTheBatchAreQuiet() {
        let (a, b, c) = (UploadID(1), UploadID(2), UploadID(3))
        let batch: [UploadEvent] = [
            .progress(a, bytesSent: 10, totalBytesSent: 10, totalBytesExpected: 10),
            .progress(b, bytesSent: 10, totalBytesSent: 10, totalBytesExpected: 10),
            .progress(c, bytesSent: 5, totalBytesSent: 5, totalBytesExpected: 10),
            .finished(a, .answered(status: 201)),
            .finished(b, .answered(status: 500)),
        ]
        #expect(Agent.endingWell(batch) == [a], "a failed end keeps its bytes told; one still running too")
        var record = UploadRecord(id: a, name: "a.jpg", path: nil, url: "", origin: "", fileSize: 10, createdAt: Date(timeIntervalSince1970: 0))
        record.apply(.started(a, attempt: 1, url: "http://h/", totalBytes: 10), at: Date(timeIntervalSince1970: 1))
        record.apply(.finished(a, .answered(status: 201)), at: Date(timeIntervalSince1970: 2))
        #expect(record.bytesSent == 10, "the end alone counts every byte")
    }
}
