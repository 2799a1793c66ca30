import UploadReports
import ArgumentParser
import Foundation
import UploadAgent
import UploadCore
import UploadJournal

struct AgentConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
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

    func validate() throws {
        if between != nil && allDay { throw ValidationError("--between and --all-day contradict each other; give one") }
        if let limitRate, limitRate != "none", ByteSize.parse(limitRate) == nil {
            throw ValidationError("--limit-rate '\(limitRate)' is not a rate; give one like 500k or 2MB, or none for full speed")
        }
        do throws(RangeError) {
            if let between { _ = try DailyWindow(parsing: between) }
        } catch {
            throw ValidationError(error.message)
        }
    }

    var changes: Bool { concurrency != nil || limitRate != nil || between != nil || allDay }

    /// The stored settings with this command's changes.
    func changed(_ stored: AgentSettings) throws -> AgentSettings {
        var settings = stored
        if let concurrency { settings.concurrency = concurrency }
        if let limitRate {
            settings.rateLimit = limitRate == "none" ? nil : ByteSize.parse(limitRate)
            if settings.rateLimit == nil { settings.limitWindow = nil }
        }
        if let between { settings.limitWindow = try DailyWindow(parsing: between) }
        if allDay { settings.limitWindow = nil }
        if let refusal = settings.refusal { throw ValidationError(refusal) }
        return settings
    }

    func run() throws {
        let paths = StatePaths.resolve()
        var settings: AgentSettings
        do {
            settings = try AgentSettings.load(paths.agentSettings)
            if changes {
                settings = try changed(settings)
                try paths.prepare()
                try settings.save(paths.agentSettings)
            }
        } catch let error as ValidationError {
            throw error
        } catch {
            throw AgentFailure.message("\(error)")
        }
        Console.say("Agent settings (\(paths.agentSettings)):")
        Console.say("  \(settings.summary)")
        if let now = settings.nowText(at: Date()) { Console.say("  \(now)") }
        Console.say(Self.tellRunningAgent(paths, settings: settings, changed: changes))
    }

    /// Puts changed settings in force in a running agent, or says what the running one uses.
    static func tellRunningAgent(_ paths: StatePaths, settings: AgentSettings, changed: Bool) -> String {
        let client: AgentClient
        do {
            client = try AgentClient.connect(socketPath: paths.socket, client: "agent config", timeout: 5)
        } catch let error as SocketError where error.meansNoAgent {
            return changed ? "No agent is running; it starts with these." : "No agent is running; these apply when it starts."
        } catch {
            return "The running agent cannot take them (\(error)); they apply at its next start (`uploadmon agent stop` ends it)."
        }
        defer { client.close() }
        let pid = client.agentPID
        if changed {
            let reply = try? client.request(.configure(settings), timeout: 10)
            guard case .configured = reply else {
                return "The running agent (pid \(pid)) did not take them: " + (reply.map { AgentClient.text(of: $0, doing: "configure") } ?? "no answer")
                    + "; they apply at its next start."
            }
            return "In force in the running agent (pid \(pid)) now."
        }
        guard case .status(let status)? = try? client.request(.status, timeout: 5) else {
            return "The running agent (pid \(pid)) did not say what it uses."
        }
        return status.settings == settings
            ? "The running agent (pid \(pid)) uses these."
            : "The running agent (pid \(pid)) runs with: \(status.settings.summary) (given when it started)."
    }
}
