import Foundation
import Glibc

/// Where uploadmon keeps its state, per the XDG base directory rules:
/// the journal and the agent's log in `$XDG_STATE_HOME/uploadmon` (default `~/.local/state/uploadmon`),
/// the agent's socket in `$XDG_RUNTIME_DIR/uploadmon` (falling back to the state directory).
/// Both directories are 0700 and the files in them 0600: the journal holds request headers.
public struct StatePaths: Sendable, Hashable {
    public let stateDirectory: String
    public let runtimeDirectory: String

    public init(stateDirectory: String, runtimeDirectory: String) {
        self.stateDirectory = stateDirectory
        self.runtimeDirectory = runtimeDirectory
    }

    /// The paths for this user, from `XDG_STATE_HOME` and `XDG_RUNTIME_DIR` (or their defaults).
    public static func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) -> StatePaths {
        let state = xdgDirectory("XDG_STATE_HOME", default: ".local/state", environment: environment) + "/uploadmon"
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 + "/uploadmon" : nil } ?? state
        return StatePaths(stateDirectory: state, runtimeDirectory: runtime)
    }

    /// An XDG base directory: the variable's value when it is an absolute path (the rules say
    /// to ignore a relative one), else `default` under the home directory.
    public static func xdgDirectory(_ variable: String, default relative: String, environment: [String: String]) -> String {
        if let value = environment[variable], value.hasPrefix("/") { return value }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/" + relative
    }

    public var journal: String { stateDirectory + "/journal.sqlite" }
    public var agentLog: String { stateDirectory + "/agent.log" }
    public var agentLock: String { stateDirectory + "/agent.lock" }
    /// The uploads the agent is preparing now (`PreparationWatch`).
    public var preparing: String { stateDirectory + "/preparing" }
    public var socket: String { runtimeDirectory + "/agent.sock" }
    /// The last event sequence number a monitor on this account has seen.
    public var monitorCursor: String { stateDirectory + "/monitor-seen" }
    /// Where a monitor that crashed wrote its backtrace.
    public func monitorCrashReport(pid: Int32) -> String { stateDirectory + "/monitor-crash-\(pid).txt" }

    /// Creates both directories (and their parents) when missing and makes them private.
    /// Refuses a directory owned by another user: someone else could read or replace our files.
    public func prepare() throws(StateDirectoryError) {
        for directory in Set([stateDirectory, runtimeDirectory]) {
            try Self.makePrivateDirectory(directory)
        }
    }

    static func makePrivateDirectory(_ path: String) throws(StateDirectoryError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StateDirectoryError(path: path, reason: "cannot create it: \(error.localizedDescription)")
        }
        var st = stat()
        guard lstat(path, &st) == 0 else {
            throw StateDirectoryError(path: path, reason: String(cString: strerror(errno)))
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw StateDirectoryError(path: path, reason: "it is not a directory")
        }
        guard st.st_uid == getuid() else {
            throw StateDirectoryError(path: path, reason: "it belongs to uid \(st.st_uid), not to you (uid \(getuid()))")
        }
        if st.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw StateDirectoryError(path: path, reason: "cannot make it private (chmod 700): \(String(cString: strerror(errno)))")
        }
    }

    /// Creates `path` empty with mode 0600 if missing, and narrows an existing file to 0600.
    ///
    /// An existing file is never opened here: closing any descriptor of a file drops every POSIX
    /// lock this process holds on it, and SQLite's locks on an open journal are such locks
    /// (sqlite.org/howtocorrupt.html, 2.2). A process that opened the journal a second time while
    /// a first connection was reading lost that reader's lock, and another process could then
    /// rewrite what it was reading.
    public static func makePrivateFile(_ path: String) throws(StateDirectoryError) {
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFREG else {
                throw StateDirectoryError(path: path, reason: "it is not a regular file")
            }
            if st.st_mode & 0o077 != 0, chmod(path, 0o600) != 0 {
                throw StateDirectoryError(path: path, reason: "cannot make it private (chmod 600): \(String(cString: strerror(errno)))")
            }
            return
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        // Another process may have created it meanwhile: that is as good.
        guard fd >= 0 || errno == EEXIST else {
            throw StateDirectoryError(path: path, reason: String(cString: strerror(errno)))
        }
        if fd >= 0 { close(fd) }
    }
}

/// Why a state directory cannot be used (cannot be made, not a directory, another user's).
public struct StateDirectoryError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot use \(path): \(reason)" }
}
