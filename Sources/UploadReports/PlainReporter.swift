import UploadCore

/// One plain line per event, for logs and pipes: progress at most once a second per upload.
public struct PlainReporter: SendReporter {
    let console: any TextSink
    var throttle = ProgressThrottle(interval: 1)
    /// Each running upload's line prefix (`#3 cat.jpg`), made once rather than for each of its
    /// five or so lines.
    private var prefixes: [UploadID: String] = [:]
    /// Uploads whose resource on another origin was said (once each).
    private var saidElsewhere: Set<UploadID> = []

    public init(console: any TextSink) {
        self.console = console
    }

    public mutating func handle(_ event: UploadEvent, tracker: TransferTracker, now: Double) {
        guard let id = event.uploadID, let state = tracker[id] else {
            if case .allFinished(let summary) = event {
                say(summary.finishedText(capitalized: false))
            }
            return
        }
        let who = prefixes[id] ?? "\(id) \(InvisibleCharacters.escaped(state.name))"
        if case .finished = event {
            prefixes[id] = nil
            saidElsewhere.remove(id)
        } else {
            prefixes[id] = who
        }
        switch event {
        case .queued(let record):
            say("\(who) queued\(record.fileSize.map { " (\(ByteFormat.bytes($0)))" } ?? "")")
        case .started(_, let attempt, let url, _):
            say("\(who) sending to \(url)\(attempt > 1 ? " (attempt \(attempt))" : "")")
        case .progress(_, _, let sent, let expected):
            let complete = expected.map { sent >= $0 } ?? false
            guard throttle.shouldShow(id, now: now, complete: complete) else { return }
            say("\(who) \(ProgressText.percent(state.fraction).trimmingLeadingSpaces) \(ProgressText.stats(state))")
        case .response(_, let response):
            say("\(who) answer \(response.status) \(response.reason)")
        case .redirected(_, let url):
            say("\(who) redirected to \(url), sending again\(CredentialScope.redirectNote(to: url, givenFor: state.record.url))")
        case .retryScheduled(_, let attempt, let delay, let reason):
            say("\(who) \(reason); attempt \(attempt) in \(ByteFormat.duration(delay))")
        case .finished(_, let outcome):
            let body = AnswerText.body(state)
            let cut = state.response?.cut.map { " (\($0))" } ?? ""
            let verified = state.response?.verifiedText.map { " " + $0 } ?? ""
            say("\(who) \(HTTPStatus.verdict(success: outcome.isSuccess, AnswerText.status(state)))\(verified)\(cut)\(body.isEmpty ? "" : " " + body)")
        case .resumed(_, let offset, let length):
            say("\(who) \(state.record.resumedText ?? "resumed"): \(ByteFormat.bytes(offset)) of \(ByteFormat.bytes(length)) not sent again")
        case .resumable(_, _, let why?):
            say("\(who) starting over from 0: \(why)")
        case .resumable(_, let point?, nil) where point.isElsewhere(than: state.record.url) && !saidElsewhere.contains(id):
            saidElsewhere.insert(id)
            say("\(who) the server keeps the upload at \(RedactedURL.display(point.uploadURL)), another origin than the endpoint's; its bytes go there")
        case .allFinished, .resumable, .content:
            break
        }
    }

    public mutating func finish(tracker: TransferTracker) {}

    /// One line, by the terminal escaping rule: names, URLs, answers and reasons come from outside.
    private func say(_ line: String) {
        console.write(InvisibleCharacters.escaped(line) + "\n")
    }
}

extension String {
    var trimmingLeadingSpaces: String { String(drop { $0 == " " }) }
}
