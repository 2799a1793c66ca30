/// What a terminal answers to the graphics questions asked at start-up. The questions end with
/// Primary Device Attributes (`CSI c`), which every VT100-like terminal answers, and terminals
/// answer in order: once that answer is in, every answer that will come has come.
public struct TerminalReplies: Sendable, Equatable {
    /// The questions, in this order: a kitty graphics query (a 1x1 RGB picture, `a=q`: checked,
    /// not stored), the number of sixel colour registers (XTSMGRAPHICS), the cell size in pixels
    /// (`CSI 16 t`), and Primary Device Attributes.
    public static let query = Array(questions.joined().utf8)

    static let questions = ["\u{1B}_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\u{1B}\\", "\u{1B}[?1;1;0S", "\u{1B}[16t", "\u{1B}[c"]

    /// The questions inside tmux: first tmux's own Device Attributes (tmux answers at once; `4`
    /// where tmux itself keeps sixel pictures, 3.4 and later built with it), then — where tmux
    /// passes escapes on — the questions for the terminal around tmux, each wrapped to pass
    /// through (tmux hands the terminal's answers back to the pane), with its name and version
    /// (XTVERSION, `CSI > q`) asked before its Device Attributes: what it can do inside tmux
    /// depends on it.
    public static func tmuxQuery(passthrough: Bool) -> [UInt8] {
        let around = passthrough ? (questions.dropLast() + nameQuestions).map(TmuxPassthrough.wrap) : []
        return Array((questions.suffix(1) + around).joined().utf8)
    }

    /// The name and version (XTVERSION), then Device Attributes: what a multiplexer known only
    /// by `TERM` is (tmux names itself; screen does not answer XTVERSION).
    public static let nameQuery = Array(nameQuestions.joined().utf8)

    static let nameQuestions = ["\u{1B}[>q", questions.last!]

    /// The kitty query was answered OK.
    public private(set) var kittyGraphics = false
    /// Primary Device Attributes' parameters (`4` means sixel); nil until they arrive.
    public private(set) var deviceAttributes: [Int]?
    /// Sixel colour registers, if the terminal said.
    public private(set) var sixelRegisters: Int?
    /// One cell in pixels (width, height), if the terminal said.
    public private(set) var cellSize: (width: Int, height: Int)?
    /// The terminal's name and version (XTVERSION), if asked and it said: `kitty(0.35.2)`.
    public private(set) var version: String?
    private var pending: [UInt8] = []

    /// Tmux's own Device Attributes, inside tmux (the first to arrive).
    public private(set) var tmuxAttributes: [Int]?
    /// Inside tmux: the first Device Attributes are tmux's; `passthrough`: the terminal's follow.
    private var insideTmux = false
    private var passthrough = false

    public init() {}

    /// Answers to `tmuxQuery(passthrough:)`.
    public init(insideTmux passthrough: Bool) {
        insideTmux = true
        self.passthrough = passthrough
    }

    /// The last answer (Device Attributes; inside tmux without passthrough, tmux's) is in.
    public var complete: Bool { insideTmux && !passthrough ? tmuxAttributes != nil : deviceAttributes != nil }

