import ArgumentParser
import Foundation
import Glibc
import TerminalCanvas
import UploadAgent
import UploadCore
import UploadReports
import UploadJournal

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
        do throws(RangeError) {
            _ = try DurationRule.watchInterval.parse(every, option: "--every")
        } catch {
            throw ValidationError(error.message)
        }
        if upload.concurrency != UploadOptions.defaultConcurrency { throw ValidationError(UploadOptions.agentConcurrencyNote) }
    }

    func run() throws {
        let directory = try Self.folderPath(folder)
        let template: EnqueueItem
        do throws(UploadInputError) {
            let request = UploadRequest(
                source: .file(path: directory), url: upload.endpoint, field: upload.field, uploadName: "-",
                formFields: try upload.parsedFormFields(), headers: try upload.parsedHeaders(), allowAnyFile: upload.anyFile)
            template = EnqueueItem(request: request, settings: upload.transportSettings, origin: "watch")
        } catch {
            throw ValidationError(error.description)
        }
        let seconds = DurationText.parse(every) ?? 300
        let paths = StatePaths.resolve()
        let connection = try BackgroundSend.connectOrStart(paths: paths, client: "watch")
        defer { connection.client.close() }
        let reply = try connection.client.request(.watch(directory: directory, template: template, everySeconds: seconds, newOnly: newOnly, skipSent: skipSent), timeout: 60)
        guard case .job(let job, let created) = reply else {
            throw AgentFailure.message(AgentClient.text(of: reply, doing: "watch \(directory)"))
        }
        if json {
            Console.sayJSON(String(decoding: try StatusCommand.prettyEncoder.encode(job), as: UTF8.self))
            return
        }
        let interval = DurationText.format(seconds)
        Console.say("\(created ? "Watching" : "Updated the watch of") \(directory) every \(interval) \(job.detail) (job \(job.id)).")
        Console.say(newOnly
            ? "Files already in the folder are left alone (\(job.filesSkipped) passed over); new ones are queued once they stay the same over two looks (\(interval) apart)."
            : "Image files are queued once they stay the same over two looks, \(interval) apart; the first look was just now.")
        let how = connection.started ? "started the agent (pid \(connection.client.agentPID))" : "agent pid \(connection.client.agentPID)"
        Console.say("The agent runs the watch (\(how)) and does not exit while a folder is watched. `uploadmon jobs` lists jobs; `uploadmon jobs remove \(job.id)` stops watching.")
    }

    /// The folder as an absolute path with symbolic links resolved, so one folder is one job.
    static func folderPath(_ folder: String) throws -> String {
        let absolute = URL(fileURLWithPath: folder).standardizedFileURL.path
        guard let resolved = realpath(absolute, nil) else {
            throw ValidationError("cannot watch \(folder): \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        var isDirectory: ObjCBool = false
        let path = String(cString: resolved)
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("cannot watch \(folder): it is not a folder")
        }
        return path
    }
}
