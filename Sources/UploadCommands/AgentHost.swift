import Dispatch
import Foundation
import Glibc
import Synchronization
import UploadAgent
import UploadCore
import UploadJournal
import UploadReports

/// The agent's process: one per user (the lock), its journal and settings opened, listening
/// on its socket (or the one systemd passed), stopped by SIGTERM/SIGINT, a `stop` request or
/// being idle; the log says each of those. `uploadmon agent run` is this.
public enum AgentHost {
    /// Runs the agent until it stops. `idleExit`: seconds with no uploads and no clients before
    /// it exits (0: never); `concurrency`: this run's, over the stored settings.
    public static func run(
        paths: StatePaths = .resolve(), idleExit: Double, concurrency: Int?, log given: (@Sendable (String) -> Void)? = nil,
        clock: HouseClock = .system
    ) async throws {
        // The log's stamps read the agent's clock, as everything else in it does.
        let log = given ?? AgentLog.line(clock)
        // A process that runs for months: memory it frees must not stay spread over arenas.
        FreedMemory.limitArenas(cores: ProcessInfo.processInfo.activeProcessorCount)
        do {
            try paths.prepare()
        } catch {
            throw CommandFailure.failed("\(error)")
        }
        let lock: AgentLock
        switch AgentLock.acquire(paths.agentLock) {
        case .success(let acquired):
            lock = acquired
        case .failure(.held(let pid)):
            Console.complain("uploadmon: an agent is already running\(pid.map { " (pid \($0))" } ?? "")")
            throw CommandFailure.said(status: AgentLauncher.alreadyRunningStatus)
        case .failure(.cannotOpen(let reason)):
            throw CommandFailure.failed("cannot use \(paths.agentLock): \(reason)")
        }
        defer { lock.release() }

        signal(SIGPIPE, SIG_IGN)
        // The agent outlives terminals: a hangup is not a reason to stop uploading.
        signal(SIGHUP, SIG_IGN)

        let journal: Journal
        do {
            journal = try Journal(path: paths.journal)
        } catch {
            throw CommandFailure.failed("cannot open the journal \(paths.journal): \(error)")
        }
        var settings: AgentSettings
        do { settings = try AgentSettings.load(paths.agentSettings) } catch { throw CommandFailure.failed("\(error)") }
        if let concurrency { settings.concurrency = concurrency }
        let agent = try Agent(
            configuration: AgentConfiguration(paths: paths, idleExitSeconds: idleExit, settings: settings, clock: clock),
            journal: journal, log: log)
        let server: AgentServer
        var listening = paths.socket
        do {
            // Started by systemd for its socket (`uploadmon agent install`): accept on that one.
            if let passed = try SocketActivation.inheritedListener() {
                server = try AgentServer(agent: agent, inherited: passed.fd, path: passed.path, log: log)
                listening = "\(passed.path) (the socket systemd passed)"
            } else {
                server = try AgentServer(agent: agent, path: paths.socket, log: log)
            }
        } catch {
            throw CommandFailure.failed("cannot listen: \(error)")
        }
        let recovered = try await agent.start()
        server.start()
        log(
            "agent \(getpid()) listening on \(listening); journal \(paths.journal); "
                + (idleExit > 0 ? "exits after \(ByteFormat.duration(idleExit)) idle" : "never exits when idle")
                + (recovered > 0 ? "; \(recovered) unfinished upload(s) resumed" : ""))
        log("settings: \(settings.inForce(at: clock.wall()))")

        let signals = [SIGTERM, SIGINT].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { Task { await agent.requestStop(.signal(number)) } }
            source.resume()
            return source
        }
        let idleTimer = Task { await agent.runIdleTimer() }
        let reason = await agent.waitUntilStopped()
        idleTimer.cancel()
        signals.forEach { $0.cancel() }
        server.close()
        await agent.shutdown()
        let unfinished = (try? journal.unfinishedCounts().values.reduce(0, +)) ?? 0
        log("agent \(getpid()) stopped (\(reason))" + (unfinished > 0 ? "; \(unfinished) unfinished upload(s) continue at the next start" : ""))
    }

    /// Asks the agent on the socket to stop (of any protocol version) and waits until its
    /// process is gone, so a following start does not race it. Its pid, or nil if none ran.
    public static func stop(_ paths: StatePaths, client name: String) throws -> Int32? {
        let client: AgentClient
        do {
            client = try AgentClient.connect(socketPath: paths.socket, client: name, anyProtocol: true)
        } catch let error as SocketError where error.meansNoAgent {
            return nil
        }
        let pid = client.agentPID
        let reply = try client.request(.stop)
        client.close()
        guard case .ok = reply else { throw CommandFailure.failed(AgentClient.text(of: reply, doing: "stop")) }
        for _ in 0..<200 where pid > 0 && kill(pid, 0) == 0 {
            usleep(25_000)
        }
        return pid
    }

    /// What the running agent says of itself, or nil when none answers within 5 s.
    public static func status(_ paths: StatePaths, client name: String) -> AgentStatus? {
        guard let client = try? AgentClient.connect(socketPath: paths.socket, client: name, timeout: 5) else { return nil }
        defer { client.close() }
        guard case .status(let status) = try? client.request(.status, timeout: 5) else { return nil }
        return status
    }

    /// Connects to the agent, starting it (this executable) when none runs.
    public static func connectOrStart(paths: StatePaths, client: String) throws -> AgentLauncher.Connection {
        do {
            return try AgentLauncher.connectOrStart(paths: paths, client: client, executable: AgentLauncher.currentExecutable())
        } catch {
            throw CommandFailure.failed("\(error)")
        }
    }

    /// Sends a request to the agent (starting it when none runs); fails on an error reply.
    @discardableResult
    public static func request(_ request: AgentRequest, doing what: String, client: String, paths: StatePaths = .resolve()) throws -> AgentReply {
        let connection = try connectOrStart(paths: paths, client: client)
        defer { connection.client.close() }
        let reply = try connection.client.request(request, timeout: 30)
        if case .error = reply { throw CommandFailure.failed(AgentClient.text(of: reply, doing: what)) }
        return reply
    }
}

