import CNCursesW
import Glibc
import TerminalCanvas
import UploadCore

/// The only code that calls curses. Not thread-safe, like curses itself: create it, read keys,
/// draw and close it from one thread.
///
/// Drawing copies a finished `Canvas` to the screen, rewriting only rows that changed since
/// the last frame; curses then sends only the changed cells.
public final class NCursesTerminal {
    public private(set) var width: Int
    public private(set) var height: Int
    public let colors: Bool
    /// How pictures are drawn: 24-bit where the terminal says it has it, else the 256 palette.
    public let colorDepth: ColorDepth
    private var previous: Canvas?
    /// Real pixels where the terminal said it shows them (asked before curses starts).
    public private(set) var pixelGraphics: PixelGraphics?
    /// The picture on screen now, drawn over cells curses believes blank.
    private var shownPicture: CellPicture?
    private var shownPixels: PixelPicture?
    /// Whether the picture in pixels went out smaller on a slow link (drawn whole once it recovers).
    private var shownPixelsLight = false
    /// "Answer once you have read this far", to the terminal itself: inside tmux wrapped for the
    /// terminal around it where it answers through tmux (tmux itself answers at once).
    private let statusQuestion: [UInt8]
    /// The picture in pixels the last draw sent: its bytes, and what it would cost lightly.
    private var pixelsSent: (bytes: Int, lightBytes: Int)?
    /// The id of kitty pictures inside tmux (`KittyPlaceholders`).
    private let kittyID = KittyPlaceholders.id(process: getpid())
    /// Drops answers to the start-up questions that arrive after the wait for them.
    private var lateReplies: LateReplyFilter
    private var pairs: [Int: Int16] = [:]
    private var maxPairs: Int = 0
    private var closed = false
    private var lightly = false
    /// The depth the picture on screen was drawn in: a picture sent lightly on a slow link is
    /// sent again in full colour once the link has recovered.
    private var shownDepth: ColorDepth?

    /// Takes over the terminal: alternate screen, raw keys (Ctrl-C arrives as a key), no echo,
    /// hidden cursor. `wantColors` false (NO_COLOR) keeps the screen monochrome and shows no
    /// pictures; `graphics` says whether to ask the terminal for real pixels. A crash gives the
    /// terminal back and writes the backtrace to `crashReport` (nil: to standard error).
    public init(wantColors: Bool, graphics: GraphicsChoice = .cells, environment: [String: String] = [:], crashReport: String? = nil, mouse: Bool = false) {
        setlocale(LC_ALL, "")
        TerminalRestore.saveModes()
        // Asked before curses reads the keyboard, so the answers never arrive as keys.
        let probe = wantColors ? TerminalProbe.graphics(graphics, environment: environment) : TerminalProbe.Outcome(nil)
        statusQuestion = probe.answersThroughTmux ? TmuxPassthrough.wrap(LateReplyFilter.statusQuestion) : LateReplyFilter.statusQuestion
        // Answers later than this are not answers: a lone Escape is not held for them forever.
        lateReplies = LateReplyFilter(active: probe.answersPending, until: Self.steadySeconds() + 10)
        initscr()
        // An update is always finished: curses may otherwise stop halfway when a key is waiting,
        // and the pictures drawn after it would land on rows it completes later.
        typeahead(-1)
        raw()
        noecho()
        nonl()
        keypad(um_stdscr(), true)
        nodelay(um_stdscr(), true)
        set_escdelay(25)
        curs_set(0)
        // Clicks and the wheel, where the terminal reports them (curses asks it; `--no-mouse`
        // leaves the terminal's own selection alone).
        if mouse { _ = um_mouse_on() }
        var usable = false
        if wantColors && has_colors() {
            start_color()
            use_default_colors()
            usable = true
            maxPairs = Int(um_color_pairs())
        }
        colors = usable
        colorDepth = usable ? Self.pictureDepth() : .none
        pixelGraphics = usable ? probe.graphics : nil
        width = Int(um_cols())
        height = Int(um_lines())
        TerminalRestore.installCrashHandlers(report: crashReport)
    }

