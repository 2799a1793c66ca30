import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import UploadTesting

/// Runs a command in a detached tmux session on a private server, so a test can type keys and
/// read the screen as a person would (`send-keys`, `capture-pane`).
final class TmuxSession: Sendable {
    let socket: String
    let name = "uploadmon"

    /// Starts `command` in a `width`×`height` pane. When the command ends the pane stays and
    /// shows `EXITED <status>`, so tests can check how it ended.
    private init() {
        socket = "uploadmon-test-\(UUID().uuidString.prefix(8))"
    }

    static func start(_ command: String, width: Int = 120, height: Int = 40) async throws -> TmuxSession {
        let session = TmuxSession()
        let wrapped = "LANG=C.UTF-8 LC_ALL=C.UTF-8 \(command); echo EXITED $?; exec sleep 60"
        let status = try await offPool {
            try spawnAndWait([
                "tmux", "-u", "-L", session.socket, "-f", "/dev/null", "new-session", "-d", "-s", session.name,
                "-x", "\(width)", "-y", "\(height)", wrapped,
            ])
        }
        guard status == 0 else { throw TmuxError.couldNotStart(status) }
        return session
    }

    enum TmuxError: Error { case couldNotStart(Int32) }

    /// Starting the tmux server forks a daemon that keeps every descriptor it inherits. Through
    /// Foundation.Process that includes the exit-watch pipe of this very process, and of any other
    /// subprocess a parallel test is running (a curl), whose `waitUntilExit` would then wait for the
    /// server's whole life. So: posix_spawn, close everything above stderr, reap it ourselves.
    static func spawnAndWait(_ arguments: [String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        guard spawnCloseFrom(&actions, 3) == 0 else { throw TmuxError.couldNotStart(errno) }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw TmuxError.couldNotStart(spawned) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    @discardableResult
    func tmux(_ arguments: [String], capture: Bool = true) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["tmux", "-u", "-L", socket] + arguments
        let out = Pipe()
        process.standardOutput = capture ? out : FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = capture ? out.fileHandleForReading.readDataToEndOfFile() : Data()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func send(_ keys: String...) async throws {
        _ = try await offPool { try self.tmux(["send-keys", "-t", self.name] + keys) }
        // Keys apart, as a person types them, not a wait for an effect (tests wait for screens
        // with `waitFor`): an Escape followed at once by a key reads as Alt+key.
        try await Task.sleep(nanoseconds: 150_000_000)
    }

    func resize(width: Int, height: Int) async throws {
        _ = try await offPool { try self.tmux(["resize-window", "-t", self.name, "-x", "\(width)", "-y", "\(height)"]) }
    }

    func screen() async throws -> String {
        try await offPool { try self.tmux(["capture-pane", "-p", "-t", self.name]) }
    }

    /// The screen with its colours and attributes as escape sequences.
    func coloredScreen() async throws -> String {
        try await offPool { try self.tmux(["capture-pane", "-p", "-e", "-t", self.name]) }
    }

    /// Whether the pane shows the alternate screen (the monitor is up) or the normal one.
    func alternateScreenOn() async throws -> Bool {
        try await offPool { try self.tmux(["display-message", "-p", "-t", self.name, "#{alternate_on}"]) }.hasPrefix("1")
    }

    func pid() async throws -> Int32? {
        Int32(try await offPool { try self.tmux(["display-message", "-p", "-t", self.name, "#{pane_pid}"]) }.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Polls the screen until `condition` holds; returns the last screen either way.
    @discardableResult
    func waitFor(timeout: Double = 30, colored: Bool = false, _ condition: (String) -> Bool) async throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while Date() < deadline {
            last = try await colored ? coloredScreen() : screen()
            if condition(last) { return last }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        // Once more after the deadline: a full run can hold this task for half a minute between
        // two looks, and the screen may have come right meanwhile.
        return try await colored ? coloredScreen() : screen()
    }

    /// Ends the session and waits (up to 10 s) until the program in its pane has exited.
    func close() async {
        let pid = (try? tmux(["display-message", "-p", "-t", name, "#{pane_pid}"]))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        kill()
        guard let pid else { return }
        for _ in 0..<200 where Glibc.kill(pid, 0) == 0 {
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
    }

    func kill() {
        // kill-server alone has been seen to leave the server running; ending the only session ends it.
        _ = try? Self.spawnAndWait(["tmux", "-L", socket, "kill-session", "-t", name])
        _ = try? Self.spawnAndWait(["tmux", "-L", socket, "kill-server"])
    }

    static var isAvailable: Bool {
        ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].contains { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// glibc 2.34+ has it, but its header hides it from Swift's import.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func spawnCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
