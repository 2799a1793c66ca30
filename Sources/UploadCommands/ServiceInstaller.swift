import Foundation
import Glibc
import UploadAgent
import UploadCore
import UploadJournal
import UploadReports

/// What the installer asks of systemd: `systemctl --user …`. A protocol, so the installer's
/// decisions are tested without a systemd.
public protocol ServiceControl {
    /// Runs `systemctl --user arguments`; a failure carries what systemctl said.
    func run(_ arguments: [String]) throws
}

/// The real `systemctl` at `path`.
public struct Systemctl: ServiceControl {
    public let path: String

    public init(path: String) { self.path = path }

    public func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--user"] + arguments
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw CommandFailure.failed("cannot run \(path): \(error.localizedDescription)")
        }
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CommandFailure.failed(
                "`systemctl --user \(arguments.joined(separator: " "))` failed (exit \(process.terminationStatus)): \(said.trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
    }
}

/// `uploadmon agent install` / `uninstall`: the agent as a systemd user service (see
/// `AgentUnits`), written, enabled and started, or stopped and removed, saying each step.
public struct ServiceInstaller {
    /// `agent install` where no user instance runs: not done, and not a usage error.
    public static let unavailableStatus: Int32 = 3

    public var environment: [String: String]
    public var paths: StatePaths
    public var executable: String
    public var user: String
    public var say: (String) -> Void
    public var complain: (String) -> Void
    /// Whether a user instance runs, and which systemctl talks to it.
    public var manager: ([String: String]) -> UserServiceManager
    public var control: (String) -> any ServiceControl
    /// Stops an agent started on demand (it holds the lock and the socket); its pid, if one ran.
    public var stopAgent: (StatePaths) throws -> Int32?
    public var lingers: (String) -> Bool

    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment, paths: StatePaths = .resolve(),
        executable: String = AgentLauncher.currentExecutable(), user: String = ServiceInstaller.userName(),
        say: @escaping (String) -> Void = Console.say, complain: @escaping (String) -> Void = Console.complain,
        manager: @escaping ([String: String]) -> UserServiceManager = { UserServiceManager.detect(environment: $0) },
        control: @escaping (String) -> any ServiceControl = { Systemctl(path: $0) },
        stopAgent: @escaping (StatePaths) throws -> Int32? = { try AgentHost.stop($0, client: "agent install") },
        lingers: @escaping (String) -> Bool = { UserServiceManager.lingers(user: $0) }
    ) {
        self.environment = environment
        self.paths = paths
        self.executable = executable
        self.user = user
        self.say = say
        self.complain = complain
        self.manager = manager
        self.control = control
        self.stopAgent = stopAgent
        self.lingers = lingers
    }

    public static func userName() -> String {
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? "\(getuid())"
    }

    public var directory: String { AgentUnits.directory(environment: environment) }

    func units() throws -> AgentUnits {
        do {
            return try AgentUnits(executable: executable, paths: paths, environment: environment)
        } catch {
            throw CommandFailure.failed("cannot describe the service: \(error)")
        }
    }

    /// Why a service should not run `executable`, or nil: a binary in a SwiftPM build folder
    /// (`.build/`) is replaced by the next build and gone after `swift package clean`, and
    /// the service with it.
    public static func buildFolderWarning(_ executable: String) -> String? {
        guard executable.split(separator: "/").contains(".build") else { return nil }
        return "uploadmon: warning: \(executable) is in a build folder (.build/): the next build replaces it and a clean removes it, "
            + "and the service would run whatever is there. Install the binary first (README, Install: ~/.local/bin), then run `uploadmon agent install` from there."
    }

    /// Only the two unit files, as they would be written.
    public func printUnits() throws {
        if let warning = Self.buildFolderWarning(executable) { complain(warning) }
        let units = try units()
        say(
            "# \(directory)/\(AgentUnits.socketName)\n\(units.socketUnit)\n# \(directory)/\(AgentUnits.serviceName)\n\(units.serviceUnit)".dropLast(
                units.serviceUnit.hasSuffix("\n") ? 1 : 0
            ).description)
    }

    /// Writes the units, enables and starts them (or says why it cannot, changing nothing).
    public func install() throws {
        if let warning = Self.buildFolderWarning(executable) { complain(warning) }
        let units = try units()
        let systemctl: any ServiceControl
        switch manager(environment) {
        case .available(let path):
            systemctl = control(path)
        case .unavailable(let reason):
            complain("uploadmon: cannot install the agent as a service: \(reason).\n\(UserServiceManager.advice(user: user))\nNothing was changed.")
            throw CommandFailure.said(status: Self.unavailableStatus)
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try units.socketUnit.write(toFile: directory + "/" + AgentUnits.socketName, atomically: true, encoding: .utf8)
            try units.serviceUnit.write(toFile: directory + "/" + AgentUnits.serviceName, atomically: true, encoding: .utf8)
        } catch {
            throw CommandFailure.failed("cannot write the unit files in \(directory): \(error.localizedDescription)")
        }
        say("Wrote \(AgentUnits.socketName) and \(AgentUnits.serviceName) in \(directory) (ExecStart: \(units.executable) agent run).")
        try systemctl.run(["daemon-reload"])
        // An agent started on demand holds the lock and the socket: stop it, so the service's
        // agent can take over (its unfinished uploads continue there).
        if let stopped = try stopAgent(paths) {
            say("Stopped the agent that ran on demand (pid \(stopped)); the service's agent continues its uploads.")
        }
        try systemctl.run(["enable", "--now", AgentUnits.socketName, AgentUnits.serviceName])
        say("Enabled and started them: systemd listens on \(units.socketPath), starts the agent for the first client and at every login.")
        if lingers(user) {
            say("Lingering is on for \(user): the agent starts at boot, without a login, and watched folders are scanned after a reboot.")
        } else {
            say(
                "Lingering is off for \(user): the agent starts when you log in and stops when your last session ends. `loginctl enable-linger \(user)` starts it at boot and keeps it running after you log out."
            )
        }
        say("`uploadmon agent uninstall` removes the service; `systemctl --user status \(AgentUnits.serviceName)` shows it.")
    }

    /// Stops, disables and removes the units.
    public func uninstall() throws {
        let files = [AgentUnits.serviceName, AgentUnits.socketName].map { directory + "/" + $0 }
        let present = files.filter { FileManager.default.fileExists(atPath: $0) }
        guard !present.isEmpty else {
            say("Nothing to remove: no uploadmon units in \(directory). The agent starts on demand.")
            return
        }
        let manager = manager(environment)
        if case .available(let path) = manager {
            // Stopping the service stops the agent cleanly: unfinished uploads stay in the journal.
            try control(path).run(["disable", "--now", AgentUnits.serviceName, AgentUnits.socketName])
            say("Stopped and disabled \(AgentUnits.serviceName) and \(AgentUnits.socketName).")
        }
        for file in present {
            do {
                try FileManager.default.removeItem(atPath: file)
            } catch {
                throw CommandFailure.failed("cannot remove \(file): \(error.localizedDescription)")
            }
        }
        say("Removed \(present.map { ($0 as NSString).lastPathComponent }.joined(separator: " and ")) from \(directory).")
        switch manager {
        case .available(let path):
            try control(path).run(["daemon-reload"])
        case .unavailable(let reason):
            say("No systemd user instance to tell (\(reason)); it reads the folder again when it next starts.")
        }
        say("The agent starts on demand again; unfinished uploads continue at its next start.")
    }
}
