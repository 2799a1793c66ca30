import Glibc
import UploadCore
import TerminalCanvas

/// How pictures reach the screen: `auto` asks the terminal; the others are the user's word.
public enum GraphicsChoice: String, Sendable, CaseIterable {
    /// Ask the terminal (through tmux where it passes questions on; not inside screen): kitty
    /// graphics, else sixel, else cells.
    case auto
    case kitty
    case sixel
    /// Half-block text cells only: never ask, never send pixels.
    case cells
}

/// Asks the terminal what it shows before curses takes it over, waiting a bounded time for the
/// answers (`TerminalReplies`), and reads the cell size in pixels from the kernel.
public enum TerminalProbe {
    /// The longest wait for the answers. Device Attributes come back within one round trip, over
    /// SSH too; only a terminal that never answers costs the whole wait, once, at start.
    public static let timeoutMilliseconds = 1000

    /// What the probe learnt: how pictures are drawn, whether answers may still arrive (asked,
    /// but the wait ended first), and whether the terminal around tmux answers through it (then
    /// the "shown yet?" question goes to it, not to tmux, which would answer at once however
    /// slow the link behind it).
    public struct Outcome: Sendable {
        public var graphics: PixelGraphics?
        public var answersPending = false
        public var answersThroughTmux = false

        init(_ graphics: PixelGraphics?, pending: Bool = false, throughTmux: Bool = false) {
            self.graphics = graphics
            answersPending = pending
            answersThroughTmux = throughTmux
        }
    }

    /// What pictures can use for `choice` in `environment` (nil graphics: half-block cells).
    public static func graphics(_ choice: GraphicsChoice, environment: [String: String]) -> Outcome {
        switch choice {
        case .cells:
            return Outcome(nil)
        case .auto:
            switch TerminalReplies.asking(environment: environment) {
            case .no:
                return Outcome(nil)
            case .direct:
                guard let replies = ask() else { return Outcome(nil) }
                return Outcome(replies.graphics(windowCell: windowCell()), pending: !replies.complete)
            case .throughTmux:
                // Tmux drops what it may not pass on: the terminal around it is asked only when
                // tmux says it passes escapes on, else nothing would ever answer.
                let passes = tmuxPassesThrough(environment: environment)
                guard let replies = ask(TerminalReplies.tmuxQuery(passthrough: passes), into: TerminalReplies(insideTmux: passes)) else {
                    return Outcome(nil)
                }
                return Outcome(
                    replies.graphics(windowCell: windowCell()), pending: !replies.complete,
                    throughTmux: passes && replies.deviceAttributes != nil)
            case .tmuxByName:
                // Its options cannot be asked from here: the terminal around it is asked through
                // it, and answers only if it passes them on. Tmux's own answer comes at once, the
                // terminal's moments after (they are side by side): a short wait after tmux's.
                guard let named = ask(TerminalReplies.nameQuery) else { return Outcome(nil) }
                // No name in time (a slow link, a loaded machine): its answer may still come,
                // and must not reach the keys (`ESC P > | t m u x …` would mark and upload).
                guard named.version != nil else { return Outcome(nil, pending: true) }
                guard named.version?.hasPrefix("tmux ") == true,
                    let replies = ask(
                        TerminalReplies.tmuxQuery(passthrough: true), into: TerminalReplies(insideTmux: true),
                        afterTmuxMilliseconds: tmuxNeighbourMilliseconds(environment))
                else { return Outcome(nil) }
                return Outcome(replies.graphics(windowCell: windowCell()), pending: !replies.complete, throughTmux: replies.complete)
            }
        case .kitty, .sixel:
            // The user's word: the protocol is not asked about, the cell size still is.
            var pending = false
            var cell = windowCell()
            if cell == nil, let replies = ask() {
                cell = replies.cellSize
                pending = !replies.complete
            }
            let size = cell ?? (10, 20)
            // Kitty inside tmux: through its passthrough, as placeholders (the user vouches for both).
            let throughTmux = choice == .kitty && environment["TMUX"] != nil
            return Outcome(
                PixelGraphics(kind: choice == .kitty ? .kitty : .sixel, cellWidth: size.width, cellHeight: size.height, throughTmux: throughTmux),
                pending: pending)
        }
    }

