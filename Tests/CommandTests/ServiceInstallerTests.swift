import Foundation
import NIOConcurrencyHelpers
import Testing
import UploadAgent
import UploadCommands
import UploadJournal
import UploadTesting

/// A systemctl that records what it was asked, failing where told.
final class FakeSystemctl: ServiceControl, Sendable {
    let calls = NIOLockedValueBox<[[String]]>([])
    let failing: String?

    init(failing: String? = nil) { self.failing = failing }

    func run(_ arguments: [String]) throws {
        calls.withLockedValue { $0.append(arguments) }
        if let failing, arguments.first == failing {
            throw CommandFailure.failed("`systemctl --user \(arguments.joined(separator: " "))` failed (exit 1): no")
        }
    }
}

@Suite("agent install / uninstall, against a recorded systemctl")
struct ServiceInstallerTests {
    struct Setup {
        let folder: String
        let systemctl: FakeSystemctl
        let recorder = OutputRecorder()
        let stops = NIOLockedValueBox(0)
        var installer: ServiceInstaller

        init(available: Bool = true, agentRunning: Int32? = nil, lingers: Bool = false, systemctl: FakeSystemctl = FakeSystemctl()) {
            folder = TestFiles.makeTemporaryDirectory("installer")
            self.systemctl = systemctl
            let environment = ["XDG_CONFIG_HOME": folder + "/config", "XDG_RUNTIME_DIR": folder + "/run", "XDG_STATE_HOME": folder + "/state"]
            let paths = StatePaths.resolve(environment: environment)
            let output = recorder.output
            installer = ServiceInstaller(
                environment: environment, paths: paths, executable: "/usr/local/bin/uploadmon", user: "alice",
                say: output.say, complain: output.complain,
                manager: { _ in available ? .available(systemctl: "/usr/bin/systemctl") : .unavailable(reason: "no systemd here") },
                control: { [systemctl] path in
                    #expect(path == "/usr/bin/systemctl")
                    return systemctl
                },
                stopAgent: { [stops] _ in
                    stops.withLockedValue { $0 += 1 }
                    return agentRunning
                },
                lingers: { _ in lingers })
        }

        var unitFolder: String { folder + "/config/systemd/user" }
        func unit(_ name: String) -> String? { try? String(contentsOfFile: unitFolder + "/" + name, encoding: .utf8) }
    }

