import Foundation
import Monitor
import MonitorRuntime
import TerminalCanvas
import UploadAgent
import UploadClient
import UploadCore
import UploadJournal

/// Wires the uploads (the agent's, or a queue of its own) to the monitor's run loop; shared by
/// the monitor command and the demo. The terminal comes from the caller (curses in the program).
public struct MonitorSession: Sendable {
    public var directory: String
    public var uploads: MonitorUploads
    /// The endpoint as the title shows it (its secrets left out).
    public var shownEndpoint: String
    public var settings: TransportSettings
    public var concurrency: Int
    public var notify: NotifyMode
    /// Uploads run in the background agent and outlive the monitor.
    public var useAgent: Bool
    /// What the monitor's own uploads sent goes into the journal's record of what was sent by
    /// content (not for the demo's throwaway receiver).
    public var remembersSent: Bool
    public var environment: [String: String]
    /// What the monitor and its own uploads read the time from.
    public var clock: HouseClock = .system
    public var output: CommandOutput
    /// The saved destinations the monitor can switch to (`D`), by name, and the one it starts
    /// on (nil: the command line's URL).
    public var destinations: [String: SavedChoice] = [:]
    public var destinationName: String?

    /// A saved destination as the monitor offers it: resolved, or why it cannot be used.
    public struct SavedChoice: Sendable {
        public var shown: String
        public var destination: MonitorDestination?
        public var refusal: String?

        public init(shown: String, destination: MonitorDestination?, refusal: String?) {
            (self.shown, self.destination, self.refusal) = (shown, destination, refusal)
        }
    }

    public init(
        directory: String, uploads: MonitorUploads, shownEndpoint: String, settings: TransportSettings, concurrency: Int,
        notify: NotifyMode, useAgent: Bool = false, remembersSent: Bool = true,
        environment: [String: String] = ProcessInfo.processInfo.environment, output: CommandOutput = .standard
    ) {
        self.directory = directory
        self.uploads = uploads
        self.shownEndpoint = shownEndpoint
        self.settings = settings
        self.concurrency = concurrency
        self.notify = notify
        self.useAgent = useAgent
        self.remembersSent = remembersSent
        self.environment = environment
        self.output = output
    }

    /// Why the monitor cannot browse `directory`, or nil.
    public static func refusal(directory: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else { return "'\(directory)' does not exist" }
        return isDirectory.boolValue ? nil : "'\(directory)' is not a directory"
    }

    /// Runs the monitor until the user quits, with uploads in the agent or in process; returns the last state.
    @discardableResult
    public func run(makeTerminal: @escaping @Sendable (_ wantColors: Bool) -> any MonitorTerminal) async throws -> MonitorState {
        let backend: any MonitorBackend
        if useAgent {
            let paths = StatePaths.resolve()
            // Before the screen changes, so a failure reads as plain text.
            let connection = try AgentHost.connectOrStart(paths: paths, client: "monitor")
            backend = AgentBackend(client: connection.client, paths: paths, settings: settings, uploads: uploads)
        } else {
            let transport = try HTTPUploadTransport(settings: settings, clock: clock)
            let queue = UploadQueue(transport: transport, concurrency: concurrency, retryPolicy: settings.retryPolicy, clock: clock)
            backend = LocalBackend(
                queue: queue, transport: transport, uploads: uploads, settings: settings,
                make: { [clock] in try HTTPUploadTransport(settings: $0, clock: clock) })
        }
        let colors = environment["NO_COLOR"].map(\.isEmpty) ?? true
        let glyphs = MonitorProgram.speaksUTF8() ? Glyphs.unicode : .ascii
        var programSettings = MonitorProgram.Settings(notify: notify, colors: colors, glyphs: glyphs, environment: environment)
        programSettings.stripLocation = settings.stripLocation
        let endpoint = uploads.url
        if remembersSent {
            let ledger = SentLedger.open()
            programSettings.sentContents = { ledger?.sentContents(to: endpoint) ?? [] }
            programSettings.sentContentsTo = { ledger?.sentContents(to: $0) ?? [] }
            programSettings.contentCache = ledger?.journal
        }
        programSettings.destinations = destinations.compactMapValues(\.destination)
        let program = MonitorProgram(backend: backend, settings: programSettings, clock: clock, makeTerminal: makeTerminal)
        let home = environment["HOME"] ?? "/"
        let start = URL(fileURLWithPath: directory).standardizedFileURL.path
        var initial = MonitorState(width: 80, height: 24, endpoint: shownEndpoint, directory: start, home: home)
        initial.destinations = destinations.keys.sorted().compactMap { name in
            destinations[name].map { DestinationEntry(name: name, shown: $0.shown, refusal: $0.refusal, conversion: $0.destination?.settings.conversion) }
        }
        initial.destinationName = destinationName
        initial.uploadsOutliveMonitor = useAgent
        initial.stripLocation = settings.stripLocation
        initial.conversion = settings.conversion
        let final = await program.run(initial)
        let handing = backend.filesBeingHandedOver
        if handing > 0 { output.say("Handing \(handing) queued file(s) to the agent, which sends them…") }
        await backend.finish(final)
        // The agent remembers its own uploads; the monitor's own are remembered here.
        // Each upload by where it went: after a switch (`D`) not all went to the first endpoint.
        if remembersSent, !useAgent { SentLedger.open()?.remember(final.queue.tracker, endpoint: nil, at: clock.wall()) }
        if useAgent, final.queue.activeCount > 0 {
            output.say("\(final.queue.activeCount) upload(s) continue in the background. Follow them with `uploadmon status`, or open the monitor again.")
        }
        return final
    }
}
