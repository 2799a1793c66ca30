import Dispatch
import Foundation
import Glibc
import Monitor
import TerminalCanvas
import UploadCore
import UploadJournal

/// What the monitor's loop needs of a terminal. The real one is curses (`NCursesTerminal`,
/// wired in the executable); tests drive the whole loop with a fake that records frames.
/// Used from the loop's thread only, like curses.
public protocol MonitorTerminal: AnyObject {
    var width: Int { get }
    var height: Int { get }
    /// Whether the terminal draws colours (false under NO_COLOR or on a monochrome terminal).
    var colors: Bool { get }
    /// How many colours a picture may use (`.none`: no picture in colour).
    var colorDepth: ColorDepth { get }
    /// Real pixels (kitty graphics, sixel) and the cell size, where the terminal said so;
    /// it may change with the size (a new font size).
    var pixelGraphics: PixelGraphics? { get }
    /// Readable when a key waits (standard input for a real terminal); a hang-up ends the loop.
    var inputDescriptor: Int32 { get }
    /// Every key waiting, without blocking.
    func pendingKeys() -> [Key]
    /// Seconds until input held back (the start of an unfinished terminal answer) is given out
    /// as keys, if any is held: the loop wakes then to read it.
    var heldInputWait: Double? { get }
    func draw(_ canvas: Canvas)
    /// Asks the terminal to answer once it has read everything written so far (`CSI 5 n`), so
    /// the loop learns when a frame has reached the screen; false where it cannot be asked.
    func askWhenShown() -> Bool
    /// How many such answers came with the keys read since the last call.
    func takeShownAnswers() -> Int
    /// On a slow link (`FramePacer.slowLink`) pictures go out in fewer bytes (the 256-colour
    /// palette instead of 24-bit colour; pictures in pixels smaller). True when a picture on
    /// screen should be drawn again now that the link has recovered.
    func drawLightly(_ lightly: Bool) -> Bool
    /// The bytes of the picture in pixels the last `draw` sent, and what it would cost sent
    /// lightly; nil when it sent none. Taken once.
    func takePixelsSent() -> (bytes: Int, lightBytes: Int)?
    /// Bytes straight to the terminal between frames (bell, notification escapes).
    func emit(_ bytes: [UInt8])
    /// The size after a SIGWINCH, or nil if it cannot be read.
    func measure() -> (width: Int, height: Int)?
    func resize(width: Int, height: Int)
    /// Gives the terminal back as it was; safe to call more than once.
    func close()
}

extension MonitorTerminal {
    public var colorDepth: ColorDepth { colors ? .palette256 : .none }
    public var pixelGraphics: PixelGraphics? { nil }
    public var heldInputWait: Double? { nil }
    public func askWhenShown() -> Bool { false }
    public func takeShownAnswers() -> Int { 0 }
    public func drawLightly(_ lightly: Bool) -> Bool { false }
    public func takePixelsSent() -> (bytes: Int, lightBytes: Int)? { nil }
}

/// The monitor's one run loop: it owns the terminal and the state on a thread of its own,
/// sleeps in `poll` on the keyboard and the inbox, feeds every input through the reducer,
/// performs the effects, and draws and ticks as `FramePacer` decides (at most 30 frames a
/// second, only when something changed, and not before the terminal has shown the last one).
public final class MonitorProgram: @unchecked Sendable {
    /// Inputs fed through the reducer between two looks at the keyboard (and two frames).
    static let eventsPerTurn = 512

    /// How the monitor tells and draws: notifications, colours, glyphs.
    public struct Settings: Sendable {
        public var notify: NotifyMode
        public var colors: Bool
        public var glyphs: Glyphs
        public var environment: [String: String]
        /// Photos are sent stripped of their location: the browser tells "sent" by the stripped bytes.
        public var stripLocation = false
        /// What was sent to the endpoint by content before this monitor, when known (the
        /// journal's record): read once, off the loop, at start.
        public var sentContents: (@Sendable () -> Set<String>)?
        /// Where the browser's file digests are kept across runs (nil: in memory only).
        public var contentCache: Journal?
        /// The saved destinations `D` switches to, by name.
        public var destinations: [String: MonitorDestination] = [:]
        /// What was sent to another endpoint by content (after a switch).
        public var sentContentsTo: (@Sendable (String) -> Set<String>)?

        public init(notify: NotifyMode, colors: Bool, glyphs: Glyphs, environment: [String: String]) {
            self.notify = notify
            self.colors = colors
            self.glyphs = glyphs
            self.environment = environment
        }
    }

