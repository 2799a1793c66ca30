import Foundation
import ArgumentParser
import UploadAgent
import UploadCommands

extension AgentCommand {
    struct Config: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show or set what the agent runs with: uploads at once and a total rate limit, optionally only at certain hours.",
            discussion: """
            Without options, shows the settings. With options, changes them, stores them next to the \
            journal, and puts them in force in a running agent at once (uploads already sending go \
            on; the rate applies from their next write). Every later start of the agent reads them, \
            whoever starts it: the monitor, `send --background`, or `agent run`.

            The rate limit is for all the agent's uploads together; an upload's own --limit-rate \
            still applies to it as well.

            Examples:
              uploadmon agent config
              uploadmon agent config --concurrency 4
              uploadmon agent config --limit-rate 2MB --between 09:00-18:00
                (at most 2 MB/s in working hours, full speed otherwise)
              uploadmon agent config --limit-rate 500k --between 22:00-06:00
                (a window that runs over midnight)
              uploadmon agent config --all-day        (the limit at every hour)
              uploadmon agent config --limit-rate none  (full speed again)
            """
        )

        @Option(name: .long, help: "How many uploads run at once, over all clients (1 to \(AgentSettings.maxConcurrency)).")
        var concurrency: Int?

        @Option(name: .long, help: ArgumentHelp("The total upload rate of the agent, like 500k or 2MB (per second); none for full speed.", valueName: "rate|none"))
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
