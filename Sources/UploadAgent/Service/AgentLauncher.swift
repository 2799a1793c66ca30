import UploadCore
import Foundation
import Glibc
import NIOConcurrencyHelpers
import UploadJournal

/// Finds the running agent, or starts one: detached in a session of its own (so a closed
/// terminal or a dropped SSH connection does not reach it), standard input from /dev/null,
/// output appended to the agent log in the state directory, no descriptor of ours inherited.
public enum AgentLauncher {
    /// The exit status an agent uses when another agent already holds the lock.
    public static let alreadyRunningStatus: Int32 = 75

    /// A connection to the agent, and whether this call started it.
    public struct Connection: Sendable {
        public let client: AgentClient
        /// True when this call started the agent.
        public let started: Bool
    }

    /// Connects to the agent, starting `executable agentArguments…` first when none answers.
    public static func connectOrStart(
        paths: StatePaths, client: String, executable: String, agentArguments: [String] = ["agent"],
        environment: [String: String]? = nil, startTimeout: Double = 15
    ) throws -> Connection {
        do {
            return Connection(client: try AgentClient.connect(socketPath: paths.socket, client: client), started: false)
        } catch let error as SocketError where error.meansNoAgent {
            // Nobody listens: start one below.
        }
        do { try paths.prepare() } catch { throw AgentError("\(error)") }
        let child = try spawnDetached([executable] + agentArguments, logPath: paths.agentLog, environment: environment)
        let deadline = HouseClock.system.monotonic() + startTimeout
        while HouseClock.system.monotonic() < deadline {
            do {
                return Connection(client: try AgentClient.connect(socketPath: paths.socket, client: client), started: true)
            } catch let error as SocketError where error.meansNoAgent {
                if let status = child.exitStatus, status != alreadyRunningStatus {
                    throw AgentError("the agent could not start (\(describe(status))): \(lastLine(of: paths.agentLog) ?? "see \(paths.agentLog)")")
                }
                usleep(30_000)
            }
        }
        throw AgentError("the agent did not answer within \(Int(startTimeout)) s of starting; see \(paths.agentLog)")
    }

    /// A started process that a thread of ours reaps, so it never lingers as a zombie.
    final class Child: Sendable {
        let pid: pid_t
        private let status = NIOLockedValueBox<Int32?>(nil)

        init(pid: pid_t) {
            self.pid = pid
            let thread = Thread { [self] in
                var raw: Int32 = 0
                while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
                status.withLockedValue { $0 = raw }
            }
            thread.name = "uploadmon.agent.reaper"
            thread.start()
        }

        var exitStatus: Int32? { status.withLockedValue { $0 } }
    }

    static func spawnDetached(_ arguments: [String], logPath: String, environment: [String: String]?) throws -> Child {
        try? StatePaths.makePrivateFile(logPath)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        guard spawnCloseFrom(&actions, 3) == 0 else { throw AgentError("cannot prepare to start the agent: \(String(cString: strerror(errno)))") }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        // POSIX_SPAWN_SETSID (glibc 2.26+; Glibc's module does not export the name).
        let setSID: Int32 = 0x80
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | setSID))

        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, env)
        guard result == 0 else {
            throw AgentError("cannot start the agent (\(arguments[0])): \(String(cString: strerror(result)))")
        }
        return Child(pid: pid)
    }

    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        if signal == 0 { return "exit status \((status >> 8) & 0xff)" }
        return "killed by signal \(signal)"
    }

    static func lastLine(of path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").last.map(String.init)
    }

    /// This process's own executable, to start the agent from the same build.
    public static func currentExecutable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}

/// glibc 2.34+: close every descriptor from `from` up in the child. Declared here because
/// Glibc's module does not export it.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
func spawnCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
