import UploadCore

/// On a terminal: one line per file, redrawn in place (name, bar, %, bytes, rate, ETA); a
/// finished line turns into the answer (green ✓ / red ✗ where colour is allowed) and, once every
/// line above it has finished too, scrolls into the permanent output.
public struct TTYReporter: SendReporter {
    let style: OutputStyle
    let console: any TextSink
    private var committed = 0
    private var drawn = 0
    private var lastDraw = -Double.infinity

    public init(style: OutputStyle, console: any TextSink = Console()) {
        self.style = style
        self.console = console
    }

    public mutating func handle(_ event: UploadEvent, tracker: TransferTracker, now: Double) {
        switch event {
        case .progress:
            guard now - lastDraw >= 0.1 else { return }
        case .allFinished(let summary):
            redraw(tracker)
            let text = summary.finishedText(capitalized: true)
            console.write(paint(text, summary.failed == 0 ? "32" : "31") + "\n")
            return
        default:
            break
        }
        lastDraw = now
        redraw(tracker)
    }

    public mutating func finish(tracker: TransferTracker) {
        redraw(tracker)
    }

    private mutating func redraw(_ tracker: TransferTracker) {
        var out = drawn > 0 ? "\r\u{1B}[\(drawn)A" : ""
        var index = committed
        var stillCommitting = true
        drawn = 0
        while index < tracker.order.count {
            guard let state = tracker[tracker.order[index]] else {
                index += 1
                continue
            }
            out += "\u{1B}[2K" + line(state) + "\n"
            if stillCommitting && state.outcome != nil {
                committed = index + 1
            } else {
                stillCommitting = false
                drawn += 1
            }
            index += 1
        }
        console.write(out)
    }

    private func line(_ state: TransferState) -> String {
        let width = max(style.width - 1, 20)
        let name = fit(InvisibleCharacters.escaped(state.name), 24)
        let reason = state.retryReason.map(InvisibleCharacters.escaped)
        guard let outcome = state.outcome else {
            if let reason {
                return fit("… \(name) \(reason); waiting to retry", width)
            }
            let attempt = state.attempt > 1 ? " (attempt \(state.attempt))" : ""
            let barWidth = max(10, min(30, width - 24 - 50))
            let bar = state.totalBytes == nil ? "" : "[\(ProgressText.bar(fraction: state.fraction, width: barWidth))] "
            let percent = state.totalBytes == nil ? "" : ProgressText.percent(state.fraction) + "  "
            return fit("  \(pad(name, 24)) \(bar)\(percent)\(ProgressText.stats(state))\(attempt)", width)
        }
        let mark = outcome.isSuccess ? "✓" : "✗"
        var text = "\(mark) \(name)  \(InvisibleCharacters.escaped(AnswerText.status(state)))"
        if let verified = state.response?.verifiedText { text += " " + verified }
        if let cut = state.response?.cut { text += " (\(cut))" }
        if let elapsed = state.elapsed { text += "  \(ByteFormat.bytes(state.sentBytes)) in \(ByteFormat.duration(elapsed))" }
        let body = AnswerText.body(state)
        if !body.isEmpty { text += "  " + InvisibleCharacters.escaped(body) }
        return paint(fit(text, width), outcome.isSuccess ? "32" : "31")
    }

    private func paint(_ text: String, _ code: String) -> String {
        style.color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    private func fit(_ text: String, _ width: Int) -> String {
        text.count <= width ? text : String(text.prefix(max(width - 1, 0))) + "…"
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
