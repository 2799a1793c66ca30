import ArgumentParser
import UploadAgent
import UploadJournal
import UploadCommands
import UploadCore
import UploadReports

struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "The background transfer agent: keeps uploading when the monitor exits or the SSH session drops.",
        discussion: CommandHelp.agent,
        subcommands: [Run.self, Stop.self, Config.self, Install.self, Uninstall.self],
        defaultSubcommand: Run.self
    )
}

extension AgentCommand {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the agent in the foreground (Ctrl-C stops it; unfinished uploads continue at its next start)."
        )

        @Option(name: .long, help: ArgumentHelp("Exit after this long with no uploads and no clients (e.g. 90s, 10m, 1h; 0 = never).", valueName: "duration"))
        var idleExit = "10m"

        @Option(
            name: .long, help: "How many uploads run at once, over all clients, for this run only (`uploadmon agent config --concurrency N` sets it for good).")
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
            try await AgentHost.run(idleExit: DurationText.parse(idleExit) ?? 600, concurrency: concurrency)
        }
    }

    struct Stop: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop the running agent. Unfinished uploads stay in the journal and continue when it starts again."
        )

        func run() throws {
            guard let pid = try AgentHost.stop(StatePaths.resolve(), client: "agent stop") else {
                Console.say("No agent is running.")
                return
            }
            Console.say("Stopped the agent (pid \(pid)).")
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the agent as a systemd user service: started by its socket for the first client, at login, and after a reboot with lingering.",
            discussion: CommandHelp.agent2
        )

        @Flag(name: .long, help: "Only print the two unit files (to install them by hand); change nothing.")
        var print = false

        func run() throws {
            if print { try ServiceInstaller().printUnits() } else { try ServiceInstaller().install() }
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop and remove the agent's systemd user service; the agent starts on demand again."
        )

        func run() throws {
            try ServiceInstaller().uninstall()
        }
    }
}
