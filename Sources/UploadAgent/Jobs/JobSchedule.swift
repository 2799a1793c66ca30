import Foundation

/// When the agent's jobs run, as values: each has an earliest-begin time and runs at the first
/// chance after it, one after the other; the scheduler sleeps until the next is due.
enum JobSchedule {
    /// The jobs whose time has come, in the order given.
    static func due(_ jobs: [(id: Int64, begin: Date)], at now: Date) -> [Int64] {
        jobs.filter { $0.begin <= now }.map(\.id)
    }

    /// When the next job is due (a minute from now when there is none).
    static func next(_ jobs: [(id: Int64, begin: Date)], after now: Date) -> Date {
        jobs.map(\.begin).min() ?? now.addingTimeInterval(60)
    }

    /// How long to sleep before looking again: until `next`, but at least 10 ms and at most a
    /// minute, as the wall clock may jump (suspend, NTP).
    static func sleep(until next: Date, now: Date) -> Double {
        max(0.01, min(next.timeIntervalSince(now), 60))
    }
}
