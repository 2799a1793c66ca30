import Foundation
import Glibc
import UploadJournal
import UploadCore

/// The agent as a systemd user service: a socket unit that listens on the agent's socket (so
/// the first client starts the agent) and a service unit that runs it, at login too.
public struct AgentUnits: Sendable, Equatable {
    public static let socketName = "uploadmon-agent.socket"
    public static let serviceName = "uploadmon-agent.service"
    /// What `agent install` passes on, so the service uses the journal and socket the commands
    /// of this login use.
    public static let pinnedVariables = ["XDG_STATE_HOME", "XDG_RUNTIME_DIR"]

    public let executable: String
    public let socketPath: String
    public let environment: [(String, String)]

    public static func == (a: AgentUnits, b: AgentUnits) -> Bool {
        a.executable == b.executable && a.socketPath == b.socketPath && a.environment.elementsEqual(b.environment, by: ==)
    }

    /// The units for `executable`, with the socket and state where `paths` put them.
    public init(executable: String, paths: StatePaths, environment: [String: String]) throws(UnitError) {
        for (what, value) in [("the executable's path", executable), ("the socket's path", paths.socket)] {
            guard value.hasPrefix("/") else { throw UnitError("\(what) \(value) is not absolute") }
            guard !value.contains(where: { $0.isNewline || $0 == "\0" }) else { throw UnitError("\(what) holds a line break") }
        }
        self.executable = executable
        self.socketPath = paths.socket
        // A relative value is ignored, as the XDG rules say (StatePaths does too). One that
        // cannot be written into a unit is refused: dropping it would give the service another
        // state folder than this shell's, and the uploads queued here would not be its.
        var pinned: [(String, String)] = []
        for name in Self.pinnedVariables {
            guard let value = environment[name], value.hasPrefix("/") else { continue }
            guard !value.contains(where: { $0.isNewline || $0 == "\0" }) else {
                throw UnitError(
                    "\(name) (\(InvisibleCharacters.escaped(value))) holds a line break; a systemd unit cannot carry it, so the service would use another folder. Choose a folder without one"
                )
            }
            pinned.append((name, value))
        }
        self.environment = pinned
    }

    /// Where a user's own units go: `$XDG_CONFIG_HOME/systemd/user` (default `~/.config/systemd/user`).
    public static func directory(environment: [String: String]) -> String {
        StatePaths.xdgDirectory("XDG_CONFIG_HOME", default: ".config", environment: environment) + "/systemd/user"
    }

    public var socketUnit: String {
        """
        # Written by `uploadmon agent install`; `uploadmon agent uninstall` removes it.
        [Unit]
        Description=uploadmon upload agent socket
        Documentation=man:systemd.socket(5)

        [Socket]
        ListenStream=\(Self.escapingSpecifiers(socketPath))
        SocketMode=0600
        DirectoryMode=0700
        # The agent accepts on the socket itself and leaves it in place when it exits idle.
        Accept=no

        [Install]
        WantedBy=sockets.target

        """
    }

    public var serviceUnit: String {
        let lines = environment.map { "Environment=\(Self.quoted("\($0.0)=\($0.1)", commandLine: false))\n" }.joined()
        return """
            # Written by `uploadmon agent install`; `uploadmon agent uninstall` removes it.
            [Unit]
            Description=uploadmon background upload agent
            Documentation=man:systemd.service(5)
            Requires=\(Self.socketName)
            After=\(Self.socketName)

            [Service]
            Type=simple
            ExecStart=\(Self.quoted(executable)) agent run
            \(lines)# Stops cleanly on SIGTERM: unfinished uploads stay in the journal for the next start.
            KillSignal=SIGTERM
            TimeoutStopSec=30
            Restart=on-failure
            RestartSec=5
            # Another agent already holds the lock (one started on demand): not a failure to retry.
            RestartPreventExitStatus=\(AgentLauncher.alreadyRunningStatus)

            [Install]
            WantedBy=default.target

            """
    }

    /// `%` starts a specifier in every unit setting.
    static func escapingSpecifiers(_ text: String) -> String { text.replacing("%", with: "%%") }

    /// One word of a command line or an `Environment=` assignment: double-quoted, with what
    /// systemd would otherwise read as a specifier, an escape or (on a command line only: an
    /// `Environment=` value expands no variables and keeps `$$` as two dollars) a variable made
    /// literal.
    static func quoted(_ text: String, commandLine: Bool = true) -> String {
        var out = "\""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "%": out += "%%"
            case "$" where commandLine: out += "$$"
            default: out.append(character)
            }
        }
        return out + "\""
    }
}

/// Why the systemd user units cannot be installed or removed.
public struct UnitError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Whether this login has a systemd user instance to run the agent, and why not.
public enum UserServiceManager: Sendable, Equatable {
    case available(systemctl: String)
    case unavailable(reason: String)

    public static func detect(
        environment: [String: String], isExecutable: (String) -> Bool = { access($0, X_OK) == 0 },
        exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }
    ) -> UserServiceManager {
        let directories = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        guard let systemctl = directories.map({ $0 + "/systemctl" }).first(where: isExecutable) else {
            return .unavailable(reason: "systemctl is not installed here (no systemd, as in most containers)")
        }
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
            return .unavailable(
                reason: "XDG_RUNTIME_DIR is not set, so this login has no systemd user instance (as in `su` shells, cron, and SSH logins without pam_systemd)")
        }
        guard exists(runtime + "/systemd/private") else {
            return .unavailable(reason: "no systemd user instance runs for this user (\(runtime)/systemd/private is missing)")
        }
        return .available(systemctl: systemctl)
    }

    /// How to get a user instance, for a refusal.
    public static func advice(user: String) -> String {
        """
        The agent keeps starting on demand, when a command needs it. To run it as a service:
          - on a machine with systemd, log in through a session that starts your user instance
            (a desktop or an SSH login with pam_systemd), then run `uploadmon agent install` again;
          - `loginctl enable-linger \(user)` (may need sudo) starts your user instance at boot,
            without a login, so the agent and its watched folders come back after a reboot.
        `uploadmon agent install --print` shows the two unit files, to install them by hand.
        """
    }

    /// Whether the user's instance starts at boot without a login (`loginctl enable-linger`).
    public static func lingers(user: String, exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> Bool {
        exists("/var/lib/systemd/linger/" + user)
    }
}