    /// Takes bytes as they arrive; answers split over reads are joined. Anything else (a key
    /// pressed meanwhile) is passed over.
    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        pending += bytes
        var start = 0
        while let escape = pending[start...].firstIndex(of: 0x1B) {
            guard escape + 1 < pending.count else {
                start = escape
                break
            }
            let introducer = pending[escape + 1]
            if introducer == UInt8(ascii: "_") || introducer == UInt8(ascii: "P") {
                // APC … ST: a kitty graphics answer; DCS … ST: the name and version.
                guard let end = stringTerminator(after: escape + 2) else {
                    start = escape
                    break
                }
                let body = String(decoding: pending[(escape + 2)..<end], as: UTF8.self)
                if introducer == UInt8(ascii: "_") {
                    if body.hasPrefix("Gi=31;") && body.dropFirst(6).hasPrefix("OK") { kittyGraphics = true }
                } else if body.hasPrefix(">|") {
                    version = String(body.dropFirst(2).prefix(64))
                }
                start = end + 2
            } else if introducer == UInt8(ascii: "[") {
                // CSI: parameters and intermediates up to a final byte (0x40…0x7E).
                guard let final = pending[(escape + 2)...].firstIndex(where: { $0 >= 0x40 && $0 <= 0x7E }) else {
                    start = escape
                    break
                }
                csi(String(decoding: pending[(escape + 2)..<final], as: UTF8.self), final: pending[final])
                start = final + 1
            } else {
                start = escape + 1
            }
        }
        if start >= pending.count || pending[start...].firstIndex(of: 0x1B) == nil {
            pending.removeAll()
        } else {
            pending.removeFirst(start)
        }
    }

    private func stringTerminator(after index: Int) -> Int? {
        var i = index
        while i + 1 < pending.count {
            if pending[i] == 0x1B && pending[i + 1] == UInt8(ascii: "\\") { return i }
            i += 1
        }
        return nil
    }

    private mutating func csi(_ parameters: String, final: UInt8) {
        switch final {
        case UInt8(ascii: "c") where parameters.hasPrefix("?"):
            let attributes = parameters.dropFirst().split(separator: ";").compactMap { Int($0) }
            if insideTmux && tmuxAttributes == nil { tmuxAttributes = attributes } else { deviceAttributes = attributes }
        case UInt8(ascii: "S") where parameters.hasPrefix("?"):
            // XTSMGRAPHICS: ?1;status;value — status 0 is success.
            let fields = parameters.dropFirst().split(separator: ";").compactMap { Int($0) }
            if fields.count == 3, fields[0] == 1, fields[1] == 0 { sixelRegisters = fields[2] }
        case UInt8(ascii: "t"):
            let fields = parameters.split(separator: ";").compactMap { Int($0) }
            // A cell of 1…512 pixels a side; anything else is not an answer to trust.
            if fields.count == 3, fields[0] == 6, (1...512).contains(fields[1]), (1...512).contains(fields[2]) { cellSize = (fields[2], fields[1]) }
        default:
            break
        }
    }

    /// What pictures can use: kitty where it answered, else sixel where Device Attributes list
    /// it and there are at least 256 colour registers (or the terminal did not say); nil without
    /// a cell size (from the answers or `windowCell`, the kernel's pixel size over its cells).
    ///
    /// Inside tmux, pictures must be something tmux keeps and redraws: kitty pictures go as
    /// Unicode placeholders (text that tmux redraws and scrolls like any other), where the
    /// terminal around says by name and version that it draws them (`drawsPlaceholders`);
    /// sixel goes to tmux itself where tmux says it keeps sixel (its own Device Attributes list
    /// `4`). A sixel picture passed through to the terminal (tmux 3.3) would be neither redrawn
    /// nor removed by tmux, and xterm moves it with every scroll of any pane: nil then.
    public func graphics(windowCell: (width: Int, height: Int)? = nil) -> PixelGraphics? {
        guard let cell = cellSize ?? windowCell, cell.width > 0, cell.height > 0 else { return nil }
        if insideTmux {
            if kittyGraphics && drawsPlaceholders {
                return PixelGraphics(kind: .kitty, cellWidth: cell.width, cellHeight: cell.height, throughTmux: true)
            }
            if tmuxAttributes?.contains(4) == true { return PixelGraphics(kind: .sixel, cellWidth: cell.width, cellHeight: cell.height) }
            return nil
        }
        if kittyGraphics { return PixelGraphics(kind: .kitty, cellWidth: cell.width, cellHeight: cell.height) }
        if deviceAttributes?.contains(4) == true, (sixelRegisters ?? 256) >= 256 {
            return PixelGraphics(kind: .sixel, cellWidth: cell.width, cellHeight: cell.height)
        }
        return nil
    }

    /// Whether the terminal draws kitty's Unicode placeholders, by its own word (XTVERSION):
    /// kitty from 0.28 and Ghostty. kitty 0.26 (Debian bookworm's) shows pictures, but not
    /// placeholders.
    public var drawsPlaceholders: Bool {
        guard let version = version?.lowercased() else { return false }
        if version.hasPrefix("ghostty") { return true }
        guard version.hasPrefix("kitty("), version.hasSuffix(")") else { return false }
        let numbers = version.dropFirst(6).dropLast().split(separator: ".").map { Int($0) }
        guard numbers.count >= 2, let major = numbers[0], let minor = numbers[1] else { return false }
        return major > 0 || minor >= 28
    }

    public static func == (a: TerminalReplies, b: TerminalReplies) -> Bool {
        a.kittyGraphics == b.kittyGraphics && a.deviceAttributes == b.deviceAttributes && a.sixelRegisters == b.sixelRegisters
            && a.version == b.version && a.tmuxAttributes == b.tmuxAttributes
            && a.cellSize?.width == b.cellSize?.width && a.cellSize?.height == b.cellSize?.height
    }

    /// How to ask, if at all. Inside tmux (`TMUX` set) the questions must pass through it, which
    /// it allows only with `allow-passthrough` on (the caller asks tmux that first). A
    /// multiplexer seen only by its `TERM` is asked what it is. Not inside screen, nor on the
    /// Linux console or a dumb terminal.
    public static func asking(environment: [String: String]) -> Asking {
        if environment["STY"] != nil { return .no }
        if environment["TMUX"] != nil { return .throughTmux }
        let term = environment["TERM"] ?? ""
        if term.isEmpty || term == "dumb" || term == "linux" { return .no }
        if term.hasPrefix("screen") || term.hasPrefix("tmux") { return .tmuxByName }
        return .direct
    }

    /// Whether `tmux -V`'s answer ("tmux 3.2a", "tmux next-3.4") names a tmux before 3.3,
    /// which passes every passthrough on (3.3 added `allow-passthrough`, off by default).
    public static func tmuxPassesEverything(version: String) -> Bool {
        let number = version.split(whereSeparator: \.isWhitespace).last.map { $0.split(separator: "-").last ?? $0 } ?? ""
        let parts = number.split(separator: ".").map { Int($0.prefix { $0.isNumber }) }
        guard parts.count >= 2, let major = parts[0], let minor = parts[1] else { return false }
        return major < 3 || (major == 3 && minor < 3)
    }

    /// Whether the start-up questions are asked, and how they reach the terminal: directly, or through tmux.
    public enum Asking: Sendable, Equatable {
        case no, direct, throughTmux
        /// `TERM` names tmux or screen, but neither says it runs here: one on the other side
        /// of an SSH link. Asked its name first (tmux answers XTVERSION, screen does not: a
        /// tmux passthrough would reach screen's terminal as text).
        case tmuxByName
    }
}

