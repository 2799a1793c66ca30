import ArgumentParser
import UploadAgent
import UploadCommands
import UploadCore

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Have the background agent upload the new image files of a folder, checking it every few minutes.",
        discussion: CommandHelp.watch
    )

    @Argument(help: ArgumentHelp("The folder to watch.", valueName: "folder"))
    var folder: String

    @Option(name: .long, help: ArgumentHelp("How often to look at the folder, at most (e.g. 30s, 5m, 1h; at least 1s).", valueName: "duration"))
    var every = "5m"

    @Flag(name: .long, help: "Leave the files already in the folder alone; send only files that arrive from now on.")
    var newOnly = false

    @Flag(
        name: .long,
        help:
            "Pass over files whose content was already sent to this endpoint (by a send or the agent, under any name or path): matched by the SHA-256 of the bytes as they would be sent."
    )
    var skipSent = false

    @Flag(name: .long, help: "Print the job as JSON.")
    var json = false

    @OptionGroup var upload: UploadOptions

    func validate() throws {
        try upload.refuseList("watch")
        do throws(RangeError) {
            _ = try DurationRule.watchInterval.parse(every, option: "--every")
        } catch {
            throw ValidationError(error.message)
        }
        if upload.concurrency != UploadOptions.defaultConcurrency { throw ValidationError(UploadOptions.agentConcurrencyNote) }
    }

    func run() throws {
        let directory = try WatchSetup.folderPath(folder)
        let template: EnqueueItem
        do throws(UploadInputError) {
            let request = UploadRequest(
                source: .file(path: directory), url: upload.endpoint, field: upload.field, uploadName: "-",
                formFields: try upload.parsedFormFields(), headers: try upload.parsedHeaders(), allowAnyFile: upload.anyFile)
            template = EnqueueItem(request: request, settings: upload.transportSettings, origin: "watch")
        } catch {
            throw ValidationError(error.description)
        }
        try WatchSetup(template: template, everySeconds: DurationText.parse(every) ?? 300, newOnly: newOnly, skipSent: skipSent, json: json).run()
    }
}
