import NIOConcurrencyHelpers
import UploadCore

/// The queue's events as an async sequence for one reader: buffered without bound, in order,
/// ending after `finish()`; a reader whose task is cancelled gets `nil` and the rest is dropped
/// (as with `AsyncStream`, which this replaces).
///
/// `AsyncStream` is generic code the compiler cannot specialise for `UploadEvent`: its buffer and
/// continuation handling instantiated metadata and looked up witness tables on every event, a
/// twentieth of `send`'s own CPU for a thousand small files (six events each).
public final class UploadEvents: AsyncSequence, Sendable {
    public typealias Element = UploadEvent

    private struct State {
        var buffer: [UploadEvent] = []
        /// The next unread event in `buffer`.
        var head = 0
        var waiter: UnsafeContinuation<UploadEvent?, Never>?
        var finished = false

        /// `.some(event)`, `.some(nil)` at the end, `nil` when the reader must wait.
        mutating func take() -> UploadEvent?? {
            if head < buffer.count {
                let event = buffer[head]
                head += 1
                dropRead()
                return .some(event)
            }
            return finished ? .some(nil) : nil
        }

        /// Up to `limit` events, `.some(nil)` at the end, `nil` when the reader must wait.
        mutating func take(atMost limit: Int) -> [UploadEvent]?? {
            if head < buffer.count {
                let end = Swift.min(head + limit, buffer.count)
                let events = Array(buffer[head..<end])
                head = end
                dropRead()
                return .some(events)
            }
            return finished ? .some(nil) : nil
        }

        /// Frees what the reader has taken: at once when it has all, and once it is half the
        /// buffer while a backlog remains (a reader that never quite catches up would otherwise
        /// keep every event ever yielded: 47 MiB for 20,000 uploads into the agent).
        private mutating func dropRead() {
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: buffer.count <= 1024)
                head = 0
            } else if head >= 1024, head * 2 >= buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
        }
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Hands `event` to the reader (or keeps it for the reader); dropped after `finish()`.
    public func yield(_ event: UploadEvent) {
        let waiter = state.withLockedValue { state -> UnsafeContinuation<UploadEvent?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.buffer.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Ends the sequence once the reader has the events yielded so far.
    public func finish() {
        let waiter = state.withLockedValue { state -> UnsafeContinuation<UploadEvent?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    fileprivate func next() async -> UploadEvent? {
        if let ready = state.withLockedValue({ $0.take() }) { return ready }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<UploadEvent?, Never>) in
                let ready = state.withLockedValue { state -> UploadEvent?? in
                    if let ready = state.take() { return ready }
                    if Task.isCancelled {
                        state.finished = true
                        return .some(nil)
                    }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.cancelled()
        }
    }

    /// Up to `limit` of the events waiting now, without waiting for any: empty when none are
    /// (or at the end).
    public func waiting(atMost limit: Int) -> [UploadEvent] {
        guard limit > 0, case .some(.some(let events)) = state.withLockedValue({ $0.take(atMost: limit) }) else { return [] }
        return events
    }

    /// Up to `limit` events that are waiting (at least one: it waits for one), in order; nil at
    /// the end. A reader that does something per batch (one journal transaction) keeps up with
    /// a burst by taking more at a time the further behind it is.
    public func next(atMost limit: Int) async -> [UploadEvent]? {
        precondition(limit > 0)
        if let ready = state.withLockedValue({ $0.take(atMost: limit) }) { return ready }
        guard let first = await next() else { return nil }
        // More may have come while this reader waited for the first.
        let more = state.withLockedValue { state -> [UploadEvent] in
            guard limit > 1, case .some(.some(let events)) = state.take(atMost: limit - 1) else { return [] }
            return events
        }
        return [first] + more
    }

    /// Events held, read or not (the read ones until they are dropped).
    var retained: Int { state.withLockedValue { $0.buffer.count } }

    /// The reader's task was cancelled: it gets `nil` now and nothing after.
    private func cancelled() {
        let waiter = state.withLockedValue { state -> UnsafeContinuation<UploadEvent?, Never>? in
            state.finished = true
            state.buffer = []
            state.head = 0
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Reads the events one at a time, in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let events: UploadEvents

        public mutating func next() async -> UploadEvent? {
            await events.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(events: self)
    }
}
