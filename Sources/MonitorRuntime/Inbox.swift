import Glibc
import Monitor
import NIOConcurrencyHelpers
import UploadCore

/// What reaches the monitor's run loop from other threads: events for the reducer, and signals.
public enum LoopInput: Sendable {
    case event(MonitorEvent)
    case signal(Int32)
}

/// A locked list of inputs plus a self-pipe, so the run loop can sleep in `poll` on the
/// terminal and this at once, and uses no CPU while nothing happens.
public final class Inbox: Sendable {
    private let items = NIOLockedValueBox<[LoopInput]>([])
    private let wake = SelfPipe(nonBlocking: true)
    public var readFD: Int32 { wake.readFD }

    public init() {}

    /// Adds `input`; the pipe is written only when the list was empty: inputs that come while
    /// others wait are taken with them (a camera roll's events cost a `write` and a wake-up of
    /// the loop each when every one was told).
    public func post(_ input: LoopInput) {
        let wasEmpty = items.withLockedValue { items -> Bool in
            defer { items.append(input) }
            return items.isEmpty
        }
        if wasEmpty { wake.post() }
    }

    /// Up to `limit` of the inputs posted so far, in order, and whether more wait (then the
    /// pipe is left to wake the loop again at once).
    public func take(atMost limit: Int) -> (inputs: [LoopInput], more: Bool) {
        wake.drain()
        return items.withLockedValue { items in
            guard items.count > limit else {
                defer { items.removeAll(keepingCapacity: true) }
                return (items, false)
            }
            let taken = Array(items[..<limit])
            items.removeFirst(limit)
            return (taken, true)
        }
    }

    /// Everything posted so far, in order; empties the pipe too.
    public func take() -> [LoopInput] {
        wake.drain()
        return items.withLockedValue { items in
            defer { items.removeAll(keepingCapacity: true) }
            return items
        }
    }
}
