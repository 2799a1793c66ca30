import Foundation
import ArgumentParser
import UploadAgent
import UploadCommands

extension AgentCommand {
    struct Config: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or set what the agent runs with: uploads at once and a total rate limit, optionally only at certain hours.",
            discussion: CommandHelp.agentConfig
        )

        @Option(name: .long, help: "How many uploads run at once, over all clients (1 to \(AgentSettings.maxConcurrency)).")
        var concurrency: Int?

        @Option(
            name: .long, help: ArgumentHelp("The total upload rate of the agent, like 500k or 2MB (per second); none for full speed.", valueName: "rate|none"))
        var limitRate: String?

        @Option(name: .long, help: ArgumentHelp("Apply the rate limit only from HH:MM to HH:MM local time, full speed otherwise.", valueName: "HH:MM-HH:MM"))
        var between: String?

        @Flag(name: .long, help: "Apply the rate limit at every hour (drops --between).")
        var allDay = false

        var change: AgentSettingsChange {
            AgentSettingsChange(concurrency: concurrency, limitRate: limitRate, between: between, allDay: allDay)
        }

        func validate() throws {
            if let refusal = change.refusal { throw ValidationError(refusal) }
        }

        func run() throws {
            try change.run(now: Date())
        }
    }
}
