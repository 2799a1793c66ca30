import Foundation
import Glibc
import Testing
import UploadAgent
import UploadTesting

/// After an upgrade the agent an older uploadmon started may still run: it speaks another
/// protocol version, and `agent stop` must still be able to stop it.
@Suite(.timeLimit(.minutes(1))) struct ProtocolUpgradeTests {
    /// A stand-in for an agent of protocol `version - 1`: refuses the greeting as such an
    /// agent does, and answers `stop` with `ok`.
    func olderAgent(at path: String) throws -> Thread {
        let listener = try UnixSocket.listen(path: path)
        let thread = Thread {
            defer { close(listener) }
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            let connection = LineConnection(fd: fd)
            while let line = try? connection.readLine(), let envelope = try? AgentCoding.decode(AgentEnvelope.self, from: line) {
                let reply: AgentReply
                switch envelope.request {
                case .hello(let version, _):
                    reply = .error(
                        message:
                            "this agent speaks protocol \(AgentProtocol.version - 1), the client \(version); stop it with `uploadmon agent stop` and start again"
                    )
                case .stop:
                    reply = .ok
                default:
                    reply = .error(message: "unknown request")
                }
                connection.sendAndWait(AgentCoding.encode(AgentMessage.reply(id: envelope.id, reply: reply)))
                if case .stop = envelope.request { break }
            }
            connection.shutdown()
        }
        thread.start()
        return thread
    }

    @Test func anAgentOfAnotherVersionIsRefusedButCanBeStopped() throws {
        let root = TestFiles.makeTemporaryDirectory("upgrade")
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try olderAgent(at: root + "/a.sock")
        // An ordinary client is told what to do.
        #expect(throws: AgentError.self) { try AgentClient.connect(socketPath: root + "/a.sock", client: "test", timeout: 5) }

        _ = try olderAgent(at: root + "/b.sock")
        let client = try AgentClient.connect(socketPath: root + "/b.sock", client: "agent stop", timeout: 5, anyProtocol: true)
        #expect(client.agentPID == getpid(), "the pid comes from the socket's peer credentials")
        guard case .ok = try client.request(.stop, timeout: 5) else {
            Issue.record("stop was not accepted")
            return
        }
        client.close()
    }
}
