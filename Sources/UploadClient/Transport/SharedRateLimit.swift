import NIOConcurrencyHelpers
import NIOCore
import UploadCore

/// A rate that several uploads share (the agent's total limit), changed while they run: every
/// body write of every upload that holds it reserves its bytes here and waits until its turn.
///
/// Time not used is not saved up: after a pause the next write goes at once and the ones after
/// it at the rate, so a limit never turns into a burst. A new rate applies from the next write.
public final class SharedRateLimit: Sendable {
    private struct State {
        var rate: Int64?
        /// When the bytes reserved so far have gone out at the rate.
        var due: NIODeadline?
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
            state.due = nil
        }
    }

    /// Reserves `count` bytes; how long to wait before writing them (nil: at once).
    func delay(before count: Int64, now: NIODeadline = .now()) -> TimeAmount? {
        state.withLockedValue { state in
            guard let rate = state.rate else { return nil }
            let start = max(state.due ?? now, now)
            state.due = start + .nanoseconds(DurationRule.nanoseconds(Double(count) / Double(rate)))
            return start > now ? start - now : nil
        }
    }
}
