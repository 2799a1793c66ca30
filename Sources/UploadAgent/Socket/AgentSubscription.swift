import UploadCore
import UploadJournal

/// A client's subscription to the agent (the monitor's), as a value: what to deliver and when,
/// which event it has seen last, when to save that, when to reconnect. Each input returns the
/// actions; the client's shell (sockets, threads, the cursor file) only carries them out, so
/// the orders a socket makes rare are tested directly.
///
/// The rule it keeps: nothing reaches the screen before the agent's records do (a `finished`
/// must not arrive for a row that does not exist yet), so events that come between subscribing
/// and the answer are held and delivered, in order, right after the records.
public struct AgentSubscription: Sendable {
    /// What the client's shell carries out, in order.
    public enum Action: Sendable, Equatable {
        /// Show the agent's records and jobs (the subscription's answer).
        case attach(AgentSnapshot)
        case deliver(UploadEvent)
        case jobs([JobSnapshot])
        /// Write the cursor so the next client knows what this one saw.
        case saveCursor(Int64)
        /// The connection is gone: say so.
        case lost
        /// Connect (or start the agent) again in this many seconds: one second after a loss,
        /// twice as long after each attempt that fails, at most `longestWait`.
        case reconnect(after: Double)
        /// The agent stopped on purpose (`agent stop`, a signal) for `reason`: say so, and do
        /// not start it again until work is asked of it (`wanted`).
        case stopped(reason: String)
    }

    /// The longest wait between attempts to reach an agent that does not come back.
    public static let longestWait = 30.0

    /// The last event seen, across reconnects (and across runs, from the cursor file).
    public private(set) var cursor: Int64?
    private var attached = false
    private var held: [UploadEvent] = []
    private var closing = false
    /// Attempts to reconnect that failed since the last connection.
    private var failures = 0
    /// Why the agent said it is stopping, on this connection.
    private var stopping: String?
    /// The connection closed after the agent said it was stopping.
    private var stoppedOnPurpose = false

    public init(cursor: Int64?) {
        self.cursor = cursor
    }

    /// A new connection: subscribe after `cursor`; until its answer, events wait.
    public mutating func connecting() {
        attached = false
        held = []
        failures = 0
        stopping = nil
        stoppedOnPurpose = false
    }

    /// What the agent pushed.
    public mutating func received(_ message: AgentMessage) -> [Action] {
        switch message {
        case .jobs(let jobs):
            return [.jobs(jobs)]
        case .event(let seq, let event, _):
            var actions: [Action] = []
            if attached { actions.append(.deliver(event)) } else { held.append(event) }
            if let seq {
                let advanced = advance(to: seq)
                // A finish is what the next monitor must not announce again: saved at once.
                if case .finished = event { actions.append(.saveCursor(advanced)) }
            }
            return actions
        case .stopping(let reason):
            stopping = reason
            return []
        case .reply:
            return []
        }
    }

    /// The subscription's answer: the records first, then what waited, in order.
    public mutating func subscribed(_ snapshot: AgentSnapshot) -> [Action] {
        var actions: [Action] = [.jobs(snapshot.jobs), .attach(snapshot)]
        actions += held.map(Action.deliver)
        held = []
        attached = true
        actions.append(.saveCursor(advance(to: snapshot.lastSequence)))
        return actions
    }

    /// The connection closed: reconnect, unless the client is the one closing or the agent
    /// said it was stopping on purpose (starting it again would undo the stop).
    public mutating func closed() -> [Action] {
        guard !closing else { return [] }
        if let stopping {
            stoppedOnPurpose = true
            return [.stopped(reason: stopping)]
        }
        return [.lost, .reconnect(after: 1)]
    }

    /// Work is asked of the agent (files queued, a retry): true when it was stopped on purpose
    /// and must be reached (or started) again now, once.
    public mutating func wanted() -> Bool {
        guard stoppedOnPurpose, !closing else { return false }
        stoppedOnPurpose = false
        return true
    }

    /// An attempt to connect or start the agent failed: try again later, waiting longer each
    /// time (an agent that cannot start is not started again every second), unless closing.
    public mutating func reconnectFailed() -> [Action] {
        guard !closing else { return [] }
        failures += 1
        return [.reconnect(after: min(Self.longestWait, Double(1 << min(failures, 5))))]
    }

    /// The client is quitting: a close from now on is expected. Returns the cursor to save.
    public mutating func close() -> Int64? {
        closing = true
        return cursor
    }

    public var isClosing: Bool { closing }

    private mutating func advance(to seq: Int64) -> Int64 {
        let value = max(cursor ?? 0, seq)
        cursor = value
        return value
    }
}
