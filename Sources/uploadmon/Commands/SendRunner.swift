import Foundation
import UploadClient
import UploadCore
import UploadReports

/// What a headless run did.
struct SendResult {
    var tracker: TransferTracker
    /// Set when Ctrl-C or SIGTERM cancelled the uploads.
    var interruption: Int32?
}

/// Queues checked requests, shows their events with the reporter the output calls for, and
/// returns what happened once the queue drains; Ctrl-C cancels what has not finished (see
/// `Interruption`). Shared by `send` and `demo`.
enum SendRunner {
    static func run(_ requests: [(UploadRequest, Int64?)], options: UploadOptions, json: Bool) async throws -> SendResult {
        let transport = try options.makeTransport()
        let queue = UploadQueue(transport: transport, concurrency: options.concurrency, retryPolicy: options.retryPolicy)
        let style = OutputStyle.detect()
        let lines = LineOutput()
        var reporter: any SendReporter = json
            ? JSONReporter(console: lines) : style.isTTY ? TTYReporter(style: style) as any SendReporter : PlainReporter(console: lines)
        let flusher = lines.flushPeriodically()
        for (request, size) in requests {
            await queue.enqueue(request, totalBytes: size)
        }
        await queue.finishWhenDrained()
        let interruption = Interruption { _ in
            Task { await queue.cancelAll(reason: "interrupted") }
        }
        defer { interruption.stop() }

        var tracker = TransferTracker()
        let clock = ContinuousClock()
        let start = clock.now
        for await event in queue.events {
            let now = start.duration(to: clock.now).seconds
            tracker.apply(event, now: now)
            reporter.handle(event, tracker: tracker, now: now)
        }
        reporter.finish(tracker: tracker)
        flusher.cancel()
        lines.flush()
        try await transport.shutdown()
        if let number = interruption.signalNumber {
            let cancelled = tracker.states.values.filter { if case .failed(let f) = $0.outcome, f.kind == .cancelled { true } else { false } }.count
            Console.complain("uploadmon: \(number == SIGINT ? "interrupted" : "terminated"); \(cancelled) upload(s) cancelled")
        }
        return SendResult(tracker: tracker, interruption: interruption.signalNumber)
    }
}
