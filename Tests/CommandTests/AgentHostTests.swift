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
        guard case .success(let first) = AgentLock.acquire(path) else {
            Issue.record("the first lock was refused")
            return
        }
        #expect(AgentLock.acquire(path) == .failure(.held(pid: getpid())))
        first.release()
        // Another test of this process may fork at any moment; its child holds a copy of the
        // lock's descriptor until it execs (close-on-exec closes it only then), so the lock
        // comes free within moments rather than at once.
        var again: AgentLock?
        for _ in 0..<200 where again == nil {
            if case .success(let lock) = AgentLock.acquire(path) { again = lock } else { usleep(25_000) }
        }
        guard let again else {
            Issue.record("the released lock was refused")
            return
        }
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

/// The log's time stamps, formatted once a second, read as formatting each line would.
@Test func theLogsStampIsTheSecondsISO8601Form() {
    let base = 1_795_000_000.0
    for offset in [0.0, 0.25, 0.999_999, 1.0, 1.5, 59.999, 60.0, 3_600.0, 0.5, -0.5, 86_400.75] {
        let date = Date(timeIntervalSince1970: base + offset)
        #expect(AgentLog.stamp(date) == date.formatted(.iso8601), "\(offset)")
    }
}

extension AgentLock: Equatable {
    public static func == (a: AgentLock, b: AgentLock) -> Bool { a.fd == b.fd }
}
