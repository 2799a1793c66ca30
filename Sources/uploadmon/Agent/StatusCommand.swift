import Foundation
import ArgumentParser
import UploadCommands

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the background uploads from the journal, and whether the agent runs.",
        discussion: CommandHelp.status
    )

    @Flag(name: .long, help: "Print one JSON document: the agent and the uploads.")
    var json = false

    @Option(name: .long, help: "Show at most this many of the most recent uploads.")
    var limit = 50

    func validate() throws {
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        try StatusReport().run(json: json, limit: limit, now: Date())
    }
}