/// Answers to the start-up questions that come after the wait for them ended (a slow link)
/// reach the keyboard's input as keys: Escape, `[`, `?`, `6`, … `c`. While active, this drops
/// such answers from the keys read (`ESC [ … c|t|S`, `ESC _ … ESC \`, `ESC P … ESC \`), and ends once Device
/// Attributes, the last answer, has been dropped. As a terminal's own parser does, it holds an
/// answer that a read cut in two (`ESC _ G i = 3 1 ; O` then `K ESC \`) until the rest comes,
/// within bounds: at most `holdSeconds` without a further byte and a bounded length, after
/// which what it held was keys after all and is let go as such.
///
/// It also takes out the answers to the status question (`CSI 5 n`, answered `CSI 0 n`) that
/// the monitor asks after a frame to learn when the terminal has shown it (`FramePacer`):
/// while such answers are owed (`expectStatus`), each is dropped and counted (`takeStatusAnswers`).
public struct LateReplyFilter: Sendable, Equatable {
    public private(set) var active: Bool
    /// Status answers still owed by the terminal.
    public private(set) var statusOwed = 0
    /// Status answers dropped since the last `takeStatusAnswers`.
    private var statusAnswers = 0
    /// The status question: "answer once you have read this far".
    public static let statusQuestion = Array("\u{1B}[5n".utf8)
    /// The start of an answer that has not ended yet, and when its last key came.
    private var held: [Key] = []
    private var heldAt = 0.0
    private var holdFor = holdSeconds

    /// How long an unfinished answer is held waiting for its rest.
    public static let holdSeconds = 0.3
    /// How long the start of what may be a status answer is held, when only those are owed.
    public static let statusHoldSeconds = 0.05
    static let csiLimit = 64
    static let apcLimit = 8192

    /// After this (seconds on the caller's steady clock), start-up answers are no longer
    /// expected: a terminal, or a tmux passing nothing on, that never answers does not leave a
    /// lone Escape held for the whole session.
    private var startupUntil: Double

    public init(active: Bool, until: Double = .infinity) {
        self.active = active
        startupUntil = until
    }

    /// The status question was sent: one more answer is owed.
    public mutating func expectStatus() { statusOwed += 1 }

