import Foundation
import UploadCore

/// One JSON object per event (`--json`), progress at most ten times a second per upload.
struct JSONReporter: SendReporter {
    let console = Console()
    var throttle = ProgressThrottle(interval: 0.1)

    mutating func handle(_ event: UploadEvent, tracker: TransferTracker, now: Double) {
        var object: [String: Any] = [:]
        switch event {
        case .queued(let id, let name, let total):
            object = ["event": "queued", "id": id.rawValue, "name": name]
            if let total { object["totalBytes"] = total }
        case .started(let id, let attempt, let url, let total):
            object = ["event": "started", "id": id.rawValue, "attempt": attempt, "url": url]
            if let total { object["totalBytes"] = total }
        case .progress(let id, let bytes, let sent, let expected):
            let complete = expected.map { sent >= $0 } ?? false
            guard throttle.shouldShow(id, now: now, complete: complete) else { return }
            object = ["event": "progress", "id": id.rawValue, "bytesSent": bytes, "totalBytesSent": sent]
            if let expected { object["totalBytesExpected"] = expected }
            if let rate = tracker[id]?.meter.bytesPerSecond { object["bytesPerSecond"] = Int(rate) }
        case .response(let id, let response):
            object = ["event": "response", "id": id.rawValue, "status": response.status, "reason": response.reason,
                      "body": response.bodyText, "bodyBytes": response.bodyBytesTotal]
        case .redirected(let id, let url):
            object = ["event": "redirected", "id": id.rawValue, "url": url]
        case .retryScheduled(let id, let attempt, let delay, let reason):
            object = ["event": "retry", "id": id.rawValue, "attempt": attempt, "delaySeconds": delay, "reason": reason]
        case .finished(let id, let outcome):
            object = ["event": "finished", "id": id.rawValue, "ok": outcome.isSuccess]
            switch outcome {
            case .answered(let status): object["status"] = status
            case .failed(let failure):
                object["error"] = failure.message
                object["errorKind"] = failure.kind.rawValue
                if let code = failure.code { object["code"] = Int(code) }
            }
            if let elapsed = tracker[id]?.elapsed { object["seconds"] = (elapsed * 1000).rounded() / 1000 }
        case .allFinished(let summary):
            object = ["event": "allFinished", "succeeded": summary.succeeded, "failed": summary.failed]
        }
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) {
            console.write(String(decoding: data, as: UTF8.self) + "\n")
        }
    }

    mutating func finish(tracker: TransferTracker) {}
}
