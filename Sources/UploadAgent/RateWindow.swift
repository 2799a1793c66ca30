import Foundation

/// The agent's total rate through the day, as a value: given the time, the rate in force, what
/// to log when the limit comes into force or lifts, and when to look again. The agent sets the
/// rate, logs, and sleeps until then.
struct RateWindow {
    struct Step: Equatable {
        /// The total rate from now (nil: none).
        let rate: Int64?
        /// Said when the limit came into force or lifted.
        let log: String?
        /// When to look again: the window's next boundary, and at least once a minute so a
        /// clock that jumps (a suspended laptop, a time-zone change) is followed within a minute.
        let wakeAt: Date
    }

    let settings: AgentSettings
    let calendar: Calendar
    private var limited: Bool

    /// `limited`: whether a limit is in force as the window starts being followed.
    init(_ settings: AgentSettings, limited: Bool, calendar: Calendar = .current) {
        self.settings = settings
        self.limited = limited
        self.calendar = calendar
    }

    mutating func step(at now: Date) -> Step {
        let rate = settings.rate(at: now, calendar: calendar)
        var log: String?
        if (rate != nil) != limited {
            limited = rate != nil
            log = settings.nowText(at: now, calendar: calendar) ?? "rate limit changed"
        }
        let next = settings.nextChange(after: now, calendar: calendar) ?? now.addingTimeInterval(60)
        let wait = min(max(next.timeIntervalSince(now), 0.05), 60)
        return Step(rate: rate, log: log, wakeAt: now.addingTimeInterval(wait))
    }
}
