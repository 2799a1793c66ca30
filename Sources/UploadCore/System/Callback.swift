import Foundation

/// A callback that one thread sets or replaces and others call: the handler of a connection's
/// events, the sink a backend posts the monitor's events to.
///
/// Why a class of its own and not a function value in a lock box
/// (`NIOLockedValueBox<((Event) -> Void)?>`, `Mutex<…>`): such a box keeps its value in the
/// generic form and hands it to `withLockedValue`'s closure as `inout`. Reading the function
/// with `withLockedValue { $0 }` converts it to the concrete form and, on the way back, writes
/// it into the box again wrapped in two reabstraction thunks. Every read nests the stored
/// function one level deeper, so a handler read once per event ended up thousands of thunks
/// deep and overflowed the stack when called (the monitor after a few thousand events).
/// Here the function is a stored property of its own, read and replaced whole under a lock:
/// a replacement swaps it, a call never wraps it, and the depth of a call stays the same
/// however many came before.
public final class Callback<Input>: @unchecked Sendable {
    private let lock = NSLock()
    private var body: (@Sendable (Input) -> Void)?

    public init(_ body: (@Sendable (Input) -> Void)? = nil) {
        self.body = body
    }

    /// Replaces the handler (nil: calls do nothing).
    public func set(_ body: (@Sendable (Input) -> Void)?) {
        lock.lock()
        self.body = body
        lock.unlock()
    }

    public var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return body != nil
    }

    /// Calls the handler outside the lock (it may replace itself); false when none is set.
    @discardableResult
    public func callAsFunction(_ input: Input) -> Bool {
        lock.lock()
        let current = body
        lock.unlock()
        guard let current else { return false }
        current(input)
        return true
    }
}
