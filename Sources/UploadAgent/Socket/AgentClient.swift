import Foundation
import Glibc
import NIOConcurrencyHelpers
import UploadCore

/// Why talking to the agent failed.
public struct AgentError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A connection to the agent. Requests wait for their reply; events arrive on `onEvents` (or
/// `onEvent`), on the connection's reader thread, in the order the agent sent them: the events
/// one read of the socket brought, together. Call `close` when done.
public final class AgentClient: Sendable {
    let connection: LineConnection
    let clientName: String
    private let state = NIOLockedValueBox(ClientState())
    /// One handler each, swapped whole (see `Callback` for why never a function in a lock box).
    private let eventHandler = Callback<[AgentMessage]>()
    private let closeHandler = Callback<Void>()

    private struct ClientState {
        var nextID = 1
        var waiting: [Int: ReplySlot] = [:]
        var closed = false
        var agentPID: Int32 = 0
    }

    /// Connects to the agent at `socketPath` and greets it. With `anyProtocol`, an agent of
    /// another protocol version is kept too (its pid from the socket's peer credentials):
    /// `agent stop` must be able to stop the agent an older uploadmon started, whose messages
    /// it otherwise cannot read — `stop` and its `ok` are the same in every version.
    public static func connect(socketPath: String, client: String, timeout: Double = 30, anyProtocol: Bool = false) throws -> AgentClient {
        let fd = try UnixSocket.connect(path: socketPath)
        let peer = UnixSocket.peerCredentials(fd)
        let agent = AgentClient(connection: LineConnection(fd: fd, label: "uploadmon.agent.connection"), clientName: client)
        agent.startReading()
        let reply: AgentReply
        do {
            reply = try agent.request(.hello(version: AgentProtocol.version, client: client), timeout: timeout)
        } catch {
            agent.close()
            throw error
        }
        switch reply {
        case .hello(_, let pid):
            agent.state.withLockedValue { $0.agentPID = pid }
        case .error where anyProtocol:
            agent.state.withLockedValue { $0.agentPID = peer?.pid ?? 0 }
        default:
            agent.close()
            throw AgentError(Self.text(of: reply, doing: "accept this client"))
        }
        return agent
    }

    private init(connection: LineConnection, clientName: String) {
        self.connection = connection
        self.clientName = clientName
    }

    /// The agent's process id, as it said when greeted.
    public var agentPID: Int32 { state.withLockedValue { $0.agentPID } }

    /// Called for every pushed event (after `subscribe`).
    public func onEvent(_ handler: @escaping @Sendable (AgentMessage) -> Void) {
        eventHandler.set { messages in messages.forEach(handler) }
    }

    /// Called with the pushed events in runs, in order: those that came in one read of the
    /// socket (a replacement for `onEvent`).
    public func onEvents(_ handler: @escaping @Sendable ([AgentMessage]) -> Void) {
        eventHandler.set(handler)
    }

    /// Called once when the agent goes away (or `close` was called).
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        closeHandler.set { _ in handler() }
    }

    /// Sends a request and waits for its reply.
    public func request(_ request: AgentRequest, timeout: Double = 30) throws -> AgentReply {
        let slot = ReplySlot()
        let id = try state.withLockedValue { s throws -> Int in
            guard !s.closed else { throw AgentError("the agent closed the connection") }
            let id = s.nextID
            s.nextID += 1
            s.waiting[id] = slot
            return id
        }
        guard connection.send(AgentCoding.encode(AgentEnvelope(id: id, request: request))) else {
            throw AgentError("the agent closed the connection")
        }
        guard let reply = slot.wait(timeout: timeout) else {
            state.withLockedValue { _ = $0.waiting.removeValue(forKey: id) }
            throw AgentError(isClosed ? "the agent closed the connection" : "the agent did not answer within \(Int(timeout)) s")
        }
        return reply
    }

    /// How many files one enqueue request carries: a folder of 100,000 files goes in requests of
    /// this many, so neither end holds the whole list, its records and their JSON at once (the
    /// agent's memory peaked at several times the list's size when it came in one line).
    public static let enqueueBatch = 500

    /// Queues `items` in requests of `enqueueBatch`, in order, handing each request's results to
    /// `results` as it is answered. A reply that is not `enqueued` ends it and is returned
    /// (what earlier requests queued stays queued); nil when every request was answered.
    /// `batch`: files a request carries (at least 1).
    public func enqueue(
        _ items: [EnqueueItem], brief: Bool = false, batch: Int = enqueueBatch, timeout: Double = 120, results: ([EnqueueResult]) -> Void
    ) throws -> AgentReply? {
        var start = items.startIndex
        repeat {
            let end = min(start + max(1, batch), items.endIndex)
            let reply = try request(.enqueue(items: EnqueueBatch(Array(items[start..<end]), brief: brief)), timeout: timeout)
            guard case .enqueued(let answered) = reply else { return reply }
            results(answered)
            start = end
        } while start < items.endIndex
        return nil
    }

    public var isClosed: Bool { state.withLockedValue { $0.closed } }

    /// Closes the connection; requests waiting for a reply fail.
    public func close() {
        connection.shutdown()
    }

    private func startReading() {
        let thread = Thread { [self] in
            var events: [AgentMessage] = []
            while let line = try? connection.readLine() {
                var next: [UInt8]? = line
                // Everything this read brought: events in one run, a reply in its place.
                while let line = next {
                    if let message = try? AgentCoding.decodeMessage(from: line) {
                        if case .reply = message {
                            deliver(&events)
                            answer(message)
                        } else {
                            events.append(message)
                        }
                    }
                    next = connection.bufferedLine()
                }
                deliver(&events)
            }
            closed()
        }
        thread.name = "uploadmon.agent.reader"
        thread.start()
    }

    private func deliver(_ events: inout [AgentMessage]) {
        guard !events.isEmpty else { return }
        eventHandler(events)
        events.removeAll(keepingCapacity: true)
    }

    private func answer(_ message: AgentMessage) {
        guard case .reply(let id, let reply) = message else { return }
        let slot = state.withLockedValue { s -> ReplySlot? in
            // id 0: the agent refused the connection before any request was read.
            if id == 0, let first = s.waiting.keys.min() { return s.waiting.removeValue(forKey: first) }
            return s.waiting.removeValue(forKey: id)
        }
        slot?.fill(reply)
    }

    private func closed() {
        let slots = state.withLockedValue { s -> [ReplySlot] in
            s.closed = true
            defer { s.waiting.removeAll() }
            return Array(s.waiting.values)
        }
        for slot in slots { slot.cancel() }
        closeHandler(())
    }

    /// Words for a reply that is not the one expected.
    public static func text(of reply: AgentReply, doing what: String) -> String {
        if case .error(let message) = reply { return "the agent could not \(what): \(message)" }
        return "the agent answered something unexpected when asked to \(what)"
    }
}

/// One reply to wait for.
final class ReplySlot: Sendable {
    private let box = NIOLockedValueBox<(reply: AgentReply?, done: Bool)>((nil, false))
    private let signal = DispatchSemaphore(value: 0)

    func fill(_ reply: AgentReply) {
        box.withLockedValue { $0 = (reply, true) }
        signal.signal()
    }

    func cancel() {
        box.withLockedValue { $0.done = true }
        signal.signal()
    }

    func wait(timeout: Double) -> AgentReply? {
        _ = signal.wait(timeout: HouseClock.waitDeadline(after: timeout))
        return box.withLockedValue { $0.reply }
    }
}
