import Foundation
import UploadCore
import UploadJournal

/// What the agent does with each upload event once the journal has recorded it (or failed to),
/// decided as a value: the event and the journal's result go in with the time, actions come out
/// (checkpoint, tell the clients, free the upload's slot, let the queue forget it, log, settle
/// the sent-content ledger, give memory back). The agent only does them, in order.
///
/// It keeps, per upload still running, when its progress was last told and checkpointed, and
/// the counts of drains not said yet; nothing of an upload outlives its `finished`.
struct AgentEvents {
    enum Action: Equatable {
        /// Note in the journal how far the upload got.
        case checkpoint(UploadID, bytesSent: Int64, expected: Int64?)
        /// Tell subscribed clients (numbered when the journal's log keeps the event).
        case broadcast(seq: Int64?, UploadEvent)
        /// The upload's slot in the queue's window is free.
        case freeSlot(UploadID)
        /// The journal has the upload's end: the queue may forget it (after the batch).
        case forget(UploadID)
        case log(String)
        /// What succeeded one by one goes into the sent-content ledger in one go.
        case settleSent
        /// A drain is over: give the allocator's freed memory back.
        case releaseMemory
    }

    /// How often a running upload's progress is noted in the journal, and told to clients (seconds).
    let checkpointInterval: Double
    let progressInterval: Double

    private struct ProgressMark {
        var pushed: Double
        var checkpointed: Double
    }
    private var marks: [UploadID: ProgressMark] = [:]
    /// What finished in the drains not said yet (the queue ran dry while the backlog held more).
    private(set) var drained = UploadSummary(succeeded: 0, failed: 0)

    init(checkpointInterval: Double, progressInterval: Double) {
        self.checkpointInterval = checkpointInterval
        self.progressInterval = progressInterval
    }

    /// Uploads it keeps anything for (bounded by those running at once).
    var tracked: Int { marks.count }

    /// `recorded`: what the journal made of the event; `backlogEmpty`: whether uploads still
    /// wait to be fed to the queue; `moment`: the monotonic clock (intervals are measured on it).
    mutating func handle(_ event: UploadEvent, recorded: Result<RecordedEvent?, any Error>, backlogEmpty: Bool, moment: Double) -> [Action] {
        switch event {
        case .progress(let id, _, let sent, let expected):
            // The first checkpoint a checkpoint interval into the upload: one that ends sooner
            // (most small files) never needs one, its end is recorded anyway.
            var mark = marks[id] ?? ProgressMark(pushed: 0, checkpointed: moment)
            var actions: [Action] = []
            if moment - mark.checkpointed >= checkpointInterval {
                mark.checkpointed = moment
                actions.append(.checkpoint(id, bytesSent: sent, expected: expected))
            }
            let final = expected.map { sent >= $0 } ?? false
            if final || moment - mark.pushed >= progressInterval {
                mark.pushed = moment
                actions.append(.broadcast(seq: nil, event))
            }
            marks[id] = mark
            return actions
        case .allFinished(let summary):
            // Not while the backlog holds more: the queue ran dry before it was fed. Its count
            // joins the next one's, so the summary said covers the whole drain.
            drained = drained.adding(summary)
            guard backlogEmpty else { return [] }
            defer { drained = UploadSummary(succeeded: 0, failed: 0) }
            return [.broadcast(seq: nil, .allFinished(drained)), .settleSent, .releaseMemory]
        default:
            var actions: [Action] = []
            // Its slot in the queue's window is free, whether or not the journal took the end.
            if case .finished(let id, _) = event { actions.append(.freeSlot(id)) }
            let applied: RecordedEvent?
            do {
                applied = try recorded.get()
            } catch {
                actions.append(.log("journal: cannot record \(event.uploadID.map(\.description) ?? "") : \(error)"))
                return actions
            }
            if case .finished(let id, let outcome) = event {
                marks[id] = nil
                // The journal has it now; the queue need not remember it (a long-running agent
                // would otherwise grow with every upload). A retry queues it again from the journal.
                actions.append(.forget(id))
                guard applied != nil else { return actions }
                actions.append(.log("\(id) finished: \(Self.describe(outcome))"))
            }
            guard let applied else { return actions }
            // Numbered when the log keeps it (a client's cursor counts those), as progress is not.
            actions.append(.broadcast(seq: applied.entry?.seq, applied.event))
            return actions
        }
    }

    static func describe(_ outcome: UploadOutcome) -> String {
        (outcome.isSuccess ? "ok, " : "failed, ") + outcome.words(reason: nil)
    }
}
