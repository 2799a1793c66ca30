import TerminalCanvas
import UploadCore

extension MonitorView {
    static let helpLines: [String] = [
        "Files",
        "  ↑ ↓  j k  PgUp PgDn  g G   move",
        "  → l Enter                 open directory (Enter on a file queues)",
        "  ← h Backspace             parent directory      ~  home",
        "  Space                     mark / unmark, move down",
        "  *                         mark the images not sent yet (again: all)",
        "  u                         queue marked files (or the current one)",
        "  r                         rename the upload (extension kept)",
        "  L                         send marked without / with location",
        "  /                         filter as you type (Esc clears)",
        "  a                         show all files / images only",
        "  Ctrl-R                    read the folder again (changes show by themselves)",
        "Queue",
        "  ↑ ↓  j k  g G             select (the response panel follows)",
        "  c  cancel    R  retry    x  clear finished    f  next failed",
        "Everywhere",
        "  Tab  switch pane    ?  this help    q  Ctrl-C  quit",
        "  J    the agent's scheduled jobs (watched folders, maintenance)",
        "  p    preview of the photo under the cursor on / off",
        "  D    where the next uploads go, among the saved destinations",
        "  F    how photos queued from now on are written: as they are, JPEG, 2048 px…",
        "  C    send the photos refused for their format again, converted (as JPEG)",
    ]

    static func drawModal(_ canvas: inout Canvas, _ modal: Modal, _ state: MonitorState, _ theme: Theme) {
        switch modal {
        case .help(let scroll):
            let help = helpLayout(in: canvas.bounds)
            canvas.fill(help.box)
            let first = min(scroll, help.maxScroll)
            let title =
                help.maxScroll == 0
                ? "Keys · any key closes"
                : "Keys \(first + 1)-\(min(help.lines.count, first + help.visible))/\(help.lines.count) · ↑↓ scroll · other keys close"
            let inside = canvas.frame(help.box, title: title, style: theme.focusedFrame, glyphs: theme.glyphs)
            for (i, line) in help.lines.dropFirst(first).enumerated() where i < inside.height {
                let isHeading = !line.hasPrefix(" ")
                canvas.write(line, x: inside.x + 1, y: inside.y + i, style: isHeading ? CellStyle(bold: true) : .plain, clip: inside)
            }
        case .jobs:
            drawJobs(&canvas, state, theme)
        case .destinations(let selected):
            drawDestinations(&canvas, state, selected: selected, theme)
        case .confirmQuit:
            let active = state.queue.activeCount
            let lines = ["\(active) upload\(active == 1 ? " is" : "s are") not finished.", "Quit and cancel \(active == 1 ? "it" : "them")?  y / n"]
            let box = centeredBox(in: canvas.bounds, width: 44, height: lines.count + 2)
            canvas.fill(box)
            let inside = canvas.frame(box, title: "Quit?", style: theme.failedBold, glyphs: theme.glyphs)
            writeLines(&canvas, lines, inside.inset(0), style: .plain)
        case .rename(_, let original, let input):
            let box = centeredBox(in: canvas.bounds, width: 56, height: 5)
            canvas.fill(box)
            let inside = canvas.frame(box, title: "Upload name for \(original)", style: theme.focusedFrame, glyphs: theme.glyphs)
            guard inside.height >= 1 else { return }
            drawInput(&canvas, input, x: inside.x, y: inside.y, width: inside.width, theme: theme)
            if inside.height >= 3 {
                canvas.write(
                    TextLayout.truncate(
                        UploadName.fileExtension(of: original).map { "Enter saves · Esc cancels · .\($0) is kept if you type none" }
                            ?? "Enter saves · Esc cancels", width: inside.width),
                    x: inside.x, y: inside.y + 2, style: theme.muted, clip: inside)
            }
        }
    }

