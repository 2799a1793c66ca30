import Foundation
import UploadClient
import UploadCore

/// Queues checked requests, shows their events with the reporter the output calls for, and
/// returns what happened once the queue drains. Shared by `send` and `demo`.
enum SendRunner {
    static func run(_ requests: [(UploadRequest, Int64?)], options: UploadOptions, json: Bool) async throws -> TransferTracker {
        let transport = try options.makeTransport()
        let queue = UploadQueue(transport: transport, concurrency: options.concurrency, retryPolicy: options.retryPolicy)
        let style = OutputStyle.detect()
        var reporter: any SendReporter = json ? JSONReporter() : style.isTTY ? TTYReporter(style: style) as any SendReporter : PlainReporter()
        for (request, size) in requests {
            await queue.enqueue(request, totalBytes: size)
        }
        await queue.finishWhenDrained()

        var tracker = TransferTracker()
        let clock = ContinuousClock()
        let start = clock.now
        for await event in queue.events {
            let now = start.duration(to: clock.now).seconds
            tracker.apply(event, now: now)
            reporter.handle(event, tracker: tracker, now: now)
        }
        reporter.finish(tracker: tracker)
        try await transport.shutdown()
        return tracker
    }
}
