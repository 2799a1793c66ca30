import Foundation
import NIOConcurrencyHelpers
import NIOCore
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

    private struct Entry {
        let abort: @Sendable (ConnectionInterruption) -> Void
        let requests: ConnectionRequests
    }

    private struct State {
        var open: [UInt: Entry] = [:]
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

    /// The number a connection goes by here: its channel's identity, which the request context
    /// of every request on it knows too.
    static func id(of channel: any Channel) -> UInt {
        UInt(bitPattern: ObjectIdentifier(channel))
    }

    /// Counts a new connection in, unless the receiver is full or stopping. `abort` ends the
    /// connection from any thread (the receiver is stopping and the grace period is over, or a
    /// newer request took over the upload it was sending); `requests` is what the gate says of
    /// each request it passes on.
    func register(_ requests: ConnectionRequests, abort: @escaping @Sendable (ConnectionInterruption) -> Void) -> Admission {
        state.withLockedValue { state in
            if state.stopping { return .stopping }
            guard state.open.count < limit else { return .overLimit(limit) }
            state.open[requests.id] = Entry(abort: abort, requests: requests)
            state.peak = max(state.peak, state.open.count)
            return .admitted
        }
    }

    /// How many connections are open (admitted and not yet closed).
    var openCount: Int { state.withLockedValue { $0.open.count } }

    /// Ends connection `id`'s request, if the connection is still open.
    func interrupt(_ id: UInt, _ why: ConnectionInterruption) {
        let abort = state.withLockedValue { $0.open[id]?.abort }
        abort?(why)
    }

    /// What the gate said of the next request on connection `id` (the responder takes one per
    /// request, in the order the gate passed their heads on); unknown outside a gate.
    func nextRequest(on id: UInt) -> RequestFacts {
        let requests = state.withLockedValue { $0.open[id]?.requests }
        return requests?.next() ?? RequestFacts(connection: nil, client: ResumableQuota.unknownClient, announcedToken: nil)
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
            let remaining = state.withLockedValue { $0.open.values.map(\.abort) }
            for abort in remaining { abort(.stopping) }
        }
    }
}

/// What only the gate knows of a request, which the endpoint needs: the connection it came on,
/// the peer as the resumable quota names it, and the upload resource announced for it (`104`).
struct RequestFacts: Sendable, Equatable {
    /// The connection's number in the registry (nil: the request came without a gate).
    let connection: UInt?
    let client: String
    let announcedToken: String?
}

/// The requests one connection's gate has passed on and the responder has not yet taken, in
/// order (HTTP/1 answers them in the order they came, one request context each).
final class ConnectionRequests: Sendable {
    let id: UInt
    let client: String
    private let announced = NIOLockedValueBox<[String?]>([])

    init(id: UInt, client: String) {
        self.id = id
        self.client = client
    }

    /// The gate passed a head on (with the token of the upload it announced for it, if any).
    func forwarded(announcing token: String?) {
        announced.withLockedValue { $0.append(token) }
    }

    /// The responder starts on the oldest request passed on.
    func next() -> RequestFacts {
        let token = announced.withLockedValue { $0.isEmpty ? nil : $0.removeFirst() }
        return RequestFacts(connection: id, client: client, announcedToken: token)
    }
}
