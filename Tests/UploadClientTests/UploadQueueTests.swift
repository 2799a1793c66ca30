import Foundation
import Testing
import UploadClient
import UploadCore

/// A queue bug tends to leave an upload waiting for ever: the limit turns that into a failure.
@Suite(.timeLimit(.minutes(1))) struct UploadQueueTests {
    func request(_ name: String) -> UploadRequest {
        UploadRequest(source: .file(path: "/nonexistent/\(name)"), url: "http://h/p", uploadName: name)
    }

    func collect(_ queue: UploadQueue) async -> [UploadEvent] {
        var events: [UploadEvent] = []
        for await event in queue.events { events.append(event) }
        return events
    }

    @Test func runsFirstInFirstOutWithinTheConcurrencyLimit() async throws {
        let transport = FakeTransport()
        let queue = UploadQueue(transport: transport, concurrency: 2)
        for name in ["a", "b", "c", "d"] { await queue.enqueue(request(name), totalBytes: 1) }
        await queue.finishWhenDrained()
        let collector = Task { await collect(queue) }
        await transport.finish("a", with: .answered(status: 200))
        await transport.finish("b", with: .answered(status: 200))
        await transport.finish("c", with: .answered(status: 500))
        await transport.finish("d", with: .answered(status: 201))
        let events = await collector.value
        #expect(transport.startedNames == ["a", "b", "c", "d"])
        #expect(transport.highestConcurrency == 2)
        #expect(events.last == .allFinished(UploadSummary(succeeded: 3, failed: 1)))
        let finishes = events.filter { if case .finished = $0 { true } else { false } }
        #expect(finishes.count == 4)
    }

    @Test func cancellingAQueuedUploadNeverStartsIt() async throws {
        let transport = FakeTransport()
        let queue = UploadQueue(transport: transport, concurrency: 1)
        let first = await queue.enqueue(request("a"), totalBytes: 1)
        let second = await queue.enqueue(request("b"), totalBytes: 1)
        #expect(await queue.cancel(second))
        await queue.finishWhenDrained()
        let collector = Task { await collect(queue) }
        await transport.finish("a", with: .answered(status: 200))
        let events = await collector.value
        #expect(transport.startedNames == ["a"])
        let outcome = await queue.outcome(of: second)
        guard case .failed(let failure) = outcome else {
            Issue.record("expected a failure, got \(String(describing: outcome))")
            return
        }
        #expect(failure.kind == .cancelled)
        #expect(await queue.outcome(of: first) == .answered(status: 200))
        #expect(await !queue.cancel(first))
        #expect(events.last == .allFinished(UploadSummary(succeeded: 1, failed: 0, cancelled: 1)), "a cancelled upload is not a failed one")
    }

    @Test func cancellingARunningUploadEndsItAsCancelled() async throws {
        let transport = FakeTransport()
        let queue = UploadQueue(transport: transport, concurrency: 1)
        let id = await queue.enqueue(request("a"), totalBytes: 1)
        await transport.inFlight("a")
        #expect(await queue.cancel(id))
        await queue.finishWhenDrained()
        let events = await collect(queue)
        #expect(events.contains(.finished(id, .failed(UploadFailure(.cancelled, "cancelled")))))
    }

    @Test func cancellingEverythingStartsNothingNewAndSaysWhy() async throws {
        let transport = FakeTransport()
        let queue = UploadQueue(transport: transport, concurrency: 2)
        var ids: [UploadID] = []
        for name in ["a", "b", "c", "d"] { ids.append(await queue.enqueue(request(name), totalBytes: 1)) }
        await transport.inFlight("b")
        await transport.finish("a", with: .answered(status: 200))
        await transport.inFlight("c")
        #expect(await queue.cancelAll(reason: "interrupted") == 3)
        await queue.finishWhenDrained()
        let events = await collect(queue)
        #expect(transport.startedNames == ["a", "b", "c"])
        #expect(await queue.outcome(of: ids[0]) == .answered(status: 200))
        #expect(await queue.outcome(of: ids[1]) == .failed(UploadFailure(.cancelled, "cancelled (interrupted)")))
        #expect(await queue.outcome(of: ids[2]) == .failed(UploadFailure(.cancelled, "cancelled (interrupted)")))
        #expect(await queue.outcome(of: ids[3]) == .failed(UploadFailure(.cancelled, "cancelled before it started (interrupted)")))
        #expect(events.last == .allFinished(UploadSummary(succeeded: 1, failed: 0, cancelled: 3)))
        #expect(await queue.cancelAll(reason: "again") == 0)
    }

    @Test func aFailedUploadStaysAndCanBeRetriedUnderTheSameID() async throws {
        let transport = FakeTransport()
        let queue = UploadQueue(transport: transport, concurrency: 1)
        let id = await queue.enqueue(request("a"), totalBytes: 1)
        var events = queue.events.makeAsyncIterator()
        await transport.finish("a", with: .failed(UploadFailure(.cannotConnect, "refused")))
        while let event = await events.next(), event != .finished(id, .failed(UploadFailure(.cannotConnect, "refused"))) {}
        #expect(await queue.retry(id))
        await transport.finish("a", with: .answered(status: 200))
        await queue.finishWhenDrained()
        var rest: [UploadEvent] = []
        while let event = await events.next() { rest.append(event) }
        #expect(await queue.attempts(of: id) == 2)
        #expect(rest.contains(.started(id, attempt: 2, url: "http://h/p", totalBytes: 10)))
        #expect(await queue.outcome(of: id) == .answered(status: 200))
        #expect(await !queue.retry(id))
    }

    @Test func automaticRetriesStopAtTheLimit() async throws {
        let transport = FakeTransport()
        let queue = UploadQueue(transport: transport, concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 2), sleep: { _ in })
        let id = await queue.enqueue(request("a"), totalBytes: 1)
        await queue.finishWhenDrained()
        let collector = Task { await collect(queue) }
        for _ in 0..<3 { await transport.finish("a", with: .answered(status: 503)) }
        let events = await collector.value
        #expect(await queue.attempts(of: id) == 3)
        #expect(events.filter { if case .retryScheduled = $0 { true } else { false } }.count == 2)
        #expect(await queue.outcome(of: id) == .answered(status: 503))
    }

    @Test func cancellingDuringRetryWaitEndsTheUpload() async throws {
        let transport = FakeTransport()
        let queue = UploadQueue(transport: transport, concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 3, baseDelay: 60))
        let id = await queue.enqueue(request("a"), totalBytes: 1)
        var iterator = queue.events.makeAsyncIterator()
        await transport.finish("a", with: .failed(UploadFailure(.connectionLost, "reset")))
        await queue.finishWhenDrained()
        while let event = await iterator.next() {
            if case .retryScheduled = event { break }
        }
        #expect(await queue.cancel(id))
        var events: [UploadEvent] = []
        while let event = await iterator.next() { events.append(event) }
        #expect(await queue.attempts(of: id) == 1)
        #expect(events.contains { if case .finished(id, .failed(let f)) = $0 { f.kind == .cancelled } else { false } })
    }

    /// A cancel that comes while the attempt is already returning a transient failure (so
    /// cancelling its task changes nothing) used to be dropped, and the upload retried.
    @Test func aCancelWhileTheAttemptIsReturningAFailureIsNotRetried() async throws {
        let transport = FakeTransport(endsOnCancel: false)
        let queue = UploadQueue(transport: transport, concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 3), sleep: { _ in })
        let id = await queue.enqueue(request("a"), totalBytes: 1)
        await transport.inFlight("a")
        #expect(await queue.cancel(id, reason: "by the user"))
        await transport.finish("a", with: .failed(UploadFailure(.connectionLost, "reset")))
        await queue.finishWhenDrained()
        let events = await collect(queue)
        #expect(await queue.attempts(of: id) == 1)
        #expect(transport.startedNames == ["a"])
        #expect(!events.contains { if case .retryScheduled = $0 { true } else { false } }, "\(events)")
        #expect(await queue.outcome(of: id) == .failed(UploadFailure(.cancelled, "cancelled (by the user)")))
    }

    /// The server answered before the cancel reached the attempt: the answer is what happened.
    @Test func aCancelThatComesAfterTheAnswerKeepsTheAnswer() async throws {
        let transport = FakeTransport(endsOnCancel: false)
        let queue = UploadQueue(transport: transport, concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 3), sleep: { _ in })
        let id = await queue.enqueue(request("a"), totalBytes: 1)
        await transport.inFlight("a")
        #expect(await queue.cancel(id))
        await transport.finish("a", with: .answered(status: 503))
        await queue.finishWhenDrained()
        _ = await collect(queue)
        #expect(await queue.attempts(of: id) == 1)
        #expect(await queue.outcome(of: id) == .answered(status: 503))
    }
}
