import ArgumentParser
import UploadCommands

/// `uploadmon retry`: failed background uploads sent again, as R does in the monitor.
struct RetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry", abstract: "Send failed or cancelled background uploads again (by id, or all with --failed).",
        discussion: "Ids as uploadmon status shows them (12 or #12). The agent is started when none runs.")
    @Argument(help: ArgumentHelp("Upload ids.", valueName: "id"))
    var ids: [String] = []
    @Flag(name: .long, help: "Every failed or cancelled upload in the journal.")
    var failed = false

    func run() throws {
        let (text, status) = try BackgroundControl().retry(ids, failed: failed)
        print(text)
        if status != 0 { throw ExitCode(status) }
    }
}

/// `uploadmon cancel`: background uploads stopped, as c does in the monitor.
struct CancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel background uploads that have not finished (by id, or all with --all).",
        discussion: "A cancelled upload stays in the journal (uploadmon retry sends it again); what a resuming server kept of it is removed.")
    @Argument(help: ArgumentHelp("Upload ids.", valueName: "id"))
    var ids: [String] = []
    @Flag(name: .long, help: "Every upload queued, sending or waiting to retry.")
    var all = false

    func run() throws {
        let (text, status) = try BackgroundControl().cancel(ids, all: all)
        print(text)
        if status != 0 { throw ExitCode(status) }
    }
}
