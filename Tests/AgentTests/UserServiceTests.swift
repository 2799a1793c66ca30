import Foundation
import Testing
import UploadAgent
import UploadJournal

/// The systemd user units `agent install` writes, and when it refuses.
@Suite struct UserServiceTests {
    let paths = StatePaths(stateDirectory: "/home/ann/.local/state/uploadmon", runtimeDirectory: "/run/user/1000/uploadmon")

    @Test func theSocketUnitListensWhereClientsLookAndTheServiceRunsTheAgent() throws {
        let units = try AgentUnits(
            executable: "/usr/local/bin/uploadmon", paths: paths, environment: ["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/ann"])
        let socket = units.socketUnit
        #expect(socket.contains("\nListenStream=/run/user/1000/uploadmon/agent.sock\n"))
        #expect(socket.contains("\nSocketMode=0600\n"))
        #expect(socket.contains("\nAccept=no\n"))
        #expect(socket.contains("[Install]\nWantedBy=sockets.target\n"))
        let service = units.serviceUnit
        #expect(service.contains("\nExecStart=\"/usr/local/bin/uploadmon\" agent run\n"))
        #expect(service.contains("\nRequires=uploadmon-agent.socket\nAfter=uploadmon-agent.socket\n"))
        #expect(service.contains("\nEnvironment=\"XDG_RUNTIME_DIR=/run/user/1000\"\n"))
        #expect(!service.contains("XDG_STATE_HOME"), "only what this login set is pinned")
        #expect(service.contains("\nRestart=on-failure\n"))
        #expect(service.contains("\nRestartPreventExitStatus=\(AgentLauncher.alreadyRunningStatus)\n"))
        #expect(service.contains("[Install]\nWantedBy=default.target\n"))
        // Every line is a section, a comment, blank, or Key=value: what systemd can parse.
        for line in (socket + service).split(separator: "\n") {
            #expect(line.hasPrefix("[") || line.hasPrefix("#") || line.contains("="), "\(line)")
        }
    }

    @Test func pathsWithSpacesPercentAndDollarSurviveSystemdsQuoting() throws {
        let odd = StatePaths(stateDirectory: "/home/ann/state", runtimeDirectory: "/tmp/run 100%/uploadmon")
        let units = try AgentUnits(
            executable: "/opt/my tools/$HOME/uploadmon", paths: odd,
            environment: ["XDG_STATE_HOME": "/data/50% \"off\"", "XDG_RUNTIME_DIR": "relative/ignored"])
        #expect(units.serviceUnit.contains(#"ExecStart="/opt/my tools/$$HOME/uploadmon" agent run"#))
        #expect(units.serviceUnit.contains(#"Environment="XDG_STATE_HOME=/data/50%% \"off\"""#))
        #expect(!units.serviceUnit.contains("relative/ignored"))
        #expect(units.socketUnit.contains("ListenStream=/tmp/run 100%%/uploadmon/agent.sock\n"))
    }

    @Test func pathsSystemdCannotTakeAreRefused() {
        #expect(throws: UnitError.self) { try AgentUnits(executable: "uploadmon", paths: paths, environment: [:]) }
        #expect(throws: UnitError.self) { try AgentUnits(executable: "/bin/up\nloadmon", paths: paths, environment: [:]) }
        // A state folder with a line break was once dropped silently: the service then kept its
        // journal elsewhere than the shell that installed it.
        #expect { try AgentUnits(executable: "/bin/uploadmon", paths: paths, environment: ["XDG_STATE_HOME": "/data/a\nb"]) } throws: { error in
            "\(error)".contains("XDG_STATE_HOME") && "\(error)".contains("line break")
        }
    }

    /// `Environment=` expands no variables (systemd.exec): `$$` there stays two dollars, so a
    /// folder with a `$` in its name must be written with one.
    @Test func aDollarInAnEnvironmentValueIsWrittenOnce() throws {
        let units = try AgentUnits(executable: "/opt/$bin/uploadmon", paths: paths, environment: ["XDG_STATE_HOME": "/data/$USER-state"])
        #expect(units.serviceUnit.contains(#"Environment="XDG_STATE_HOME=/data/$USER-state""#), "\(units.serviceUnit)")
        #expect(units.serviceUnit.contains(#"ExecStart="/opt/$$bin/uploadmon" agent run"#))
    }

    @Test func unitsGoToTheUsersConfigFolder() {
        #expect(AgentUnits.directory(environment: ["HOME": "/home/ann"]) == "/home/ann/.config/systemd/user")
        #expect(AgentUnits.directory(environment: ["HOME": "/home/ann", "XDG_CONFIG_HOME": "/cfg"]) == "/cfg/systemd/user")
    }

    @Test func withoutAUserInstanceItSaysWhyAndHowToGetOne() {
        let none = UserServiceManager.detect(environment: ["PATH": "/usr/bin"], isExecutable: { _ in false }, exists: { _ in true })
        #expect(none == .unavailable(reason: "systemctl is not installed here (no systemd, as in most containers)"))
        let noRuntime = UserServiceManager.detect(environment: ["PATH": "/usr/bin"], isExecutable: { $0 == "/usr/bin/systemctl" }, exists: { _ in true })
        guard case .unavailable(let reason) = noRuntime else {
            Issue.record("\(noRuntime)")
            return
        }
        #expect(reason.contains("XDG_RUNTIME_DIR is not set"))
        let notRunning = UserServiceManager.detect(
            environment: ["PATH": "/bin:/usr/bin", "XDG_RUNTIME_DIR": "/run/user/1000"], isExecutable: { $0 == "/usr/bin/systemctl" }, exists: { _ in false })
        #expect(notRunning == .unavailable(reason: "no systemd user instance runs for this user (/run/user/1000/systemd/private is missing)"))
        let running = UserServiceManager.detect(
            environment: ["PATH": "/bin:/usr/bin", "XDG_RUNTIME_DIR": "/run/user/1000"], isExecutable: { $0 == "/usr/bin/systemctl" },
            exists: { $0 == "/run/user/1000/systemd/private" })
        #expect(running == .available(systemctl: "/usr/bin/systemctl"))
        #expect(UserServiceManager.advice(user: "ann").contains("loginctl enable-linger ann"))
        #expect(UserServiceManager.lingers(user: "ann", exists: { $0 == "/var/lib/systemd/linger/ann" }))
    }
}