    /// The saved destinations, the current one marked, one that cannot be used with its reason.
    static func drawDestinations(_ canvas: inout Canvas, _ state: MonitorState, selected: Int, _ theme: Theme) {
        let nameWidth = min(20, state.destinations.map { DisplayWidth.of($0.name) }.max() ?? 4)
        let box = centeredBox(in: canvas.bounds, width: 76, height: state.destinations.count + 4)
        canvas.fill(box)
        let inside = canvas.frame(box, title: "Send to · ↑↓ Enter chooses · Esc keeps", style: theme.focusedFrame, glyphs: theme.glyphs)
        let first = max(0, selected - inside.height + 2)
        for (row, index) in (first..<state.destinations.count).enumerated() where row < inside.height - 1 {
            let entry = state.destinations[index]
            let mark = entry.name == state.destinationName ? (theme.glyphs == .unicode ? "● " : "* ") : "  "
            let name = TextLayout.fit(entry.name, width: nameWidth, ellipsis: theme.glyphs.ellipsis)
            var style: CellStyle = entry.refusal == nil ? .plain : theme.muted
            if index == selected { style.reverse = true }
            let line = mark + name + "  " + (entry.refusal.map { "cannot be used: " + $0 } ?? entry.shown)
            canvas.write(
                TextLayout.fit(line, width: inside.width, ellipsis: theme.glyphs.ellipsis),
                x: inside.x, y: inside.y + row, style: style, clip: inside)
        }
        canvas.write(
            TextLayout.truncate("Uploads already queued go on as they are.", width: inside.width), x: inside.x, y: inside.maxY - 1,
            style: theme.muted, clip: inside)
    }

    /// Each job on two lines: what it is, then its interval, next run and last result.
    static func drawJobs(_ canvas: inout Canvas, _ state: MonitorState, _ theme: Theme) {
        var lines: [(String, CellStyle)] = []
        if !state.uploadsOutliveMonitor {
            lines.append(("Uploads run in this monitor (demo, --no-agent): no agent, no jobs.", theme.muted))
        } else if state.jobs.jobs.isEmpty {
            lines.append(("No scheduled jobs yet.", .plain))
        }
        let elapsed = state.now - state.jobs.receivedAt
        for job in state.jobs.jobs {
            lines.append(("#\(job.id) \(job.title)", CellStyle(bold: true)))
            let remaining = job.nextRunIn - elapsed
            var detail = "  every \(job.every) · next " + (remaining <= 0 ? "now" : "in \(DurationText.countdown(remaining))")
            if let result = job.lastResult { detail += " · last: " + result }
            lines.append((detail, job.lastFailed ? theme.failed : theme.muted))
        }
        if state.uploadsOutliveMonitor {
            lines.append(("Watch a folder: uploadmon watch FOLDER --to URL · list: uploadmon jobs", theme.muted))
        }
        let box = centeredBox(in: canvas.bounds, width: max(60, canvas.width - 8), height: lines.count + 2)
        canvas.fill(box)
        let inside = canvas.frame(box, title: "Scheduled jobs · any key closes", style: theme.focusedFrame, glyphs: theme.glyphs)
        for (i, line) in lines.enumerated() where i < inside.height {
            canvas.write(
                TextLayout.truncate(line.0, width: inside.width - 1, ellipsis: theme.glyphs.ellipsis), x: inside.x + 1, y: inside.y + i, style: line.1,
                clip: inside)
        }
    }

    /// The help as it fits `bounds`: at most 72 columns, each line wrapped to the box (a key's
    /// description continues under itself), as many lines as the screen has rows, and how far it
    /// scrolls (`maxScroll`: 0 when it all shows).
    public static func helpLayout(in bounds: Rect) -> (box: Rect, lines: [String], visible: Int, maxScroll: Int) {
        let width = min(72, bounds.width)
        let inner = max(1, width - 3)
        var lines: [String] = []
        for line in helpLines {
            guard DisplayWidth.of(line) > inner else {
                lines.append(line)
                continue
            }
            // The description's column: after the key names' run of two or more spaces.
            let indent =
                line.range(of: "  ", options: [], range: line.index(line.startIndex, offsetBy: min(2, line.count))..<line.endIndex)
                .map { range in line.distance(from: line.startIndex, to: range.upperBound) + (line[range.upperBound...].prefix { $0 == " " }.count) } ?? 4
            let hanging = min(indent, inner / 2)
            let wrapped = TextLayout.wrap(line, width: inner)
            lines.append(wrapped[0])
            for rest in TextLayout.wrap(wrapped.dropFirst().joined(separator: " "), width: max(1, inner - hanging)) {
                lines.append(String(repeating: " ", count: hanging) + rest)
            }
        }
        let box = centeredBox(in: bounds, width: width, height: lines.count + 3)
        let visible = max(1, box.height - 2)
        return (box, lines, visible, max(0, lines.count - visible))
    }

    static func centeredBox(in bounds: Rect, width: Int, height: Int) -> Rect {
        let w = min(width, bounds.width)
        let h = min(height, bounds.height)
        return Rect(x: (bounds.width - w) / 2, y: (bounds.height - h) / 2, width: w, height: h)
    }
}