    /// Where other threads post events and signals for the loop.
    public let inbox = Inbox()
    /// How the loop paces frames (set before `run`).
    public var pacing = FramePacer()
    private let backend: any MonitorBackend
    private let settings: Settings
    private let makeTerminal: @Sendable (_ wantColors: Bool) -> any MonitorTerminal
    /// What the loop reads the time from (frames, ticks, the log's times, records' dates).
    private let clock: HouseClock
    private let start: Double
    /// When to report that the cursor rested on a picture (`awaitPreviewRest`); loop thread only.
    private var restDue: (request: PreviewRequest, at: Double)?
    private lazy var previews = PreviewWorker { [inbox] request, result in inbox.post(.event(.previewLoaded(request, result))) }
    private lazy var measurer = ConversionMeasurer { [inbox] request, found in inbox.post(.event(.conversionMeasured(request, found))) }
    /// The open folder, watched for files arriving and leaving.
    private lazy var folderWatch = DirectoryWatcher { [inbox] listing in inbox.post(.event(.directoryChanged(listing))) }
    private lazy var hasher = ContentHashWorker(stripLocation: settings.stripLocation, journal: settings.contentCache) { [inbox] file, digest, remaining in
        inbox.post(.event(.contentHashed(file, sha256: digest, remaining: remaining)))
    }

    /// `makeTerminal` is called on the loop's thread, which is the only one that touches it.
    public init(
        backend: any MonitorBackend, settings: Settings, clock: HouseClock = .system,
        makeTerminal: @escaping @Sendable (_ wantColors: Bool) -> any MonitorTerminal
    ) {
        self.backend = backend
        self.settings = settings
        self.makeTerminal = makeTerminal
        self.clock = clock
        start = clock.monotonic()
    }

