import UploadReports
import ArgumentParser
import Foundation
import Glibc
import UploadAgent
import UploadJournal

struct AgentInstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Run the agent as a systemd user service: started by its socket for the first client, at login, and after a reboot with lingering.",
        discussion: """
        Writes uploadmon-agent.socket and uploadmon-agent.service to ~/.config/systemd/user \
        ($XDG_CONFIG_HOME), enables and starts them. Where there is no systemd user instance \
        (containers, shells without a login session), it says so and changes nothing; the agent \
        then keeps starting on demand as before.
        """
    )

    @Flag(name: .long, help: "Only print the two unit files (to install them by hand); change nothing.")
    var print = false

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let paths = StatePaths.resolve()
        let units: AgentUnits
        do {
            units = try AgentUnits(executable: AgentLauncher.currentExecutable(), paths: paths, environment: environment)
        } catch {
            throw AgentFailure.message("cannot describe the service: \(error)")
        }
        let directory = AgentUnits.directory(environment: environment)
        if print {
            Console.say("# \(directory)/\(AgentUnits.socketName)\n\(units.socketUnit)\n# \(directory)/\(AgentUnits.serviceName)\n\(units.serviceUnit)".dropLast(units.serviceUnit.hasSuffix("\n") ? 1 : 0).description)
            return
        }
        let user = UserServiceCommands.userName()
        let systemctl: String
        switch UserServiceManager.detect(environment: environment) {
        case .available(let path):
            systemctl = path
        case .unavailable(let reason):
            Console.complain("uploadmon: cannot install the agent as a service: \(reason).\n\(UserServiceManager.advice(user: user))\nNothing was changed.")
            throw ExitCode(UserServiceCommands.unavailableStatus)
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try units.socketUnit.write(toFile: directory + "/" + AgentUnits.socketName, atomically: true, encoding: .utf8)
            try units.serviceUnit.write(toFile: directory + "/" + AgentUnits.serviceName, atomically: true, encoding: .utf8)
        } catch {
            throw AgentFailure.message("cannot write the unit files in \(directory): \(error.localizedDescription)")
        }
        Console.say("Wrote \(AgentUnits.socketName) and \(AgentUnits.serviceName) in \(directory) (ExecStart: \(units.executable) agent run).")
        try UserServiceCommands.systemctl(systemctl, ["daemon-reload"])
        // An agent started on demand holds the lock and the socket: stop it, so the service's
        // agent can take over (its unfinished uploads continue there).
        if let stopped = try AgentStopCommand.stop(paths, client: "agent install") {
            Console.say("Stopped the agent that ran on demand (pid \(stopped)); the service's agent continues its uploads.")
        }
        try UserServiceCommands.systemctl(systemctl, ["enable", "--now", AgentUnits.socketName, AgentUnits.serviceName])
        Console.say("Enabled and started them: systemd listens on \(units.socketPath), starts the agent for the first client and at every login.")
        if units.executable.contains("/.build/") {
            Console.say("The service runs the binary of a build folder; after moving or cleaning it, run `uploadmon agent install` again.")
        }
        if UserServiceManager.lingers(user: user) {
            Console.say("Lingering is on for \(user): the agent starts at boot, without a login, and watched folders are scanned after a reboot.")
        } else {
            Console.say("Lingering is off for \(user): the agent starts when you log in and stops when your last session ends. `loginctl enable-linger \(user)` starts it at boot and keeps it running after you log out.")
        }
        Console.say("`uploadmon agent uninstall` removes the service; `systemctl --user status \(AgentUnits.serviceName)` shows it.")
    }
}

struct AgentUninstallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Stop and remove the agent's systemd user service; the agent starts on demand again."
    )

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let directory = AgentUnits.directory(environment: environment)
        let files = [AgentUnits.serviceName, AgentUnits.socketName].map { directory + "/" + $0 }
        let present = files.filter { FileManager.default.fileExists(atPath: $0) }
        guard !present.isEmpty else {
            Console.say("Nothing to remove: no uploadmon units in \(directory). The agent starts on demand.")
            return
        }
        let manager = UserServiceManager.detect(environment: environment)
        if case .available(let systemctl) = manager {
            // Stopping the service stops the agent cleanly: unfinished uploads stay in the journal.
            try UserServiceCommands.systemctl(systemctl, ["disable", "--now", AgentUnits.serviceName, AgentUnits.socketName])
            Console.say("Stopped and disabled \(AgentUnits.serviceName) and \(AgentUnits.socketName).")
        }
        for file in present {
            do {
                try FileManager.default.removeItem(atPath: file)
            } catch {
                throw AgentFailure.message("cannot remove \(file): \(error.localizedDescription)")
            }
        }
        Console.say("Removed \(present.map { ($0 as NSString).lastPathComponent }.joined(separator: " and ")) from \(directory).")
        if case .available(let systemctl) = manager {
            try UserServiceCommands.systemctl(systemctl, ["daemon-reload"])
        } else if case .unavailable(let reason) = manager {
            Console.say("No systemd user instance to tell (\(reason)); it reads the folder again when it next starts.")
        }
        Console.say("The agent starts on demand again; unfinished uploads continue at its next start.")
    }
}

enum UserServiceCommands {
    /// `agent install` where no user instance runs: not done, and not a usage error.
    static let unavailableStatus: Int32 = 3

    static func userName() -> String {
        if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? "\(getuid())"
    }

    /// Runs `systemctl --user …`; a failure carries what systemctl said.
    static func systemctl(_ path: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--user"] + arguments
        let errors = Pipe()
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw AgentFailure.message("cannot run \(path): \(error.localizedDescription)")
        }
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw AgentFailure.message("`systemctl --user \(arguments.joined(separator: " "))` failed (exit \(process.terminationStatus)): \(said.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }
}
