import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// The one clock a component reads: the wall clock (when things happened, schedules, the
/// day's rate window) and a monotonic one in seconds (intervals, idle time, deadlines that a
/// wall-clock jump must not move). `system` is the machine's; a test hands in a `ManualClock`'s
/// and moves time by hand instead of waiting for it.
public struct HouseClock: Sendable {
    public var wall: @Sendable () -> Date
    public var monotonic: @Sendable () -> Double

    /// A clock read from these two functions (`monotonic`: seconds from any fixed start).
    public init(wall: @escaping @Sendable () -> Date, monotonic: @escaping @Sendable () -> Double) {
        self.wall = wall
        self.monotonic = monotonic
    }

    public static let system = HouseClock(wall: { Date() }, monotonic: { MonotonicClock.now() })

    /// A clock stopped at `date` (a test that says every time itself).
    public static func stopped(at date: Date) -> HouseClock {
        HouseClock(wall: { date }, monotonic: { 0 })
    }
}

/// A clock that moves only when told: both of its readings go forward together.
public final class ManualClock: Sendable {
    private let time: Mutex<(wall: Date, monotonic: Double)>

    /// Starts at `wall` (a fixed moment: tests do not depend on when they run) and `monotonic`.
    public init(wall: Date = Date(timeIntervalSince1970: 1_790_000_000), monotonic: Double = 1_000) {
        time = Mutex((wall, monotonic))
    }

    /// The clock to hand to what is tested: it reads this object's time.
    public var clock: HouseClock {
        HouseClock(wall: { self.time.withLock { $0.wall } }, monotonic: { self.time.withLock { $0.monotonic } })
    }

    /// Moves both readings forward by `seconds`.
    public func advance(by seconds: Double) {
        time.withLock { $0 = ($0.wall.addingTimeInterval(seconds), $0.monotonic + seconds) }
    }
}

/// Seconds on the system's monotonic clock (`CLOCK_MONOTONIC`): for how long something took or
/// is left to wait, never for what a person reads.
public enum MonotonicClock {
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

extension HouseClock {
    /// A deadline `seconds` from now for a wait (a semaphore, a dispatch timer): waits run on
    /// the machine's time, whatever clock a component reads its time from.
    public static func waitDeadline(after seconds: Double) -> DispatchTime {
        .now() + seconds
    }

    /// As `waitDeadline`, for `Task.sleep(until:)` and other waits on Swift's continuous clock.
    public static func sleepDeadline(after duration: Duration) -> ContinuousClock.Instant {
        .now + duration
    }
}