    /// Runs the monitor until the user quits, the terminal hangs up or a terminating signal
    /// arrives, and returns the final state. The terminal is closed before this returns,
    /// whatever happened; cancelling the calling task ends it too. With `handlingSignals`, SIGWINCH, SIGTERM, SIGHUP and SIGINT of the
    /// process go to the loop while it runs.
    public func run(_ initial: MonitorState, handlingSignals: Bool = true) async -> MonitorState {
        let sources = handlingSignals ? installSignalHandlers() : []
        backend.start(post: { [inbox] in inbox.post(.event($0)) }, now: { self.now() })
        if let sentContents = settings.sentContents {
            DispatchQueue.global().async { [inbox] in inbox.post(.event(.sentContentsKnown(sentContents()))) }
        }
        // A cancelled task ends the monitor as SIGTERM does.
        let final = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<MonitorState, Never>) in
                let thread = Thread { continuation.resume(returning: self.loop(initial)) }
                thread.name = "uploadmon-ui"
                thread.start()
            }
        } onCancel: { [inbox] in
            inbox.post(.signal(SIGTERM))
        }
        for source in sources { source.cancel() }
        return final
    }

    public func now() -> EventTime {
        let date = clock.wall()
        return EventTime(seconds: elapsed(), clock: LocalTime.format(date, .clock), date: date)
    }

    /// Seconds since the program was made; for pacing frames and ticks, where no clock text is needed.
    func elapsed() -> Double { clock.monotonic() - start }

    private func loop(_ initial: MonitorState) -> MonitorState {
        let terminal = makeTerminal(settings.colors)
        defer { terminal.close() }
        defer { folderWatch?.stop() }
        var theme = Theme(colors: terminal.colors, glyphs: settings.glyphs, pictureDepth: terminal.colorDepth, pixels: terminal.pixelGraphics)
        var state = initial
        state.width = terminal.width
        state.height = terminal.height
        state.pixelGraphics = theme.pixels
        var pacer = pacing
        var budget = PixelBudget()

        /// Real pixels where the terminal has them, colours are on and the link carries them.
        func pixelsAllowed() -> PixelGraphics? { budget.allowsPixels && terminal.colors ? terminal.pixelGraphics : nil }

        func apply(_ event: MonitorEvent) {
            let effects = MonitorReducer.reduce(&state, event)
            pacer.changed(urgent: event.isTheUsers)
            for effect in effects { perform(effect, terminal: terminal) }
        }

        perform(.loadDirectory(path: state.browser.path, select: nil), terminal: terminal)
        var behind = false
        /// Whether the folder's hashing is held for the uploads (said to the worker when it changes).
        var hashingPaused = false
        while !state.hasQuit {
            let t = elapsed()
            pacer.observe(at: t)
            // Before deciding to draw: a slow judgement just forgotten (`observe`) or just made
            // (an answer) changes how the picture on screen should look, and the loop may
            // otherwise sleep in `poll` with nothing left to wake it.
            if terminal.drawLightly(pacer.slowLink) { pacer.changed(urgent: true) }
            // A link too slow even for light pictures gets cells; pixels are tried again later.
            budget.observe(at: t)
            let pixels = pixelsAllowed()
            if pixels != theme.pixels {
                theme.pixels = pixels
                state.pixelGraphics = pixels
                apply(.resize(width: terminal.width, height: terminal.height))
            }
            if pacer.drawNow(at: t) {
                terminal.draw(MonitorView.render(state, theme: theme))
                let asked = pacer.asks && terminal.askWhenShown()
                pacer.sent(at: t, asked: asked)
                let picture = terminal.takePixelsSent()
                if asked, let picture { budget.sent(bytes: picture.bytes, lightBytes: picture.lightBytes, at: t) }
            }
            var timeout = pacer.sleep(at: t, uploadsActive: state.queue.activeCount > 0) ?? -1
            // Events left from the last turn: no sleep, only a look at the keys first.
            if behind { timeout = 0 }
            if let due = restDue { timeout = max(0, timeout < 0 ? due.at - t : min(timeout, due.at - t)) }
            if let held = terminal.heldInputWait { timeout = timeout < 0 ? held : min(timeout, held) }
            var fds = [
                pollfd(fd: terminal.inputDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: inbox.readFD, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, timeout < 0 ? -1 : Int32((timeout * 1000).rounded(.up)))
            if ready < 0 && errno != EINTR { break }
            if fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                // The terminal went away (SSH dropped): nothing left to show.
                state.hasQuit = true
                break
            }
            for key in terminal.pendingKeys() { apply(.key(key, now())) }
            if (state.queue.activeCount > 0) != hashingPaused {
                hashingPaused.toggle()
                hasher.pause(hashingPaused)
            }
            let answers = terminal.takeShownAnswers()
            pacer.answered(answers, at: elapsed())
            if answers > 0, let through = pacer.answeredThrough, let roundTrip = pacer.roundTrip {
                budget.answered(through: through, roundTrip: roundTrip, at: elapsed())
            }
            // The events that came meanwhile, a slice at a time: a burst of thousands (a camera
            // roll's uploads ending) never holds a key, a signal or a frame back for long.
            let (inputs, more) = inbox.take(atMost: Self.eventsPerTurn)
            behind = more
            for input in inputs where !state.hasQuit {
                switch input {
                case .event(let event):
                    apply(event)
                case .signal(SIGWINCH):
                    if let size = terminal.measure() {
                        terminal.resize(width: size.width, height: size.height)
                        theme.pixels = pixelsAllowed()
                        state.pixelGraphics = theme.pixels
                        apply(.resize(width: terminal.width, height: terminal.height))
                    }
                case .signal(SIGINT):
                    apply(.key(.control("c"), now()))
                case .signal:
                    state.hasQuit = true
                }
            }
            if pacer.tickNow(at: elapsed(), uploadsActive: state.queue.activeCount > 0) { apply(.tick(now())) }
            if let due = restDue, elapsed() >= due.at {
                restDue = nil
                apply(.previewRested(due.request))
            }
        }
        return state
    }

    private func perform(_ effect: MonitorEffect, terminal: any MonitorTerminal) {
        switch effect {
        case .loadDirectory(let path, let select):
            let watch = folderWatch
            DispatchQueue.global().async { [inbox] in
                let listing = DirectoryReader.read(path, select: select)
                // Watched from before it is shown: nothing copied in meanwhile is missed.
                if listing.error == nil { watch?.watch(listing.path) }
                inbox.post(.event(.directoryLoaded(listing)))
            }
        case .switchDestination(let name):
            guard let destination = settings.destinations[name] else { return }
            backend.switchDestination(destination)
            if let sentTo = settings.sentContentsTo {
                let url = destination.uploads.url
                DispatchQueue.global().async { [inbox] in inbox.post(.event(.sentContentsKnown(sentTo(url)))) }
            }
        case .refreshDirectory(let path):
            DispatchQueue.global().async { [inbox] in
                inbox.post(.event(.directoryChanged(DirectoryReader.read(path, select: nil))))
            }
        case .enqueue(let items):
            backend.enqueue(items)
        case .cancel(let id):
            backend.cancel(id)
        case .retry(let id):
            backend.retry(id)
        case .notify(let title, let body):
            terminal.emit(TerminalNotification.bytes(mode: settings.notify, title: title, body: body, environment: settings.environment))
        case .loadPreview(let request):
            previews.request(request)
        case .awaitPreviewRest(let request):
            restDue = (request, elapsed() + PreviewState.restBeforePixels)
        case .hashContents(let files):
            hasher.request(files)
        case .measureConversion(let request):
            measurer.request(request)
        case .quit:
            break
        }
    }

    /// SIGWINCH for resizes; SIGTERM and SIGHUP end the monitor cleanly; SIGINT (from `kill`,
    /// since raw mode turns Ctrl-C into a key) counts as Ctrl-C.
    private func installSignalHandlers() -> [any DispatchSourceSignal] {
        [SIGWINCH, SIGTERM, SIGHUP, SIGINT].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [inbox] in inbox.post(.signal(number)) }
            source.resume()
            return source
        }
    }

    /// Whether the locale's character set is UTF-8 (else the screen keeps to ASCII glyphs).
    public static func speaksUTF8() -> Bool {
        setlocale(LC_ALL, "")
        return String(cString: nl_langinfo(nl_item(CODESET))).uppercased().replacing("-", with: "") == "UTF8"
    }
}