    /// How many status answers came since the last call.
    public mutating func takeStatusAnswers() -> Int {
        defer { statusAnswers = 0 }
        return statusAnswers
    }

    /// Whether an Escape may start an answer: start-up answers or status answers are owed.
    private var listening: Bool { active || statusOwed > 0 }

    /// The keys read at `now` (seconds on any steady clock), without the answers among them.
    public mutating func filter(_ keys: [Key], now: Double = 0) -> [Key] {
        if active && now > startupUntil { active = false }
        guard listening || !held.isEmpty else { return keys }
        if keys.isEmpty {
            guard !held.isEmpty, now - heldAt >= holdFor else { return [] }
            defer { held = [] }
            return held
        }
        let all = held + keys
        held = []
        var kept: [Key] = []
        var i = 0
        while i < all.count {
            if listening, all[i] == .escape {
                switch Self.match(all, at: i, startup: active, status: statusOwed > 0) {
                case .reply(let end, let last):
                    if last { active = false }
                    i = end + 1
                    continue
                case .status(let end):
                    statusOwed -= 1
                    statusAnswers += 1
                    i = end + 1
                    continue
                case .unfinished:
                    held = Array(all[i...])
                    heldAt = now
                    // A status answer is four bytes sent at once: a lone Escape at the end of a
                    // read is the Escape key far more often than half an answer.
                    holdFor = active ? Self.holdSeconds : Self.statusHoldSeconds
                    return kept
                case .notAReply:
                    break
                }
            }
            kept.append(all[i])
            i += 1
        }
        return kept
    }

    /// Seconds from `now` until held keys are let go (nil: none held): the caller wakes then.
    public func wait(now: Double) -> Double? {
        held.isEmpty ? nil : max(0, heldAt + holdFor - now)
    }

    private enum Match {
        case reply(end: Int, last: Bool)
        /// `CSI 0 n` (ready) or `CSI 3 n` (malfunction): the terminal read up to the question.
        case status(end: Int)
        /// The keys end inside what may still become an answer.
        case unfinished
        case notAReply
    }

    /// What starts at `start` (an Escape): an answer and where it ends, one not ended yet, or
    /// keys. `startup`: the start-up answers may come; `status`: a status answer may come.
    private static func match(_ keys: [Key], at start: Int, startup: Bool, status: Bool) -> Match {
        guard start + 1 < keys.count else { return .unfinished }
        if keys[start + 1] == .character("[") {
            var j = start + 2
            while j < keys.count, case .character(let c) = keys[j], c.isASCII, c.isNumber || c == ";" || c == "?" { j += 1 }
            guard j - start <= csiLimit else { return .notAReply }
            guard j < keys.count else { return .unfinished }
            guard case .character(let final) = keys[j] else { return .notAReply }
            if status, final == "n", j == start + 3, keys[start + 2] == .character("0") || keys[start + 2] == .character("3") {
                return .status(end: j)
            }
            guard startup, "ctS".contains(final) else { return .notAReply }
            return .reply(end: j, last: final == "c" && start + 2 < j && keys[start + 2] == .character("?"))
        }
        if startup, keys[start + 1] == .character("_") || keys[start + 1] == .character("P") {
            var j = start + 2
            while j < keys.count, j - start <= apcLimit {
                if keys[j] == .escape {
                    guard j + 1 < keys.count else { return .unfinished }
                    if keys[j + 1] == .character("\\") { return .reply(end: j + 1, last: false) }
                }
                j += 1
            }
            return j - start > apcLimit ? .notAReply : .unfinished
        }
        return .notAReply
    }
}

/// Tmux hands an escape to the terminal around it only wrapped in its passthrough DCS, every
/// ESC inside doubled (tmux 3.3 and later pass it on only with `allow-passthrough` on).
public enum TmuxPassthrough {
    public static func wrap(_ sequence: String) -> String {
        "\u{1B}Ptmux;" + sequence.replacing("\u{1B}", with: "\u{1B}\u{1B}") + "\u{1B}\\"
    }

    public static func wrap(_ bytes: [UInt8]) -> [UInt8] {
        var out = Array("\u{1B}Ptmux;".utf8)
        out.reserveCapacity(bytes.count + 16)
        for byte in bytes {
            if byte == 0x1B { out.append(0x1B) }
            out.append(byte)
        }
        return out + Array("\u{1B}\\".utf8)
    }
}