/// The agent's log: one line per thing worth knowing, with the time, on standard error
/// (the agent log file when it runs detached). Header values never reach it.
public enum AgentLog {
    /// Writes lines stamped with `clock`'s time.
    public static func line(_ clock: HouseClock) -> @Sendable (String) -> Void {
        { text in Console.complain(InvisibleCharacters.escaped(stamp(clock.wall()) + " " + text)) }
    }

    /// The second's ISO 8601 stamp, formatted once a second: a busy agent logs an upload's end
    /// thousands of times a second, and formatting each was a hundredth of its work.
    public static func stamp(_ now: Date) -> String {
        let second = Int(now.timeIntervalSince1970.rounded(.down))
        if let last = lastStamp.withLock({ $0 }), last.second == second { return last.text }
        let text = Date(timeIntervalSince1970: Double(second)).formatted(.iso8601)
        lastStamp.withLock { $0 = (second, text) }
        return text
    }

    private static let lastStamp = Mutex<(second: Int, text: String)?>(nil)
}

/// The exclusive lock one agent per user holds (flock on a file in the state directory, which
/// the kernel releases when the process dies, however it dies). The file holds the pid.
public struct AgentLock: Sendable {
    public let fd: Int32

    /// Why the agent's lock was not taken: another agent holds it (its pid when it says), or the file cannot be opened.
    public enum Failure: Error, Equatable {
        case held(pid: Int32?)
        case cannotOpen(String)
    }

    /// Takes the lock at `path` (one agent per user) and writes this process's pid in it, or says who holds it.
    public static func acquire(_ path: String) -> Result<AgentLock, Failure> {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(.cannotOpen(String(cString: strerror(errno)))) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let n = pread(fd, &buffer, 31, 0)
            close(fd)
            let pid = n > 0 ? Int32(String(decoding: buffer[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) : nil
            return .failure(.held(pid: pid))
        }
        _ = ftruncate(fd, 0)
        let text = Array("\(getpid())\n".utf8)
        _ = pwrite(fd, text, text.count, 0)
        return .success(AgentLock(fd: fd))
    }

    public func release() {
        _ = ftruncate(fd, 0)
        close(fd)
    }
}
