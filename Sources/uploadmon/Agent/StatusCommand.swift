import ArgumentParser
import Foundation
import UploadAgent
import UploadCore
import UploadReports
import UploadJournal

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the background uploads from the journal, and whether the agent runs.",
        discussion: """
        Reads the journal directly, so it works whether or not the agent runs. Header values are \
        never shown.

        Examples:
          uploadmon status
          uploadmon status --json | jq '.uploads[] | select(.state == "failed")'
        """
    )

    @Flag(name: .long, help: "Print one JSON document: the agent and the uploads.")
    var json = false

    @Option(name: .long, help: "Show at most this many of the most recent uploads.")
    var limit = 50

    func validate() throws {
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let paths = StatePaths.resolve()
        let agent = Self.agentStatus(paths)
        var uploads: [UploadRecord] = []
        if FileManager.default.fileExists(atPath: paths.journal) {
            do {
                uploads = try Journal(path: paths.journal).snapshots(limit: limit)
            } catch {
                throw AgentFailure.message("cannot read the journal \(paths.journal): \(error)")
            }
        }
        // What the agent runs with, or what it will start with (a broken file says so here too).
        let settings: AgentSettings
        if let agent {
            settings = agent.settings
        } else {
            do { settings = try AgentSettings.load(paths.agentSettings) } catch { throw AgentFailure.message("\(error)") }
        }
        if json {
            let document = StatusDocument(agent: agent, settings: settings, journal: paths.journal, uploads: uploads)
            Console.sayJSON(String(decoding: try Self.prettyEncoder.encode(document), as: UTF8.self))
            return
        }
        Console.say(StatusTable.agentLine(agent, unfinished: uploads.filter { !$0.state.isFinished }.count))
        Console.say(StatusTable.settingsLine(settings, running: agent != nil, now: Date()))
        guard !uploads.isEmpty else {
            Console.say("No background uploads yet. Queue some with `uploadmon send FILE… --to URL --background`.")
            return
        }
        Console.say(StatusTable.render(uploads, now: Date()))
    }

    static func agentStatus(_ paths: StatePaths) -> AgentStatus? {
        guard let client = try? AgentClient.connect(socketPath: paths.socket, client: "status", timeout: 5) else { return nil }
        defer { client.close() }
        guard case .status(let status) = try? client.request(.status, timeout: 5) else { return nil }
        return status
    }

    static let prettyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
}


struct StatusDocument: Encodable {
    let agent: AgentStatus?
    /// In force (the agent runs) or read at its next start.
    let settings: AgentSettings
    let journal: String
    /// Each upload as its record's JSON form (the same the agent sends its clients).
    let uploads: [UploadRecord]
}
