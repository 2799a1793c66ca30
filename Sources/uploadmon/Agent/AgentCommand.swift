import ArgumentParser
import Dispatch
import Foundation
import Glibc
import UploadAgent
import UploadCore
import UploadReports
import UploadJournal

struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "The background transfer agent: keeps uploading when the monitor exits or the SSH session drops.",
        discussion: """
        The monitor and 'send --background' start the agent by themselves when none runs; you \
        rarely start it by hand. It keeps a journal in $XDG_STATE_HOME/uploadmon (default \
        ~/.local/state/uploadmon), listens on a socket only your user may use, picks up unfinished \
        uploads after a crash, and exits after being idle (no uploads, no clients) for a while. \
        `uploadmon agent config` sets how many uploads it runs at once and a total rate limit.
        """,
        subcommands: [AgentRunCommand.self, AgentStopCommand.self, AgentConfigCommand.self, AgentInstallCommand.self, AgentUninstallCommand.self],
        defaultSubcommand: AgentRunCommand.self
    )
}

struct AgentRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the agent in the foreground (Ctrl-C stops it; unfinished uploads continue at its next start)."
    )

    @Option(name: .long, help: ArgumentHelp("Exit after this long with no uploads and no clients (e.g. 90s, 10m, 1h; 0 = never).", valueName: "duration"))
    var idleExit = "10m"

    @Option(name: .long, help: "How many uploads run at once, over all clients, for this run only (`uploadmon agent config --concurrency N` sets it for good).")
    var concurrency: Int?

    func validate() throws {
        do throws(RangeError) {
            _ = try DurationRule.idleExit.parse(idleExit, option: "--idle-exit")
        } catch {
            throw ValidationError(error.message)
        }
        if let concurrency, !(1...AgentSettings.maxConcurrency).contains(concurrency) {
            throw ValidationError("--concurrency must be from 1 to \(AgentSettings.maxConcurrency)")
        }
    }

    func run() async throws {
        // A process that runs for months: memory it frees must not stay spread over arenas.
        FreedMemory.limitArenas(cores: ProcessInfo.processInfo.activeProcessorCount)
        let paths = StatePaths.resolve()
        let log = AgentLog.line
        do {
            try paths.prepare()
        } catch {
            throw AgentFailure.message("\(error)")
        }
        let lock: AgentLock
        switch AgentLock.acquire(paths.agentLock) {
        case .success(let acquired):
            lock = acquired
        case .failure(.held(let pid)):
            Console.complain("uploadmon: an agent is already running\(pid.map { " (pid \($0))" } ?? "")")
            throw ExitCode(AgentLauncher.alreadyRunningStatus)
        case .failure(.cannotOpen(let reason)):
            throw AgentFailure.message("cannot use \(paths.agentLock): \(reason)")
        }
        defer { lock.release() }

        signal(SIGPIPE, SIG_IGN)
        // The agent outlives terminals: a hangup is not a reason to stop uploading.
        signal(SIGHUP, SIG_IGN)

        let journal: Journal
        do {
            journal = try Journal(path: paths.journal)
        } catch {
            throw AgentFailure.message("cannot open the journal \(paths.journal): \(error)")
        }
        var settings: AgentSettings
        do { settings = try AgentSettings.load(paths.agentSettings) } catch { throw AgentFailure.message("\(error)") }
        if let concurrency { settings.concurrency = concurrency }
        let idle = DurationText.parse(idleExit) ?? 600
        let agent = try Agent(
            configuration: AgentConfiguration(paths: paths, idleExitSeconds: idle, settings: settings),
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
            throw AgentFailure.message("cannot listen: \(error)")
        }
        let recovered = try await agent.start()
        server.start()
        log("agent \(getpid()) listening on \(listening); journal \(paths.journal); "
            + (idle > 0 ? "exits after \(ByteFormat.duration(idle)) idle" : "never exits when idle")
            + (recovered > 0 ? "; \(recovered) unfinished upload(s) resumed" : ""))
        log("settings: \(settings.inForce(at: Date()))")

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
        let unfinished = (try? journal.unfinished().count) ?? 0
        log("agent \(getpid()) stopped (\(reason))" + (unfinished > 0 ? "; \(unfinished) unfinished upload(s) continue at the next start" : ""))
    }
}

struct AgentStopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stop",
        abstract: "Stop the running agent. Unfinished uploads stay in the journal and continue when it starts again."
    )

    func run() throws {
        guard let pid = try Self.stop(StatePaths.resolve(), client: "agent stop") else {
            Console.say("No agent is running.")
            return
        }
        Console.say("Stopped the agent (pid \(pid)).")
    }

    /// Asks the agent on the socket to stop (of any protocol version) and waits until its
    /// process is gone, so a following start does not race it. Its pid, or nil if none ran.
    static func stop(_ paths: StatePaths, client name: String) throws -> Int32? {
        let client: AgentClient
        do {
            client = try AgentClient.connect(socketPath: paths.socket, client: name, anyProtocol: true)
        } catch let error as SocketError where error.meansNoAgent {
            return nil
        }
        let pid = client.agentPID
        let reply = try client.request(.stop)
        client.close()
        guard case .ok = reply else { throw AgentFailure.message(AgentClient.text(of: reply, doing: "stop")) }
        for _ in 0..<200 where pid > 0 && kill(pid, 0) == 0 {
            usleep(25_000)
        }
        return pid
    }
}

enum AgentFailure: Error, CustomStringConvertible {
    case message(String)
    var description: String {
        switch self { case .message(let text): text }
    }
}

/// The agent's log: one line per thing worth knowing, with the time, on standard error
/// (the agent log file when it runs detached). Header values never reach it.
enum AgentLog {
    static let line: @Sendable (String) -> Void = { text in
        let stamp = Date().formatted(.iso8601)
        Console.complain(InvisibleCharacters.escaped("\(stamp) \(text)"))
    }
}

/// The exclusive lock one agent per user holds (flock on a file in the state directory, which
/// the kernel releases when the process dies, however it dies). The file holds the pid.
struct AgentLock {
    let fd: Int32

    enum Failure: Error {
        case held(pid: Int32?)
        case cannotOpen(String)
    }

    static func acquire(_ path: String) -> Result<AgentLock, Failure> {
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

    func release() {
        _ = ftruncate(fd, 0)
        close(fd)
    }
}
