import Foundation
import Glibc
import Testing
import UploadTesting

/// `agent install` / `uninstall` with a stand-in `systemctl` that records what it is asked
/// (no systemd runs here), the refusals where no user instance exists, and the agent started
/// as systemd starts it for its socket.
@Suite(.serialized, .timeLimit(.minutes(3))) struct AgentServiceCLITests {
    struct Setup {
        let root: String
        let environment: [String: String]
        var log: String { root + "/systemctl.log" }
        var units: String { root + "/config/systemd/user" }

        /// A login with a user instance: `$XDG_RUNTIME_DIR/systemd/private` exists and a
        /// `systemctl` on PATH appends its arguments to the log (and fails if told to).
        init(userInstance: Bool = true, systemctlFails: Bool = false) throws {
            root = TestFiles.makeTemporaryDirectory("agent-service")
            let bin = root + "/bin"
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            let script = """
                #!/bin/sh
                echo "$*" >> "\(root)/systemctl.log"
                \(systemctlFails ? "echo 'Failed to connect to bus: No medium found' >&2; exit 1" : "exit 0")

                """
            try script.write(toFile: bin + "/systemctl", atomically: true, encoding: .utf8)
            chmod(bin + "/systemctl", 0o755)
            try FileManager.default.createDirectory(atPath: root + "/run/systemd", withIntermediateDirectories: true)
            if userInstance { _ = FileManager.default.createFile(atPath: root + "/run/systemd/private", contents: nil) }
            environment = [
                "PATH": bin + ":/usr/bin:/bin", "XDG_RUNTIME_DIR": root + "/run", "XDG_STATE_HOME": root + "/state",
                "XDG_CONFIG_HOME": root + "/config",
            ]
        }

        var calls: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    @Test func installWritesEnablesAndExplainsUninstallUndoesIt() async throws {
        let setup = try Setup()
        let install = try await CLIRun.run(["agent", "install"], environment: setup.environment)
        #expect(install.status == 0, "\(install.stderr)")
        #expect(setup.calls == ["--user daemon-reload", "--user enable --now uploadmon-agent.socket uploadmon-agent.service"])
        let service = try String(contentsOfFile: setup.units + "/uploadmon-agent.service", encoding: .utf8)
        #expect(service.contains("ExecStart=\"\(CLIRun.binary)\" agent run\n"), "\(service)")
        #expect(service.contains("Environment=\"XDG_STATE_HOME=\(setup.root)/state\""))
        let socket = try String(contentsOfFile: setup.units + "/uploadmon-agent.socket", encoding: .utf8)
        #expect(socket.contains("ListenStream=\(setup.root)/run/uploadmon/agent.sock\n"))
        #expect(install.stdout.contains("Wrote uploadmon-agent.socket and uploadmon-agent.service in \(setup.units)"))
        #expect(install.stdout.contains("Enabled and started them: systemd listens on \(setup.root)/run/uploadmon/agent.sock"))
        #expect(install.stdout.contains("Lingering is"), "\(install.stdout)")

        let uninstall = try await CLIRun.run(["agent", "uninstall"], environment: setup.environment)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        #expect(setup.calls.suffix(2) == ["--user disable --now uploadmon-agent.service uploadmon-agent.socket", "--user daemon-reload"])
        #expect(!FileManager.default.fileExists(atPath: setup.units + "/uploadmon-agent.service"))
        #expect(!FileManager.default.fileExists(atPath: setup.units + "/uploadmon-agent.socket"))
        #expect(uninstall.stdout.contains("The agent starts on demand again"))
        let again = try await CLIRun.run(["agent", "uninstall"], environment: setup.environment)
        #expect(again.status == 0 && again.stdout.contains("Nothing to remove"), "\(again.stdout)")
    }

    @Test func withoutAUserInstanceInstallChangesNothingAndSaysHowToGetOne() async throws {
        let setup = try Setup(userInstance: false)
        let refused = try await CLIRun.run(["agent", "install"], environment: setup.environment)
        #expect(refused.status == 3)
        #expect(refused.stderr.contains("no systemd user instance runs for this user (\(setup.root)/run/systemd/private is missing)"), "\(refused.stderr)")
        #expect(refused.stderr.contains("loginctl enable-linger"))
        #expect(refused.stderr.contains("Nothing was changed."))
        #expect(setup.calls.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: setup.units))

        var noSystemd = setup.environment
        noSystemd["PATH"] = setup.root + "/empty"
        let none = try await CLIRun.run(["agent", "install"], environment: noSystemd)
        #expect(none.status == 3 && none.stderr.contains("systemctl is not installed here"), "\(none.stderr)")

        let printed = try await CLIRun.run(["agent", "install", "--print"], environment: noSystemd)
        #expect(printed.status == 0)
        #expect(printed.stdout.contains("[Socket]") && printed.stdout.contains("ExecStart=\"\(CLIRun.binary)\" agent run"))
        #expect(!FileManager.default.fileExists(atPath: setup.units))
    }

    @Test func aSystemctlThatFailsIsReportedWithWhatItSaid() async throws {
        let setup = try Setup(systemctlFails: true)
        let failed = try await CLIRun.run(["agent", "install"], environment: setup.environment)
        #expect(failed.status != 0)
        #expect(failed.stderr.contains("`systemctl --user daemon-reload` failed (exit 1): Failed to connect to bus: No medium found"), "\(failed.stderr)")
    }

    /// As systemd starts it: the listening socket on descriptor 3, LISTEN_PID and LISTEN_FDS
    /// set. The agent accepts on it and leaves it in place when it stops, so the next client
    /// starts a new agent on the same socket.
    @Test func anAgentStartedForItsSocketServesItAndLeavesItForTheNext() async throws {
        let setup = try Setup()
        let socketPath = setup.root + "/run/uploadmon/agent.sock"
        try FileManager.default.createDirectory(
            atPath: setup.root + "/run/uploadmon", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let listener = try Self.listen(socketPath)
        defer { close(listener) }

        for round in 1...2 {
            let pid = try Self.spawnActivated(listener: listener, environment: setup.environment, stderr: setup.root + "/agent-\(round).log")
            // Reaped as soon as it exits, as a service manager does (a zombie still "exists").
            let exited = Task {
                try await offPool { () -> Int32 in
                    var status: Int32 = 0
                    return waitpid(pid, &status, 0) == pid ? status : -1
                }
            }
            let status = try await CLIRun.run(["status"], environment: setup.environment)
            #expect(status.stdout.contains("Agent: running (pid \(pid))"), "round \(round): \(status.stdout) \(status.stderr)")
            let stop = try await CLIRun.run(["agent", "stop"], environment: setup.environment)
            #expect(stop.stdout.contains("Stopped the agent (pid \(pid))"), "\(stop.stdout) \(stop.stderr)")
            if !stop.stdout.contains("Stopped") { kill(pid, SIGKILL) }
            #expect(try await exited.value == 0, "the agent exits cleanly")
            #expect(FileManager.default.fileExists(atPath: socketPath), "the socket stays for the service manager")
            let log = try String(contentsOfFile: setup.root + "/agent-\(round).log", encoding: .utf8)
            #expect(log.contains("listening on \(socketPath) (the socket systemd passed)"), "\(log)")
        }
    }

    /// systemd's own parser reads the units without a complaint (it prints a line for every
    /// setting it ignores, so a quiet run means every line was understood).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
    func systemdsOwnCheckAcceptsTheUnits() async throws {
        let setup = try Setup()
        let printed = try await CLIRun.run(["agent", "install", "--print"], environment: setup.environment)
        try FileManager.default.createDirectory(atPath: setup.units, withIntermediateDirectories: true)
        var names: [String] = []
        for part in printed.stdout.components(separatedBy: "# /").dropFirst() {
            let (header, body) = (part.prefix { $0 != "\n" }, part.drop { $0 != "\n" }.dropFirst())
            let name = String(header.split(separator: "/").last ?? "")
            try String(body).write(toFile: setup.units + "/" + name, atomically: true, encoding: .utf8)
            names.append(setup.units + "/" + name)
        }
        #expect(names.map { ($0 as NSString).lastPathComponent }.sorted() == ["uploadmon-agent.service", "uploadmon-agent.socket"])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        process.arguments = ["verify", "--user"] + names
        process.environment = ["XDG_RUNTIME_DIR": setup.root + "/run", "PATH": "/usr/bin:/bin", "HOME": setup.root]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = errors
        try process.run()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && said.isEmpty, "\(said)")
    }

    /// The same with systemd's own activator (`systemd-socket-activate`): it binds the socket,
    /// starts the agent for the first client and passes the socket as systemd does.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate")))
    func systemdsActivatorStartsTheAgentForItsFirstClient() async throws {
        let setup = try Setup()
        let socketPath = setup.root + "/run/uploadmon/agent.sock"
        try FileManager.default.createDirectory(
            atPath: setup.root + "/run/uploadmon", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Spawned and reaped by hand: Foundation's Process would keep a long-running child's
        // wait on the thread that reaps every other child the test starts.
        var pipeFDs: [Int32] = [0, 0]
        #expect(pipe(&pipeFDs) == 0)
        let arguments =
            ["/usr/bin/systemd-socket-activate", "-l", socketPath] + setup.environment.flatMap { ["-E", "\($0.key)=\($0.value)"] }
            + [CLIRun.binary, "agent", "run", "--idle-exit", "0"]
        let pid = try Self.spawn(arguments, environment: setup.environment, descriptors: [(pipeFDs[1], 2)], stderr: nil)
        close(pipeFDs[1])
        let exited = Task {
            try await offPool { () -> Int32 in
                var status: Int32 = 0
                return waitpid(pid, &status, 0) == pid ? status : -1
            }
        }
        defer {
            kill(pid, SIGKILL)
            close(pipeFDs[0])
        }
        // It says when it listens; nothing runs until a client comes.
        let reader = pipeFDs[0]
        let listening = try await offPool { () -> String in
            var seen = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !seen.contains("Listening on") {
                let count = read(reader, &buffer, buffer.count)
                if count <= 0 { break }
                seen += String(decoding: buffer[..<count], as: UTF8.self)
            }
            return seen
        }
        #expect(listening.contains("Listening on \(socketPath)"), "\(listening)")
        let status = try await CLIRun.run(["status"], environment: setup.environment)
        #expect(status.stdout.contains("Agent: running (pid"), "\(status.stdout) \(status.stderr)")
        let stop = try await CLIRun.run(["agent", "stop"], environment: setup.environment)
        #expect(stop.stdout.contains("Stopped the agent (pid \(pid))"), "the activator execs the agent: \(stop.stdout) \(stop.stderr)")
        #expect(try await exited.value == 0, "the agent exits cleanly")
    }

    static func listen(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        return fd
    }

    /// Starts `uploadmon agent run` with `listener` as descriptor 3 and the activation variables
    /// naming its own pid (the shell execs the agent, keeping the pid).
    static func spawnActivated(listener: Int32, environment: [String: String], stderr: String) throws -> pid_t {
        try spawn(
            ["/bin/sh", "-c", "export LISTEN_PID=$$ LISTEN_FDS=1; exec \"$0\" agent run --idle-exit 0", CLIRun.binary],
            environment: environment, descriptors: [(listener, 3)], stderr: stderr)
    }

    /// posix_spawn with `descriptors` (from, to) duplicated into the child, standard output to
    /// /dev/null and standard error to the file `stderr` unless a descriptor covers 2.
    static func spawn(_ arguments: [String], environment: [String: String], descriptors: [(Int32, Int32)], stderr: String?) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (from, to) in descriptors { posix_spawn_file_actions_adddup2(&actions, from, to) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if let stderr { posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600) }
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        return pid
    }
}