    deinit { close() }

    /// Gives the terminal back as it was. Safe to call more than once.
    public func close() {
        guard !closed else { return }
        closed = true
        if shownPixels != nil && pixelGraphics?.kind == .kitty { emit(deleteKittyPictures()) }
        curs_set(1)
        endwin()
        TerminalRestore.deactivate()
    }

    /// Follows a size change reported by SIGWINCH (the caller reads the new size with `ioctl`).
    public func resize(width: Int, height: Int) {
        resizeterm(Int32(height), Int32(width))
        self.width = Int(um_cols())
        self.height = Int(um_lines())
        previous = nil
        shownPicture = nil
        if shownPixels != nil && pixelGraphics?.kind == .kitty { emit(deleteKittyPictures()) }
        shownPixels = nil
        // A new font size changes the cell's pixels, and the size of pictures with it.
        if let graphics = pixelGraphics, let cell = TerminalProbe.windowCell() {
            pixelGraphics = PixelGraphics(kind: graphics.kind, cellWidth: cell.width, cellHeight: cell.height, throughTmux: graphics.throughTmux)
        }
        clearok(um_stdscr(), true)
    }

    /// 24-bit when the terminal says so (`COLORTERM`, or terminfo's `RGB`/`Tc`), else the 256
    /// palette when it has it; never a guess from the terminal's name.
    static func pictureDepth() -> ColorDepth {
        let colorterm = getenv("COLORTERM").map { String(cString: $0).lowercased() } ?? ""
        if colorterm == "truecolor" || colorterm == "24bit" { return .trueColor }
        if um_flag("RGB") > 0 || um_flag("Tc") > 0 { return .trueColor }
        return um_colors() >= 256 ? .palette256 : .none
    }

