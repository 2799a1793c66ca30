import ArgumentParser
import UploadAgent
import UploadCommands
import UploadCore

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Have the background agent upload the new image files of a folder, checking it every few minutes.",
        discussion: """
        The agent (started when none runs) looks at the folder every --every, not in its subfolders. \
        A file is queued once its size and modification time stayed the same over two looks in a \
        row, so a file still being copied or downloaded is never sent half-written; hidden files \
        and names like *.part, *.crdownload, *.tmp or *~ are never looked at. Each file is queued \
        once: a file that changes after it was queued is not sent again (a file that leaves the \
        folder is forgotten, so a new one under the same name is new). Without --new-only, the \
        files already in the folder are sent too.

        While a folder is watched the agent does not exit when idle. Watching the same folder again \
        updates its settings. List jobs with `uploadmon jobs`, look now with `uploadmon jobs run ID`, \
        stop watching with `uploadmon jobs remove ID` (or the folder).

        Examples:
          uploadmon watch ~/Pictures/incoming --to http://127.0.0.1:3000/photo
          uploadmon watch /srv/camera --to https://host/photo --every 30s --new-only \\
              -H 'Authorization: Bearer …'
        """
    )

    @Argument(help: ArgumentHelp("The folder to watch.", valueName: "folder"))
    var folder: String

    @Option(name: .long, help: ArgumentHelp("How often to look at the folder, at most (e.g. 30s, 5m, 1h; at least 1s).", valueName: "duration"))
    var every = "5m"

    @Flag(name: .long, help: "Leave the files already in the folder alone; send only files that arrive from now on.")
    var newOnly = false

    @Flag(name: .long, help: "Pass over files whose content was already sent to this endpoint (by a send or the agent, under any name or path): matched by the SHA-256 of the bytes as they would be sent.")
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
