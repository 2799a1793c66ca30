import Foundation
import NIOConcurrencyHelpers
import UploadCore

/// Every open connection of one receiver: the cap on how many may be open at once, and the
/// stop that cuts those still open after a grace period. Thread-safe; connections live on
/// different event loops.
final class ConnectionRegistry: Sendable {
    enum Admission: Equatable {
        case admitted
        case overLimit(Int)
        case stopping
    }

    /// How many connections may be open at once.
    let limit: Int

    private struct State {
        var open: [UInt: @Sendable (ConnectionInterruption) -> Void] = [:]
        var stopping = false
        /// Most connections open at once since the last time none were.
        var peak = 0
    }
    private let state = NIOLockedValueBox(State())

    /// A burst at least this large gives its memory back when the last connection closes.
    static let burstWorthTrimming = 64

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a new connection in, unless the receiver is full or stopping. `abort` ends the
    /// connection from any thread (the receiver is stopping and the grace period is over, or a
    /// newer request took over the upload it was sending).
    func register(_ id: UInt, abort: @escaping @Sendable (ConnectionInterruption) -> Void) -> Admission {
        state.withLockedValue { state in
            if state.stopping { return .stopping }
            guard state.open.count < limit else { return .overLimit(limit) }
            state.open[id] = abort
            state.peak = max(state.peak, state.open.count)
            return .admitted
        }
    }

    /// How many connections are open (admitted and not yet closed).
    var openCount: Int { state.withLockedValue { $0.open.count } }

    /// Ends connection `id`'s request, if the connection is still open.
    func interrupt(_ id: UInt, _ why: ConnectionInterruption) {
        let abort = state.withLockedValue { $0.open[id] }
        abort?(why)
    }

    func unregister(_ id: UInt) {
        let trim = state.withLockedValue { state -> Bool in
            state.open[id] = nil
            guard state.open.isEmpty else { return false }
            defer { state.peak = 0 }
            return state.peak >= Self.burstWorthTrimming
        }
        // Thousands of connections leave their buffers in malloc's arenas; give them back.
        if trim { DispatchQueue.global().async { FreedMemory.release() } }
    }

    /// Refuses new connections from now on and, after `grace`, ends every connection still open
    /// (their uploads are abandoned and their partial files removed).
    func stop(after grace: Duration) {
        state.withLockedValue { $0.stopping = true }
        Task {
            try? await Task.sleep(for: grace)
            let remaining = state.withLockedValue { Array($0.open.values) }
            for abort in remaining { abort(.stopping) }
        }
    }
}
