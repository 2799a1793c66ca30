import NIOConcurrencyHelpers
import NIOCore
import UploadCore

/// The one rule every rate limit here follows (an upload's own `--limit-rate`, the agent's
/// total): a write of `count` bytes may go when the bytes reserved before it have gone out at
/// the rate, and never waits when they have. Time not used is saved up for `credit` at most
/// (100 ms): enough that a timer firing late does not slow the upload below its rate, too little
/// for a pause (a stalled link, a slow disk) to turn into a burst: after one, the next write goes
/// at once and the ones after it at the rate.
struct RateSchedule: Sendable {
    static let credit: TimeAmount = .milliseconds(100)

    /// When the bytes reserved so far have gone out at the rate.
    private var due: NIODeadline?

    /// Reserves `count` bytes at `rate` bytes per second; how long to wait before writing them
    /// (nil: at once).
    mutating func reserve(_ count: Int64, rate: Int64, now: NIODeadline) -> TimeAmount? {
        let start = max(due ?? now, now - Self.credit)
        due = start + .nanoseconds(DurationRule.nanoseconds(Double(count) / Double(max(rate, 1))))
        return start > now ? start - now : nil
    }

    /// Forgets the backlog (a new rate applies from the next write).
    mutating func reset() { due = nil }
}

/// A rate that several uploads share (the agent's total limit), changed while they run: every
/// body write of every upload that holds it reserves its bytes here and waits until its turn
/// (`RateSchedule`'s rule). A new rate applies from the next write.
public final class SharedRateLimit: Sendable {
    private struct State {
        var rate: Int64?
        var schedule = RateSchedule()
    }

    private let state: NIOLockedValueBox<State>

    public init(bytesPerSecond: Int64? = nil) {
        state = NIOLockedValueBox(State(rate: bytesPerSecond.map { max($0, 1) }))
    }

    /// Bytes per second for all holders together, or nil for no limit.
    public var bytesPerSecond: Int64? { state.withLockedValue { $0.rate } }

    public func set(bytesPerSecond rate: Int64?) {
        state.withLockedValue { state in
            guard state.rate != rate else { return }
            state.rate = rate.map { max($0, 1) }
            state.schedule.reset()
        }
    }

    /// Reserves `count` bytes; how long to wait before writing them (nil: at once).
    func delay(before count: Int64, now: NIODeadline) -> TimeAmount? {
        state.withLockedValue { state in
            guard let rate = state.rate else { return nil }
            return state.schedule.reserve(count, rate: rate, now: now)
        }
    }
}