    /// The terminal's size as the kernel knows it.
    public static func windowSize() -> (width: Int, height: Int)? {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Every key waiting to be read, without blocking.
    public func pendingKeys() -> [Key] {
        var keys: [Key] = []
        var value: wint_t = 0
        while true {
            let result = um_get_wch(&value)
            if result == ERR { break }
            if result == um_key_code_yes() {
                if Int32(value) == KEY_RESIZE { continue }
                if Int32(value) == KEY_MOUSE {
                    var x: Int32 = 0
                    var y: Int32 = 0
                    switch um_mouse_event(&x, &y) {
                    case 1: keys.append(.mouse(.press, x: Int(x), y: Int(y)))
                    case 2: keys += [.mouse(.press, x: Int(x), y: Int(y)), .mouse(.press, x: Int(x), y: Int(y))]
                    case 4: keys.append(.mouse(.wheelUp, x: Int(x), y: Int(y)))
                    case 5: keys.append(.mouse(.wheelDown, x: Int(x), y: Int(y)))
                    default: break
                    }
                    continue
                }
                keys.append(KeyDecoder.special(Int32(value)))
            } else {
                keys.append(KeyDecoder.character(UInt32(value)))
            }
        }
        return lateReplies.filter(keys, now: Self.steadySeconds())
    }

    /// Seconds until keys held as the start of an unfinished answer are let go (nil: none held).
    public var heldInputWait: Double? { lateReplies.wait(now: Self.steadySeconds()) }

    private static func steadySeconds() -> Double { HouseClock.system.monotonic() }

    /// Copies `canvas` to the screen. A canvas of another size than the screen is clipped.
    public func draw(_ canvas: Canvas) {
        let rows = min(canvas.height, height)
        let columns = min(canvas.width, width)
        let full = previous.map { $0.width != canvas.width || $0.height != canvas.height } ?? true
        let picture = canvas.picture.flatMap { fits($0.bounds) ? $0 : nil }
        let pixels = pixelGraphics == nil ? nil : canvas.pixels.flatMap { fits($0.bounds) ? $0 : nil }
        // Curses could move lines with a scroll this frame (a list or a log moved). Terminals move
        // pictures with the lines of a scroll region, and xterm moves every sixel picture on the
        // screen with any scroll, which curses cannot know: then those lines are repainted in
        // place instead (a sixel picture under them is drawn again after).
        var repaint: [Int] = []
        if !full, shownPicture != nil || shownPixels != nil, let previous {
            let (sources, span) = scrollSources(from: previous, to: canvas)
            func crosses(_ area: Rect?) -> Bool { area.map { span.overlaps($0.y..<$0.maxY) } ?? false }
            if !sources.isEmpty, pixelGraphics?.kind == .sixel && shownPixels != nil || crosses(shownPicture?.bounds) || crosses(shownPixels?.bounds) {
                repaint = sources
            }
        }
        for y in repaint { _ = um_redraw_lines(Int32(y), 1) }
        if let old = shownPicture, old != picture {
            // The old picture's rows are repainted from what curses holds for them.
            _ = um_redraw_lines(Int32(old.y), Int32(old.rows))
        }
        let pixelsDamaged =
            pixels.map { pixels in
                full || cellsChanged(in: pixels.bounds, from: previous, to: canvas)
                    || (pixelGraphics?.kind == .sixel && repaint.contains { $0 >= pixels.y && $0 < pixels.y + pixels.rows })
            } ?? false
        // Smaller on a slow link and the link has recovered: drawn whole (a sixel picture covers
        // the smaller one's cells; a kitty image is replaced).
        let wholeAgain = pixels != nil && pixels == shownPixels && shownPixelsLight && !lightly
        if let old = shownPixels, old != pixels || pixelsDamaged || (wholeAgain && pixelGraphics?.kind == .kitty) {
            removePixels(old)
            shownPixels = nil
        }
        var rewritten: [Int] = []
        for y in 0..<rows {
            if !full, let previous, rowEqual(previous, canvas, y) { continue }
            rewritten.append(y)
            var x = 0
            while x < columns {
                let cell = canvas[x, y]
                if cell.isContinuation {
                    x += 1
                    continue
                }
                // The bottom-right cell scrolls the screen on some terminals; leave it alone.
                if y == height - 1 && x == width - 1 { break }
                put(cell, x: x, y: y)
                x += 1
            }
        }
        previous = canvas
        wnoutrefresh(um_stdscr())
        doupdate()
        drawPicture(picture, rewritten: rewritten)
        if let pixels, pixels != shownPixels || wholeAgain { drawPixels(pixels) }
    }

    private func fits(_ area: Rect) -> Bool {
        area.x >= 0 && area.y >= 0 && area.maxX <= width && area.maxY <= height
            && !(area.maxY == height && area.maxX == width)
    }

    /// Whether curses will write into `area` this frame: its cells differ from the last frame's.
    private func cellsChanged(in area: Rect, from previous: Canvas?, to canvas: Canvas) -> Bool {
        guard let previous else { return true }
        for y in area.y..<area.maxY {
            let start = y * canvas.width
            for i in (start + area.x)..<(start + area.maxX) where previous.cells[i] != canvas.cells[i] { return true }
        }
        return false
    }

    /// Kitty pictures are deleted. Sixel pixels are written over with spaces, every cell of
    /// them: xterm keeps a picture under cells that were only erased (EL, ECH — what curses
    /// sends for blanks) and shows it again when it repaints, or after moving it with a scroll.
    /// Curses then repaints the rows from what it holds.
    private func removePixels(_ old: PixelPicture) {
        switch pixelGraphics?.kind {
        case .kitty:
            emit(deleteKittyPictures())
            // Inside tmux the placeholders are text curses does not know of: it rewrites the rows.
            if pixelGraphics?.throughTmux == true { _ = um_redraw_lines(Int32(old.y), Int32(old.rows)) }
        case .sixel, nil:
            let blanks = [UInt8](repeating: 0x20, count: old.columns)
            var bytes = Array("\u{1B}[0m".utf8)
            for row in old.y..<old.y + old.rows { bytes += Array("\u{1B}[\(row + 1);\(old.x + 1)H".utf8) + blanks }
            emit(bytes + cursorAsCursesHasIt())
            _ = um_redraw_lines(Int32(old.y), Int32(old.rows))
        }
    }

    /// Kitty pictures are deleted all at once (the monitor shows one at a time); inside tmux,
    /// whose terminal other panes' programs share, only this one's, by its id.
    private func deleteKittyPictures() -> [UInt8] {
        pixelGraphics?.throughTmux == true ? KittyPlaceholders.remove(id: kittyID) : KittyEncoder.removeAll
    }

    /// Puts the cursor back where curses believes it is, attributes reset (as curses leaves
    /// them after an update).
    private func cursorAsCursesHasIt() -> [UInt8] {
        Array("\u{1B}[0m\u{1B}[\(um_cursor_y() + 1);\(um_cursor_x() + 1)H".utf8)
    }

    /// The rows curses could move with a scroll from `old` to `new` — those that changed while
    /// holding what the new frame shows on another row; repainted, they match nothing and curses
    /// moves no line — and the rows such a scroll could span (they and where they reappear).
    private func scrollSources(from old: Canvas, to new: Canvas) -> (sources: [Int], span: Range<Int>) {
        guard old.width == new.width, old.height == new.height else { return ([], 0..<0) }
        func key(_ canvas: Canvas, _ y: Int) -> Int {
            var hasher = Hasher()
            for i in (y * canvas.width)..<((y + 1) * canvas.width) { hasher.combine(canvas.cells[i]) }
            return hasher.finalize()
        }
        var rows: [Int: [Int]] = [:]
        for y in 0..<new.height { rows[key(new, y), default: []].append(y) }
        var sources: [Int] = []
        var low = Int.max
        var high = Int.min
        for y in 0..<old.height where !rowEqual(old, new, y) {
            let elsewhere = (rows[key(old, y)] ?? []).filter { $0 != y }
            guard !elsewhere.isEmpty else { continue }
            sources.append(y)
            low = min(low, y, elsewhere.min()!)
            high = max(high, y, elsewhere.max()!)
        }
        return (sources, sources.isEmpty ? 0..<0 : low..<high + 1)
    }

    /// Sends the picture in real pixels, then puts the cursor back where curses believes it is;
    /// smaller on a slow link, as `LightDrawing` says.
    private func drawPixels(_ pixels: PixelPicture) {
        guard let graphics = pixelGraphics else { return }
        let halvings = LightDrawing.halvings(graphics.kind, lightly: lightly)
        var light: PixelPicture?
        for _ in 0..<halvings {
            guard let smaller = (light ?? pixels).halved(cellWidth: graphics.cellWidth, cellHeight: graphics.cellHeight) else { break }
            light = smaller
        }
        var bytes: [UInt8]
        switch (graphics.kind, light) {
        case (.kitty, let light) where graphics.throughTmux:
            bytes =
                KittyPlaceholders.place(light ?? pixels, id: kittyID, over: (pixels.columns, pixels.rows), compress: Self.deflate)
                + KittyPlaceholders.cells(id: kittyID, x: pixels.x, y: pixels.y, columns: pixels.columns, rows: pixels.rows)
        case (.kitty, var light?):
            (light.x, light.y) = (pixels.x, pixels.y)
            bytes = KittyEncoder.show(light, over: (pixels.columns, pixels.rows), compress: Self.deflate)
        case (.kitty, nil): bytes = KittyEncoder.show(pixels, compress: Self.deflate)
        case (.sixel, let light): bytes = SixelEncoder.bytes(light ?? pixels)
        }
        emit(bytes + cursorAsCursesHasIt())
        shownPixels = pixels
        shownPixelsLight = light != nil
        pixelsSent = (
            bytes.count, light != nil ? bytes.count : bytes.count / LightDrawing.wholeCost(halvings: LightDrawing.halvings(graphics.kind, lightly: true))
        )
    }

    /// Draws the picture's rows that curses may have written over (all of them when it is new),
    /// then puts the cursor back where curses believes it is, attributes reset.
    private func drawPicture(_ picture: CellPicture?, rewritten: [Int]) {
        defer { shownPicture = picture }
        guard let picture, colorDepth != .none else { return }
        let depth = LightDrawing.depth(colorDepth, lightly: lightly)
        let rows: [Int] =
            picture == shownPicture && depth == shownDepth
            ? rewritten.filter { $0 >= picture.y && $0 < picture.y + picture.rows }.map { $0 - picture.y }
            : Array(0..<picture.rows)
        guard !rows.isEmpty else { return }
        shownDepth = depth
        var bytes: [UInt8] = []
        for row in rows { bytes += PictureEncoder.bytes(picture, depth: depth, rows: row..<row + 1) }
        emit(bytes + cursorAsCursesHasIt())
    }

    /// Asks the terminal to answer once it has read this far; the answer is taken out of the
    /// keys and counted (`takeShownAnswers`).
    public func askWhenShown() -> Bool {
        emit(statusQuestion)
        lateReplies.expectStatus()
        return true
    }

    public func takeShownAnswers() -> Int { lateReplies.takeStatusAnswers() }

    /// The picture in pixels the last draw sent (`pixelsSent`), once.
    public func takePixelsSent() -> (bytes: Int, lightBytes: Int)? {
        defer { pixelsSent = nil }
        return pixelsSent
    }

    /// While the link is slow, pictures in cells go in the 256-colour palette (about half the
    /// bytes) and pictures in pixels smaller (`drawPixels`). True when the one on screen should
    /// be drawn again now that the link has recovered.
    public func drawLightly(_ lightly: Bool) -> Bool {
        defer { self.lightly = lightly }
        guard !lightly && self.lightly else { return false }
        return LightDrawing.redrawOnRecovery(cellPictureShown: shownPicture != nil, depth: colorDepth, pixelsShownLight: shownPixels != nil && shownPixelsLight)
    }

    /// Writes bytes straight to the terminal (bell, notification escapes) between frames.
    public func emit(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        um_flush_stdout()
        bytes.withUnsafeBufferPointer { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    private func rowEqual(_ a: Canvas, _ b: Canvas, _ y: Int) -> Bool {
        let start = y * b.width
        for i in start..<(start + b.width) where a.cells[i] != b.cells[i] { return false }
        return true
    }

    private func put(_ cell: Cell, x: Int, y: Int) {
        var attrs = um_a_normal()
        if cell.style.bold { attrs |= um_a_bold() }
        if cell.style.dim { attrs |= um_a_dim() }
        if cell.style.reverse { attrs |= um_a_reverse() }
        if cell.style.underline { attrs |= um_a_underline() }
        let pair = colors ? pairNumber(cell.style) : 0
        var scalars = cell.character.unicodeScalars.prefix(4).map { wchar_t(bitPattern: $0.value) }
        scalars.append(0)
        _ = um_put_cell(Int32(y), Int32(x), scalars, attrs, pair)
    }

    private func pairNumber(_ style: CellStyle) -> Int16 {
        guard style.foreground != nil || style.background != nil else { return 0 }
        let fg = style.foreground.map { $0.rawValue } ?? -1
        let bg = style.background.map { $0.rawValue } ?? -1
        let key = (fg + 1) * 16 + (bg + 1)
        if let pair = pairs[key] { return pair }
        let next = pairs.count + 1
        guard next < maxPairs else { return 0 }
        init_pair(Int16(next), Int16(fg), Int16(bg))
        pairs[key] = Int16(next)
        return Int16(next)
    }
}
