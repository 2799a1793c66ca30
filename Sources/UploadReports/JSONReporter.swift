import Foundation
import UploadCore

/// One JSON object per event (`--json`), progress at most ten times a second per upload.
public struct JSONReporter: SendReporter {
    let console: any TextSink
    var throttle = ProgressThrottle(interval: 0.1)

    public init(console: any TextSink) {
        self.console = console
    }

    public mutating func handle(_ event: UploadEvent, tracker: TransferTracker, now: Double) {
        var line = JSONLine()
        func set(_ key: String, _ value: String) { line[key] = .string(value) }
        func set(_ key: String, _ value: Int64) { line[key] = .int(value) }
        func set(_ key: String, _ value: Int) { line[key] = .int(Int64(value)) }
        switch event {
        case .queued(let record):
            set("event", "queued")
            set("id", record.id.rawValue)
            set("name", record.name)
            if let path = record.path { set("file", path) }
            if let total = record.fileSize { set("totalBytes", total) }
        case .started(let id, let attempt, let url, let total):
            set("event", "started")
            set("id", id.rawValue)
            set("attempt", attempt)
            set("url", url)
            if let total { set("totalBytes", total) }
        case .progress(let id, let bytes, let sent, let expected):
            let complete = expected.map { sent >= $0 } ?? false
            guard throttle.shouldShow(id, now: now, complete: complete) else { return }
            set("event", "progress")
            set("id", id.rawValue)
            set("bytesSent", bytes)
            set("totalBytesSent", sent)
            if let expected { set("totalBytesExpected", expected) }
            if let rate = tracker[id]?.meter.bytesPerSecond, rate.isFinite { set("bytesPerSecond", Int64(rate)) }
        case .response(let id, let response):
            set("event", "response")
            set("id", id.rawValue)
            set("status", response.status)
            set("reason", response.reason)
            set("body", response.bodyText)
            set("bodyBytes", response.bodyBytesTotal)
            if let cut = response.cut { set("answerCut", cut) }
            if let verified = response.verified { set("verified", verified) }
        case .redirected(let id, let url):
            set("event", "redirected")
            set("id", id.rawValue)
            set("url", url)
            // Whether the request's own headers (-H, --netrc) go there: only to the endpoint's origin.
            if let endpoint = tracker[id]?.record.url { line["headersSent"] = .bool(CredentialScope.carries(to: url, givenFor: endpoint)) }
        case .retryScheduled(let id, let attempt, let delay, let reason):
            set("event", "retry")
            set("id", id.rawValue)
            set("attempt", attempt)
            set("reason", reason)
            line["delaySeconds"] = .number(delay)
        case .finished(let id, let outcome):
            set("event", "finished")
            set("id", id.rawValue)
            line["ok"] = .bool(outcome.isSuccess)
            switch outcome {
            case .answered(let status):
                set("status", status)
                if let cut = tracker[id]?.response?.cut { set("answerCut", cut) }
                if let verified = tracker[id]?.response?.verified { set("verified", verified) }
            case .failed(let failure):
                set("error", failure.message)
                set("errorKind", failure.kind.rawValue)
                if let code = failure.code { set("code", Int(code)) }
            }
            if let sha256 = tracker[id]?.record.contentSHA256 { set("sha256", sha256) }
            if let elapsed = tracker[id]?.elapsed { line["seconds"] = .number((elapsed * 1000).rounded() / 1000) }
        case .allFinished(let summary):
            set("event", "allFinished")
            set("succeeded", summary.succeeded)
            set("failed", summary.failed)
            set("cancelled", summary.cancelled)
        case .resumable(let id, let point, let startedOver):
            set("event", "resumable")
            set("id", id.rawValue)
            if let point {
                set("uploadURL", point.uploadURL)
                set("offset", point.offset)
                set("bodyBytes", point.bodyLength)
                set("protocol", point.kind.rawValue)
                if point.kind == .draft { set("interopVersion", point.version) }
                if let expires = point.expires { set("expires", expires) }
            } else {
                line["resumable"] = .bool(false)
            }
            if let startedOver { set("startedOver", startedOver) }
        case .resumed(let id, let offset, let length):
            set("event", "resumed")
            set("id", id.rawValue)
            set("offset", offset)
            set("bodyBytes", length)
        case .content:
            // Said with `finished` (`sha256`), not as a line of its own.
            return
        }
        console.write(line.text + "\n")
    }

    public mutating func finish(tracker: TransferTracker) {}
}
