import Dispatch
import Foundation
import Glibc
import Monitor
import NCursesTerminal
import TerminalCanvas
import UploadClient
import UploadCore

/// The monitor's one run loop: it owns the terminal and the state on a thread of its own,
/// sleeps in `poll` on the keyboard and the inbox, feeds every input through the reducer,
/// performs the effects, and draws and ticks as `FramePacer` decides (at most 30 frames a
/// second, only when something changed).
final class MonitorRunLoop: @unchecked Sendable {
    struct Settings {
        var notify: NotifyMode
        var colors: Bool
        var environment: [String: String]
    }

    private let inbox = Inbox()
    private let backend: any MonitorBackend
    private let settings: Settings
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    private var signalSources: [any DispatchSourceSignal] = []

    init(backend: any MonitorBackend, settings: Settings) {
        self.backend = backend
        self.settings = settings
        start = clock.now
    }

    /// Runs the monitor until the user quits or a terminating signal arrives, and returns the
    /// final state. The terminal is restored before this returns, whatever happened.
    func run(_ initial: MonitorState) async -> MonitorState {
        installSignalHandlers()
        backend.start(post: { [inbox] in inbox.post(.event($0)) }, now: { self.now() })
        let final = await withCheckedContinuation { (continuation: CheckedContinuation<MonitorState, Never>) in
            let thread = Thread { continuation.resume(returning: self.loop(initial)) }
            thread.name = "uploadmon-ui"
            thread.start()
        }
        for source in signalSources { source.cancel() }
        return final
    }

    func now() -> EventTime {
        var seconds = time(nil)
        var parts = tm()
        localtime_r(&seconds, &parts)
        let clockText = String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
        return EventTime(seconds: elapsed(), clock: clockText)
    }

    /// Seconds since the loop was made; for pacing frames and ticks, where no clock text is needed.
    func elapsed() -> Double { start.duration(to: clock.now).seconds }

    private func loop(_ initial: MonitorState) -> MonitorState {
        let terminal = NCursesTerminal(wantColors: settings.colors)
        defer { terminal.close() }
        let theme = Theme(colors: terminal.colors, glyphs: Self.speaksUTF8() ? .unicode : .ascii)
        var state = initial
        state.width = terminal.width
        state.height = terminal.height
        var pacer = FramePacer()

        func apply(_ event: MonitorEvent) {
            let effects = MonitorReducer.reduce(&state, event)
            pacer.changed()
            for effect in effects { perform(effect, terminal: terminal) }
        }

        perform(.loadDirectory(path: state.browser.path, select: nil), terminal: terminal)
        while !state.hasQuit {
            let t = elapsed()
            if pacer.drawNow(at: t) { terminal.draw(MonitorView.render(state, theme: theme)) }
            let timeout = pacer.sleep(at: t, uploadsActive: state.queue.activeCount > 0) ?? -1
            var fds = [pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0), pollfd(fd: inbox.readFD, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, timeout < 0 ? -1 : Int32((timeout * 1000).rounded(.up)))
            if ready < 0 && errno != EINTR { break }
            if fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                // The terminal went away (SSH dropped): nothing left to show.
                state.hasQuit = true
                break
            }
            for key in terminal.pendingKeys() { apply(.key(key, now())) }
            for input in inbox.take() {
                switch input {
                case .event(let event):
                    apply(event)
                case .signal(SIGWINCH):
                    if let size = NCursesTerminal.windowSize() {
                        terminal.resize(width: size.width, height: size.height)
                        apply(.resize(width: terminal.width, height: terminal.height))
                    }
                case .signal(SIGINT):
                    apply(.key(.control("c"), now()))
                case .signal:
                    state.hasQuit = true
                }
            }
            if pacer.tickNow(at: elapsed(), uploadsActive: state.queue.activeCount > 0) { apply(.tick(now())) }
        }
        return state
    }

    private func perform(_ effect: MonitorEffect, terminal: NCursesTerminal) {
        switch effect {
        case .loadDirectory(let path, let select):
            DispatchQueue.global().async { [inbox] in
                inbox.post(.event(.directoryLoaded(DirectoryReader.read(path, select: select))))
            }
        case .enqueue(let items):
            backend.enqueue(items)
        case .cancel(let id):
            backend.cancel(id)
        case .retry(let id):
            backend.retry(id)
        case .notify(let title, let body):
            terminal.emit(TerminalNotification.bytes(mode: settings.notify, title: title, body: body, environment: settings.environment))
        case .quit:
            break
        }
    }

    /// SIGWINCH for resizes; SIGTERM and SIGHUP end the monitor cleanly; SIGINT (from `kill`,
    /// since raw mode turns Ctrl-C into a key) counts as Ctrl-C.
    private func installSignalHandlers() {
        for number in [SIGWINCH, SIGTERM, SIGHUP, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [inbox] in inbox.post(.signal(number)) }
            source.resume()
            signalSources.append(source)
        }
    }

    static func speaksUTF8() -> Bool {
        setlocale(LC_ALL, "")
        return String(cString: nl_langinfo(nl_item(CODESET))).uppercased().replacing("-", with: "") == "UTF8"
    }
}
