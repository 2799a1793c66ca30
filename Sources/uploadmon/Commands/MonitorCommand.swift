import UploadReports
import ArgumentParser
import Foundation
import Monitor
import MonitorRuntime
import NCursesTerminal
import TerminalCanvas
import UploadClient
import UploadCore
import UploadAgent
import UploadJournal

extension NotifyMode: ExpressibleByArgument {}
extension GraphicsChoice: ExpressibleByArgument {}

struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Browse for images, queue uploads and watch them go (the default command).",
        discussion: """
        Opens the monitor in DIR (default: the current directory). Mark images with Space, queue \
        them with u, watch the bars, and read the server's answer in the response panel: green for \
        2xx, red for anything else. Press ? inside for every key.

        Examples:
          uploadmon ~/Pictures --to http://127.0.0.1:3000/photo
          uploadmon . --to https://example.com/upload --field file \\
              -H 'Authorization: Bearer …'
          uploadmon --to http://host/photo --notify osc
            (desktop notifications, through SSH too)
        """
    )

    @Argument(help: ArgumentHelp("The directory to start in.", valueName: "dir"))
    var directory: String?

    @OptionGroup var upload: UploadOptions

    @Option(help: "How to tell the terminal an upload finished: bell, osc (desktop notification) or none.")
    var notify: NotifyMode = .bell

    @Option(help: ArgumentHelp(
        "How previews reach the screen: auto, kitty, sixel or cells.",
        discussion: "auto asks the terminal (not inside tmux or screen) and uses the kitty graphics protocol or sixel where it answers that it has them, else half-block text cells."))
    var graphics: GraphicsChoice = .auto

    @Flag(name: .long, help: "Run uploads inside the monitor instead of the background agent; they stop when it quits.")
    var noAgent = false

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
        try await MonitorSession.run(
            directory: directory ?? FileManager.default.currentDirectoryPath, upload: upload, notify: notify,
            graphics: graphics, useAgent: !noAgent)
    }
}

/// Wires the upload queue to the monitor's run loop; shared by the monitor command and the demo.
enum MonitorSession {
    @discardableResult
    /// `remembersSent`: what the monitor's own uploads sent goes into the journal's record of
    /// what was sent by content (not for the demo's throwaway receiver).
    static func run(
        directory: String, upload: UploadOptions, notify: NotifyMode, graphics: GraphicsChoice, useAgent: Bool = false, remembersSent: Bool = true
    ) async throws -> MonitorState {
        let uploads = MonitorUploads(
            url: upload.endpoint, field: upload.field, formFields: try upload.parsedFormFields(), headers: try upload.parsedHeaders(),
            allowAnyFile: upload.anyFile)
        let backend: any MonitorBackend
        if useAgent {
            let paths = StatePaths.resolve()
            // Before the screen changes, so a failure reads as plain text.
            let connection = try BackgroundSend.connectOrStart(paths: paths, client: "monitor")
            backend = AgentBackend(client: connection.client, paths: paths, settings: upload.transportSettings, uploads: uploads)
        } else {
            let transport = try upload.makeTransport()
            let queue = UploadQueue(transport: transport, concurrency: upload.concurrency, retryPolicy: upload.retryPolicy)
            var other = upload.transportSettings
            other.stripLocation.toggle()
            backend = LocalBackend(queue: queue, transport: transport, uploads: uploads, strips: upload.stripLocation,
                                   makeOther: { [other] in try HTTPUploadTransport(settings: other) })
        }
        let environment = ProcessInfo.processInfo.environment
        let colors = environment["NO_COLOR"].map(\.isEmpty) ?? true
        let glyphs = MonitorProgram.speaksUTF8() ? Glyphs.unicode : .ascii
        var settings = MonitorProgram.Settings(notify: notify, colors: colors, glyphs: glyphs, environment: environment)
        settings.stripLocation = upload.stripLocation
        let endpoint = upload.endpoint
        if remembersSent {
            let ledger = SentLedger.open()
            settings.sentContents = { (try? ledger?.journal.sentContents(to: endpoint)) ?? [] }
            settings.contentCache = ledger?.journal
        }
        let program = MonitorProgram(backend: backend, settings: settings) { NCursesTerminal(wantColors: $0, graphics: graphics, environment: environment) }
        let home = environment["HOME"] ?? "/"
        let start = URL(fileURLWithPath: directory).standardizedFileURL.path
        var initial = MonitorState(width: 80, height: 24, endpoint: RedactedURL.display(upload.to), directory: start, home: home)
        initial.uploadsOutliveMonitor = useAgent
        initial.stripLocation = upload.stripLocation
        let final = await program.run(initial)
        await backend.finish(final)
        // The agent remembers its own uploads; the monitor's own are remembered here.
        if remembersSent, !useAgent { SentLedger.open()?.remember(final.queue.tracker, endpoint: endpoint) }
        if useAgent, final.queue.activeCount > 0 {
            Console.say("\(final.queue.activeCount) upload(s) continue in the background. Follow them with `uploadmon status`, or open the monitor again.")
        }
        return final
    }
}

/// Curses is the monitor's real terminal: keys on standard input, the size from the kernel.
extension NCursesTerminal: MonitorTerminal {
    public var inputDescriptor: Int32 { STDIN_FILENO }
    public func measure() -> (width: Int, height: Int)? { Self.windowSize() }
}
