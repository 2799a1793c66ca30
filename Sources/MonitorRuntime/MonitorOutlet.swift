import Foundation
import Monitor
import NIOConcurrencyHelpers
import UploadCore

/// Where a backend delivers the monitor's events: the run loop's `post` and clock, given once
/// at `start`. The two functions live in an object of their own, and the lock holds only a
/// reference to it: never function values in a lock box (see `Callback`: reading those nested
/// them one level deeper per read, and the monitor overflowed its stack after a few thousand
/// events).
public final class MonitorOutlet: Sendable {
    private final class Sink: Sendable {
        let post: @Sendable (MonitorEvent) -> Void
        let now: @Sendable () -> EventTime

        init(post: @escaping @Sendable (MonitorEvent) -> Void, now: @escaping @Sendable () -> EventTime) {
            self.post = post
            self.now = now
        }
    }

    private let sink = NIOLockedValueBox<Sink?>(nil)

    public init() {}

    public func start(post: @escaping @Sendable (MonitorEvent) -> Void, now: @escaping @Sendable () -> EventTime) {
        let made = Sink(post: post, now: now)
        sink.withLockedValue { $0 = made }
    }

    /// Whether `start` was called.
    public var isStarted: Bool { sink.withLockedValue { $0 } != nil }

    /// Delivers `event`; before `start`, nothing happens.
    public func post(_ event: MonitorEvent) { sink.withLockedValue { $0 }?.post(event) }

    /// The loop's time now (before `start`: zero, at the start of 1970).
    public func now() -> EventTime {
        sink.withLockedValue { $0 }?.now() ?? EventTime(seconds: 0, clock: "", date: Date(timeIntervalSince1970: 0))
    }
}