    @Test("install writes both units, reloads, stops an on-demand agent, then enables and starts them")
    func install() throws {
        let setup = Setup(agentRunning: 4242)
        defer { try? FileManager.default.removeItem(atPath: setup.folder) }
        try setup.installer.install()
        #expect(
            setup.systemctl.calls.withLockedValue { $0 } == [
                ["daemon-reload"], ["enable", "--now", AgentUnits.socketName, AgentUnits.serviceName],
            ])
        #expect(setup.stops.withLockedValue { $0 } == 1)
        let service = try #require(setup.unit(AgentUnits.serviceName))
        #expect(service.contains("ExecStart=\"/usr/local/bin/uploadmon\" agent run"))
        #expect(service.contains("XDG_STATE_HOME=\(setup.folder)/state"))
        #expect(try #require(setup.unit(AgentUnits.socketName)).contains("ListenStream=\(setup.folder)/run/uploadmon/agent.sock"))
        let said = setup.recorder.said().joined(separator: "\n")
        #expect(said.contains("Stopped the agent that ran on demand (pid 4242)"))
        #expect(said.contains("Lingering is off for alice"))
        #expect(!said.contains("build folder") && !setup.recorder.said("err").joined().contains("build folder"))
    }

    @Test("where no user instance runs, install says why and how, changes nothing, and exits 3")
    func installUnavailable() throws {
        let setup = Setup(available: false)
        defer { try? FileManager.default.removeItem(atPath: setup.folder) }
        #expect(throws: CommandFailure.said(status: ServiceInstaller.unavailableStatus)) { try setup.installer.install() }
        #expect(setup.systemctl.calls.withLockedValue { $0 }.isEmpty)
        #expect(setup.stops.withLockedValue { $0 } == 0)
        #expect(!FileManager.default.fileExists(atPath: setup.unitFolder))
        let complaint = setup.recorder.said("err").joined()
        #expect(complaint.contains("no systemd here"))
        #expect(complaint.contains("loginctl enable-linger alice"))
        #expect(complaint.contains("Nothing was changed."))
    }

    @Test("a systemctl that fails stops the install with its words, before enabling")
    func installSystemctlFails() throws {
        let setup = Setup(systemctl: FakeSystemctl(failing: "daemon-reload"))
        defer { try? FileManager.default.removeItem(atPath: setup.folder) }
        #expect(throws: CommandFailure.self) { try setup.installer.install() }
        #expect(setup.systemctl.calls.withLockedValue { $0 } == [["daemon-reload"]])
        #expect(setup.stops.withLockedValue { $0 } == 0)
    }

    @Test("lingering and a build folder's binary are said")
    func installWording() throws {
        var setup = Setup(lingers: true)
        setup.installer.executable = "/home/alice/uploadmon/.build/debug/uploadmon"
        defer { try? FileManager.default.removeItem(atPath: setup.folder) }
        try setup.installer.install()
        let said = setup.recorder.said().joined(separator: "\n")
        #expect(said.contains("Lingering is on for alice"))
        #expect(!said.contains("Stopped the agent"))
        // Warned before anything is written, on standard error, with what to do instead.
        let warned = setup.recorder.said("err").joined(separator: "\n")
        #expect(warned.contains("/home/alice/uploadmon/.build/debug/uploadmon is in a build folder"), "\(warned)")
        #expect(warned.contains("Install the binary first"))
        setup.recorder.clear()
        try setup.installer.printUnits()
        #expect(setup.recorder.said("err").joined().contains("is in a build folder"), "--print warns too")
        #expect(ServiceInstaller.buildFolderWarning("/home/alice/.local/bin/uploadmon") == nil)
        #expect(ServiceInstaller.buildFolderWarning("/home/alice/my.build/uploadmon") == nil)
    }

    @Test("uninstall disables, removes both files, reloads; with nothing installed it touches nothing")
    func uninstall() throws {
        let setup = Setup()
        defer { try? FileManager.default.removeItem(atPath: setup.folder) }
        try setup.installer.uninstall()
        #expect(setup.systemctl.calls.withLockedValue { $0 }.isEmpty)
        #expect(setup.recorder.said().first?.hasPrefix("Nothing to remove") == true)

        try setup.installer.install()
        setup.systemctl.calls.withLockedValue { $0 = [] }
        try setup.installer.uninstall()
        #expect(
            setup.systemctl.calls.withLockedValue { $0 } == [
                ["disable", "--now", AgentUnits.serviceName, AgentUnits.socketName], ["daemon-reload"],
            ])
        #expect(setup.unit(AgentUnits.serviceName) == nil)
        #expect(setup.unit(AgentUnits.socketName) == nil)
    }

    @Test("uninstall without a user instance still removes the files and says systemd was not told")
    func uninstallUnavailable() throws {
        let setup = Setup()
        defer { try? FileManager.default.removeItem(atPath: setup.folder) }
        try setup.installer.install()
        var offline = setup.installer
        offline.manager = { _ in .unavailable(reason: "no systemd here") }
        setup.systemctl.calls.withLockedValue { $0 = [] }
        try offline.uninstall()
        #expect(setup.systemctl.calls.withLockedValue { $0 }.isEmpty)
        #expect(setup.unit(AgentUnits.serviceName) == nil)
        #expect(setup.recorder.said().contains { $0.hasPrefix("No systemd user instance to tell (no systemd here)") })
    }

    @Test("--print shows both units and writes nothing")
    func printOnly() throws {
        let setup = Setup()
        defer { try? FileManager.default.removeItem(atPath: setup.folder) }
        try setup.installer.printUnits()
        let printed = setup.recorder.said().joined()
        #expect(printed.contains("# \(setup.unitFolder)/\(AgentUnits.socketName)\n"))
        #expect(printed.contains("# \(setup.unitFolder)/\(AgentUnits.serviceName)\n"))
        #expect(!FileManager.default.fileExists(atPath: setup.unitFolder))
        #expect(setup.systemctl.calls.withLockedValue { $0 }.isEmpty)
    }
}
