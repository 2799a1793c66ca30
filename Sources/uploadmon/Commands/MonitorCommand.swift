import ArgumentParser
import Foundation
import Monitor
import MonitorRuntime
import NCursesTerminal
import UploadCommands
import UploadCore
import UploadJournal

extension NotifyMode: ExpressibleByArgument {}
extension GraphicsChoice: ExpressibleByArgument {}

struct MonitorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Browse for images, queue uploads and watch them go (the default command).",
        discussion: CommandHelp.monitor
    )

    @Argument(help: ArgumentHelp("The directory to start in.", valueName: "dir"))
    var directory: String?

    @OptionGroup var upload: UploadOptions

    @Option(help: "How to tell the terminal an upload finished: bell, osc (desktop notification) or none.")
    var notify: NotifyMode = .bell

    @Option(
        help: ArgumentHelp(
            "How previews reach the screen: auto, kitty, sixel or cells.",
            discussion:
                "auto asks the terminal (inside tmux: tmux, and the terminal around it where allow-passthrough is on; never inside screen) and uses the kitty graphics protocol or sixel where it answers that it has them, else half-block text cells. Inside tmux, kitty pictures go as Unicode placeholders (kitty 0.28+, Ghostty)."
        ))
    var graphics: GraphicsChoice = .auto

    @Flag(name: .long, help: "Run uploads inside the monitor instead of the background agent; they stop when it quits.")
    var noAgent = false

    @Flag(name: .long, help: "Leave the mouse to the terminal (its own text selection) instead of clicks and the wheel selecting and scrolling.")
    var noMouse = false

    /// Set when `--to` named a saved destination (`DestinationArguments`).
    @Option(name: .customLong("destination-name"), help: .hidden)
    var destinationName: String?

    func validate() throws {
        try upload.refuseList("the monitor")
        if let refusal = directory.flatMap(MonitorSession.refusal(directory:)) { throw ValidationError(refusal) }
    }

    func run() async throws {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
            throw ValidationError("the monitor needs a terminal; use 'uploadmon send' in scripts and pipes")
        }
        NCursesTerminal.quietBacktraces()
        let uploads = MonitorUploads(
            url: upload.endpoint, field: upload.field, formFields: try upload.parsedFormFields(), headers: try upload.parsedHeaders(),
            allowAnyFile: upload.anyFile)
        var session = MonitorSession(
            directory: directory ?? FileManager.default.currentDirectoryPath, uploads: uploads, shownEndpoint: RedactedURL.display(upload.to),
            settings: upload.transportSettings, concurrency: upload.concurrency, notify: notify, useAgent: !noAgent)
        (session.destinations, session.destinationName) = (Self.savedChoices(), destinationName)
        try await session.run(makeTerminal: NCursesTerminal.maker(graphics: graphics, mouse: !noMouse))
    }

    /// The saved destinations, each read as its options on a command line would be (`D`
    /// switches among them); one that cannot be used says why. None when the file cannot be read.
    static func savedChoices() -> [String: MonitorSession.SavedChoice] {
        guard let file = try? DestinationFile.load(environment: ProcessInfo.processInfo.environment) else { return [:] }
        return file.destinations.mapValues { saved in
            let shown = RedactedURL.display(saved.url)
            do {
                let command = try MonitorCommand.parse(saved.arguments())
                let upload = command.upload
                let uploads = MonitorUploads(
                    url: upload.endpoint, field: upload.field, formFields: try upload.parsedFormFields(),
                    headers: try upload.parsedHeaders(), allowAnyFile: upload.anyFile)
                return .init(shown: shown, destination: MonitorDestination(uploads: uploads, settings: upload.transportSettings), refusal: nil)
            } catch {
                return .init(shown: shown, destination: nil, refusal: MonitorCommand.message(for: error))
            }
        }
    }
}

/// Curses is the monitor's real terminal: keys on standard input, the size from the kernel.
extension NCursesTerminal: MonitorTerminal {
    public var inputDescriptor: Int32 { STDIN_FILENO }
    public func measure() -> (width: Int, height: Int)? { Self.windowSize() }

    static func maker(graphics: GraphicsChoice, mouse: Bool) -> @Sendable (Bool) -> any MonitorTerminal {
        let environment = ProcessInfo.processInfo.environment
        let paths = StatePaths.resolve(environment: environment)
        // Where a crash's backtrace goes, named on the screen it leaves behind.
        let report = (try? paths.prepare()) != nil ? paths.monitorCrashReport(pid: getpid()) : nil
        return { NCursesTerminal(wantColors: $0, graphics: graphics, environment: environment, crashReport: report, mouse: mouse) }
    }
}
