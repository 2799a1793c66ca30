import ArgumentParser
import Foundation
import Monitor
import NCursesTerminal
import UploadCommands

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Open the monitor on generated sample images, uploading to a built-in receiver.",
        discussion: CommandHelp.demo
    )

    @Option(help: "Folder for the samples and the received files (default: uploadmon-demo-UID in the temporary folder, private to you).")
    var dir: String?

    @Option(help: "Size of the large sample in MB.")
    var bigMB = 200

    @Option(help: "Upload rate per file in MB/s, so the progress is watchable on loopback.")
    var rateMB = 25

    @Option(help: "How to tell the terminal an upload finished: bell, osc or none.")
    var notify: NotifyMode = .bell

    @Option(help: "How previews reach the screen: auto (ask the terminal), kitty, sixel or cells.")
    var graphics: GraphicsChoice = .auto

    @Flag(name: .long, help: "Leave the mouse to the terminal instead of clicks and the wheel.")
    var noMouse = false

    @Flag(help: "Send every sample at once and print the results instead of opening the monitor.")
    var headless = false

    @Flag(name: .long, help: "With --headless: print one JSON object per event.")
    var json = false

    func validate() throws {
        guard bigMB >= 1 else { throw ValidationError("--big-mb must be at least 1") }
        guard rateMB >= 1 else { throw ValidationError("--rate-mb must be at least 1") }
        if json && !headless { throw ValidationError("--json needs --headless") }
    }

    func run() async throws {
        if !headless {
            guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
                throw ValidationError("the demo opens the monitor and needs a terminal; use --headless in scripts")
            }
            NCursesTerminal.quietBacktraces()
        }
        let demo = DemoSession(root: try dir ?? DemoSession.defaultRoot(), bigBytes: bigMB * 1_000_000, rateBytesPerSecond: rateMB * 1_000_000)
        if headless {
            let status = try await demo.runHeadless(json: json)
            if status != SendExit.success { throw ExitCode(status) }
        } else {
            try await demo.runMonitor(notify: notify, makeTerminal: NCursesTerminal.maker(graphics: graphics, mouse: !noMouse))
        }
    }
}
