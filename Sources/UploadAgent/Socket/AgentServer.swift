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
    /// Whether the socket file is this server's to remove (not when a service manager made it).
    let ownsSocketFile: Bool
    /// Wakes the accept loop to stop: shutting the listener down instead would also stop it for
    /// a service manager that shares it.
    private let wake: (read: Int32, write: Int32)
    private let nextClient = NIOLockedValueBox(0)
    private let log: @Sendable (String) -> Void

    /// Listens at `path` (mode 0600).
    public convenience init(agent: Agent, path: String, log: @escaping @Sendable (String) -> Void = { _ in }) throws(SocketError) {
        try self.init(agent: agent, listener: try UnixSocket.listen(path: path), path: path, ownsSocketFile: true, log: log)
    }

    /// Accepts on a listening socket a service manager passed (socket activation); the socket
    /// file stays when the agent stops, so the manager can start it again for the next client.
    public convenience init(agent: Agent, inherited listener: Int32, path: String, log: @escaping @Sendable (String) -> Void = { _ in }) throws(SocketError) {
        try self.init(agent: agent, listener: listener, path: path, ownsSocketFile: false, log: log)
    }

    private init(agent: Agent, listener: Int32, path: String, ownsSocketFile: Bool, log: @escaping @Sendable (String) -> Void) throws(SocketError) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SocketError(operation: "pipe for", path: path, code: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        self.agent = agent
        self.path = path
        self.listener = listener
        self.ownsSocketFile = ownsSocketFile
        self.wake = (fds[0], fds[1])
        self.agentUID = getuid()
        self.log = log
    }

    /// Starts accepting on a thread of its own.
    public func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "uploadmon.agent.accept"
        thread.start()
    }

    /// Stops accepting and removes the socket file (unless a service manager made it).
    public func close() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        if ownsSocketFile { unlink(path) }
    }

    private func acceptLoop() {
        defer {
            Glibc.close(listener)
            Glibc.close(wake.read)
            Glibc.close(wake.write)
        }
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else {
                if fds[0].revents != 0 { return }
                continue
            }
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EAGAIN { continue }
                if errno == EMFILE || errno == ENFILE {
                    usleep(100_000)
                    continue
                }
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