    /// The kernel's pixel size over its cells (kitty, xterm, foot and WezTerm fill it in), or nil.
    public static func windowCell() -> (width: Int, height: Int)? {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0,
            size.ws_xpixel >= size.ws_col, size.ws_ypixel >= size.ws_row
        else { return nil }
        return (Int(size.ws_xpixel) / Int(size.ws_col), Int(size.ws_ypixel) / Int(size.ws_row))
    }

    /// How long the terminal around a tmux known only by name may take after tmux answered, at
    /// least: the wait also grows with how long tmux itself took (a busy machine answers late
    /// on both sides). `UPLOADMON_TMUX_NEIGHBOUR_MS` sets the least (1…1000), for a terminal
    /// known to be slow, and for tests on loaded machines.
    static func tmuxNeighbourMilliseconds(_ environment: [String: String]) -> Int {
        guard let text = environment["UPLOADMON_TMUX_NEIGHBOUR_MS"], let value = Int(text), (1...1000).contains(value) else { return 150 }
        return value
    }

    /// Sends `query` and reads answers into `start` until they are complete or the wait ends
    /// (`afterTmuxMilliseconds` after tmux's own answer, if given); nil when standard input or
    /// output is not a terminal.
    public static func ask(
        _ query: [UInt8] = TerminalReplies.query, into start: TerminalReplies = TerminalReplies(),
        timeoutMilliseconds: Int = timeoutMilliseconds, afterTmuxMilliseconds: Int? = nil
    ) -> TerminalReplies? {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { return nil }
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var quiet = saved
        // No line editing, no echo: the answers must neither wait for Enter nor show.
        quiet.c_lflag &= ~tcflag_t(ICANON | ECHO)
        guard tcsetattr(STDIN_FILENO, TCSANOW, &quiet) == 0 else { return nil }
        defer { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
        var offset = 0
        while offset < query.count {
            let n = query[offset...].withUnsafeBufferPointer { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            offset += n
        }
        var replies = start
        let asked = Self.milliseconds()
        var deadline = asked + timeoutMilliseconds
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !replies.complete {
            let left = deadline - Self.milliseconds()
            guard left > 0 else { break }
            var fd = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            let ready = poll(&fd, 1, Int32(left))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, fd.revents & Int16(POLLIN) != 0 else { break }
            let n = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            let tmuxHadAnswered = replies.tmuxAttributes != nil
            replies.feed(buffer[0..<n])
            if let after = afterTmuxMilliseconds, !tmuxHadAnswered, replies.tmuxAttributes != nil {
                let tmuxTook = Self.milliseconds() - asked
                deadline = min(deadline, Self.milliseconds() + max(after, 3 * tmuxTook))
            }
        }
        return replies
    }

    private static func milliseconds() -> Int { Int(HouseClock.system.monotonic() * 1000) }

    /// Whether the tmux this runs in passes escapes on to its terminal (`allow-passthrough` on,
    /// or `all`, for this pane), asked of tmux itself; false when it cannot be asked.
    static func tmuxPassesThrough(environment: [String: String]) -> Bool {
        var arguments = ["tmux", "show-options", "-A", "-p", "-v"]
        if let pane = environment["TMUX_PANE"] { arguments += ["-t", pane] }
        if let answer = TmuxQuestion.output(arguments + ["allow-passthrough"]) {
            let value = answer.split(whereSeparator: { $0 == "\n" || $0 == " " }).first ?? ""
            return value == "on" || value == "all"
        }
        // Tmux before 3.3 has no such option (Ubuntu 22.04's 3.2a): it passes everything on.
        return TmuxQuestion.output(["tmux", "-V"]).map(TerminalReplies.tmuxPassesEverything) ?? false
    }
}
