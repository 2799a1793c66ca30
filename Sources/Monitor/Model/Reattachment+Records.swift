import Foundation
import UploadCore

extension Reattachment {
    /// The agent's records as they are, and the uploads whose finish the monitor missed, in
    /// the order they finished: one that finished twice is told once, at its last finish, and
    /// only if it is finished now.
    public init(records: [UploadRecord], missedFinishes finishedWhileAway: [UploadID], at now: Date) {
        var seen = Set<UploadID>()
        let once = finishedWhileAway.reversed().filter { seen.insert($0).inserted }.reversed()
        let current = Set(records.filter(\.isFinished).map(\.id))
        self.init(records: records, at: now, finishedWhileAway: once.filter { current.contains($0) })
    }

    /// The same from the finishes the agent logged while away, with how each ended: the totals
    /// count every one of them, whether or not the agent sent its record.
    public init(records: [UploadRecord], missedOutcomes: [(UploadID, UploadOutcome)], at now: Date) {
        var last: [UploadID: UploadOutcome] = [:]
        for (id, outcome) in missedOutcomes { last[id] = outcome }
        let ok = last.values.count { $0.isSuccess }
        self.init(records: records, missedFinishes: missedOutcomes.map(\.0), at: now)
        awayTotals = AwayTotals(ok: ok, failed: last.count - ok)
    }
}
