import Foundation
import Glibc
import Testing
import UploadAgent
import UploadCommands
import UploadJournal
import UploadTesting

@Suite("The agent's process: its lock and stop")
struct AgentHostTests {
    @Test("one lock per state folder: a second holder is told the first one's pid; released, it can be taken again")
    func lockIsExclusive() throws {
        let folder = TestFiles.makeTemporaryDirectory("agent-lock")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.lock"
        guard case .success(let first) = AgentLock.acquire(path) else { Issue.record("the first lock was refused"); return }
        #expect(AgentLock.acquire(path) == .failure(.held(pid: getpid())))
        first.release()
        guard case .success(let again) = AgentLock.acquire(path) else { Issue.record("the released lock was refused"); return }
        again.release()
    }

    @Test("a lock in a folder that cannot hold it says why")
    func lockCannotOpen() {
        guard case .failure(.cannotOpen(let reason)) = AgentLock.acquire("/nonexistent-folder/agent.lock") else {
            Issue.record("a lock in a missing folder was taken")
            return
        }
        #expect(reason.contains("No such file"))
    }

    @Test("stopping where no agent listens is not an error: there was none")
    func stopWithoutAgent() throws {
        let folder = TestFiles.makeTemporaryDirectory("agent-stop")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let paths = StatePaths(stateDirectory: folder + "/state", runtimeDirectory: folder + "/run")
        #expect(try AgentHost.stop(paths, client: "test") == nil)
        #expect(AgentHost.status(paths, client: "test") == nil)
    }
}

extension AgentLock: Equatable {
    public static func == (a: AgentLock, b: AgentLock) -> Bool { a.fd == b.fd }
}
