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
}
