import ArgumentParser
import Foundation
import Monitor
import UploadClient
import UploadCore

extension NotifyMode: ExpressibleByArgument {}

struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Browse for images, queue uploads and watch them go (the default command).",
        discussion: """
        Opens the monitor in DIR (default: the current directory). Mark images with Space, queue
        them with u, watch the bars, and read the server's answer in the response panel: green for
        2xx, red for anything else. Press ? inside for every key.

        Examples:
          uploadmon ~/Pictures --to http://127.0.0.1:3000/photo
          uploadmon . --to https://example.com/upload --field file -H 'Authorization: Bearer …'
          uploadmon --to http://host/photo --notify osc     (desktop notifications through SSH)
        """
    )

    @Argument(help: ArgumentHelp("The directory to start in.", valueName: "dir"))
    var directory: String?

    @OptionGroup var upload: UploadOptions

    @Option(help: "How to tell the terminal an upload finished: bell, osc (desktop notification) or none.")
    var notify: NotifyMode = .bell

    func validate() throws {
        if let directory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
                throw ValidationError("'\(directory)' does not exist")
            }
            guard isDirectory.boolValue else { throw ValidationError("'\(directory)' is not a directory") }
        }
    }

    func run() async throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw ValidationError("the monitor needs a terminal; use 'uploadmon send' in scripts and pipes")
        }
        try await MonitorSession.run(directory: directory ?? FileManager.default.currentDirectoryPath, upload: upload, notify: notify)
    }
}

/// Wires the upload queue to the monitor's run loop; shared by the monitor command and the demo.
enum MonitorSession {
    @discardableResult
    static func run(directory: String, upload: UploadOptions, notify: NotifyMode) async throws -> MonitorState {
        let fields = try upload.parsedFormFields()
        let headers = try upload.parsedHeaders()
        let transport = try upload.makeTransport()
        let queue = UploadQueue(transport: transport, concurrency: upload.concurrency, retryPolicy: upload.retryPolicy)
        let environment = ProcessInfo.processInfo.environment
        let colors = environment["NO_COLOR"].map(\.isEmpty) ?? true
        let settings = MonitorRunLoop.Settings(notify: notify, colors: colors, environment: environment)
        let url = upload.to, field = upload.field, anyFile = upload.anyFile
        let loop = MonitorRunLoop(queue: queue, settings: settings) { item throws(UploadInputError) in
            let request = UploadRequest(
                source: .file(path: item.path), url: url, field: field, uploadName: item.uploadName,
                formFields: fields, headers: headers, allowAnyFile: anyFile
            )
            return (request, try UploadPreflight.check(request))
        }
        let home = environment["HOME"] ?? "/"
        let start = URL(fileURLWithPath: directory).standardizedFileURL.path
        let final = await loop.run(MonitorState(width: 80, height: 24, endpoint: url, directory: start, home: home))
        for id in final.queue.rows where final.queue.state(id)?.outcome == nil {
            await queue.cancel(id)
        }
        try await transport.shutdown()
        return final
    }
}
