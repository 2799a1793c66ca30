import Foundation
import Glibc
import NIOConcurrencyHelpers

/// Accepts clients on the agent's Unix socket: checks each peer's uid, then reads its requests
/// on a thread of its own and hands them to the agent in order.
public final class AgentServer: Sendable {
    let agent: Agent
    let listener: Int32
    let path: String
    let agentUID: UInt32
    private let nextClient = NIOLockedValueBox(0)
    private let log: @Sendable (String) -> Void

    /// Listens at `path` (mode 0600).
    public init(agent: Agent, path: String, log: @escaping @Sendable (String) -> Void = { _ in }) throws(SocketError) {
        self.agent = agent
        self.path = path
        self.listener = try UnixSocket.listen(path: path)
        self.agentUID = getuid()
        self.log = log
    }

    /// Starts accepting on a thread of its own.
    public func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "uploadmon.agent.accept"
        thread.start()
    }

    /// Stops accepting and removes the socket file.
    public func close() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        unlink(path)
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE {
                    usleep(100_000)
                    continue
                }
                Glibc.close(listener)
                return
            }
            // Spawned processes close every inherited descriptor above stderr, so the short
            // window before FD_CLOEXEC is harmless.
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let connection = LineConnection(fd: fd, label: "uploadmon.agent.client")
            let peer = UnixSocket.peerCredentials(fd)
            if case .failure(let refusal) = PeerPolicy.admits(peer, agentUID: agentUID) {
                log("\(refusal)")
                connection.sendAndWait(AgentCoding.encode(AgentMessage.reply(id: 0, reply: .error(message: refusal.description))))
                connection.shutdown()
                continue
            }
            let client = nextClient.withLockedValue { value -> Int in
                value += 1
                return value
            }
            let thread = Thread { [self] in serve(connection, client: client) }
            thread.name = "uploadmon.agent.client.\(client)"
            thread.start()
        }
    }

    private func serve(_ connection: LineConnection, client: Int) {
        let agent = self.agent
        blocking { await agent.connected(client, connection: connection) }
        defer {
            blocking { await agent.disconnected(client) }
            connection.shutdown()
        }
        var greeted = false
        while true {
            let line: [UInt8]
            do {
                guard let next = try connection.readLine() else { return }
                line = next
            } catch {
                log("client \(client): \(error)")
                return
            }
            guard !line.isEmpty else { continue }
            let envelope: AgentEnvelope
            do {
                envelope = try AgentCoding.decode(AgentEnvelope.self, from: line)
            } catch {
                connection.send(AgentCoding.encode(AgentMessage.reply(id: 0, reply: .error(message: "cannot read the request: \(error)"))))
                continue
            }
            if !greeted {
                guard case .hello = envelope.request else {
                    connection.send(AgentCoding.encode(AgentMessage.reply(id: envelope.id, reply: .error(message: "say hello first"))))
                    continue
                }
                greeted = true
            }
            blocking { await agent.handle(envelope, from: client, connection: connection) }
        }
    }
}

/// Runs async work from a plain thread (never from the cooperative pool) and waits for it.
func blocking(_ work: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await work()
        done.signal()
    }
    done.wait()
}
