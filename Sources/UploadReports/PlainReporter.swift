import UploadCore

/// One plain line per event, for logs and pipes: progress at most once a second per upload.
public struct PlainReporter: SendReporter {
    let console: any TextSink
    var throttle = ProgressThrottle(interval: 1)
    /// Each running upload's line prefix (`#3 cat.jpg`), made once rather than for each of its
    /// five or so lines.
    private var prefixes: [UploadID: String] = [:]

    public init(console: any TextSink) {
        self.console = console
    }

    public mutating func handle(_ event: UploadEvent, tracker: TransferTracker, now: Double) {
        guard let id = event.uploadID, let state = tracker[id] else {
            if case .allFinished(let summary) = event {
                console.write("all \(summary.total) uploads finished: \(summary.succeeded) ok, \(summary.failed) failed\n")
            }
            return
        }
        let who = prefixes[id] ?? "\(id) \(InvisibleCharacters.escaped(state.name))"
        if case .finished = event { prefixes[id] = nil } else { prefixes[id] = who }
        switch event {
        case .queued(_, _, let total):
            console.write("\(who) queued\(total.map { " (\(ByteFormat.bytes($0)))" } ?? "")\n")
        case .started(_, let attempt, let url, _):
            console.write("\(who) sending to \(url)\(attempt > 1 ? " (attempt \(attempt))" : "")\n")
        case .progress(_, _, let sent, let expected):
            let complete = expected.map { sent >= $0 } ?? false
            guard throttle.shouldShow(id, now: now, complete: complete) else { return }
            console.write("\(who) \(ProgressText.percent(state.fraction).trimmingLeadingSpaces) \(ProgressText.stats(state))\n")
        case .response(_, let response):
            console.write("\(who) answer \(response.status) \(response.reason)\n")
        case .redirected(_, let url):
            console.write("\(who) redirected to \(url), sending again\n")
        case .retryScheduled(_, let attempt, let delay, let reason):
            console.write("\(who) \(reason); attempt \(attempt) in \(ByteFormat.duration(delay))\n")
        case .finished(_, let outcome):
            let mark = outcome.isSuccess ? "OK" : "FAILED"
            let body = AnswerText.body(state)
            console.write("\(who) \(mark) \(AnswerText.status(state))\(body.isEmpty ? "" : " " + body)\n")
        case .resumed(_, let offset, let length):
            console.write("\(who) \(state.record.resumedText ?? "resumed"): \(ByteFormat.bytes(offset)) of \(ByteFormat.bytes(length)) not sent again\n")
        case .resumable(_, _, let why?):
            console.write("\(who) starting over from 0: \(why)\n")
        case .allFinished, .resumable:
            break
        }
    }

    public mutating func finish(tracker: TransferTracker) {}
}

extension String {
    var trimmingLeadingSpaces: String { String(drop { $0 == " " }) }
}
