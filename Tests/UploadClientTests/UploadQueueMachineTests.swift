import UploadTesting
import Foundation
import Testing
@testable import UploadClient
import UploadCore

/// Where the server keeps the upload the machine tests resume: at `offset` of its 6,000 bytes.
private func point(_ offset: Int64) -> ResumePoint {
    ResumePoint(
        uploadURL: "http://h/resumable/t", version: 8, boundary: "B", bodyLength: 6000,
        file: FileFingerprint(size: 5800, modificationNanoseconds: 1), offset: offset)
}

/// The queue's decisions, input by input, with no task, clock or transport: every order of
/// events that real tasks make rare is written down here.
@Suite struct UploadQueueMachineTests {
    typealias Machine = UploadQueueMachine

    func request(_ name: String) -> UploadRequest {
        UploadRequest(source: .file(path: "/nowhere/\(name)"), url: "http://h/p", uploadName: name)
    }

    func result(_ outcome: UploadOutcome) -> AttemptResult {
        AttemptResult(outcome: outcome, response: nil, bytesSent: 0)
    }

    let reset = UploadOutcome.failed(UploadFailure(.connectionLost, "reset"))
    let id1 = UploadID(1), id2 = UploadID(2), id3 = UploadID(3)

    func starts(_ actions: [Machine.Action]) -> [UploadID] {
        actions.compactMap { if case .start(let id, _, _) = $0 { id } else { nil } }
    }

    func events(_ actions: [Machine.Action]) -> [UploadEvent] {
        actions.compactMap { if case .emit(let event) = $0 { event } else { nil } }
    }

    @Test func startsInOrderWithinTheLimitAndTheNextWhenOneEnds() {
        var machine = Machine(concurrency: 2, retryPolicy: RetryPolicy())
        #expect(starts(machine.enqueue(request("a"), totalBytes: 1, id: id1)) == [id1])
        #expect(starts(machine.enqueue(request("b"), totalBytes: 1, id: id2)) == [id2])
        #expect(starts(machine.enqueue(request("c"), totalBytes: 1, id: id3)) == [])
        let ended = machine.attemptEnded(id1, attempt: 1, result: result(.answered(status: 200)), reported: nil, at: t0)
        #expect(ended == [.emit(.finished(id1, .answered(status: 200))), .start(id3, attempt: 1, request: request("c"))])
    }

    @Test func aRaisedLimitStartsWaitingUploadsAtOnceALoweredOneLetsRunningOnesFinish() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy())
        let id4 = UploadID(4)
        for (id, name) in [(id1, "a"), (id2, "b"), (id3, "c"), (id4, "d")] { _ = machine.enqueue(request(name), totalBytes: 1, id: id) }
        #expect(starts(machine.setConcurrency(3)) == [id2, id3])
        #expect(starts(machine.setConcurrency(1)) == [], "nothing running is stopped")
        let ok = result(.answered(status: 200))
        #expect(starts(machine.attemptEnded(id1, attempt: 1, result: ok, reported: nil, at: t0)) == [], "two still run: over the new limit")
        #expect(starts(machine.attemptEnded(id2, attempt: 1, result: ok, reported: nil, at: t0)) == [])
        #expect(starts(machine.attemptEnded(id3, attempt: 1, result: ok, reported: nil, at: t0)) == [id4])
    }

    /// What each upload sending may have in flight (an S3 upload's parts): the concurrency
    /// shared out, the remainder to the oldest, one each while others wait for a slot.
    @Test func theConcurrencyIsSharedOutAmongTheUploadsSending() {
        var machine = Machine(concurrency: 5, retryPolicy: RetryPolicy())
        #expect(machine.shares.isEmpty)
        _ = machine.enqueue(request("a"), totalBytes: 1, id: id1)
        #expect(machine.shares == [id1: 5])
        _ = machine.enqueue(request("b"), totalBytes: 1, id: id2)
        #expect(machine.shares == [id1: 3, id2: 2])
        _ = machine.setConcurrency(2)
        _ = machine.enqueue(request("c"), totalBytes: 1, id: id3)
        #expect(machine.shares == [id1: 1, id2: 1], "c waits: nobody takes more than one")
        _ = machine.attemptEnded(id1, attempt: 1, result: result(.answered(status: 200)), reported: nil, at: t0)
        _ = machine.attemptEnded(id2, attempt: 1, result: result(.answered(status: 200)), reported: nil, at: t0)
        #expect(machine.shares == [id3: 2])
        _ = machine.setConcurrency(1)
        _ = machine.enqueue(request("d"), totalBytes: 1, id: UploadID(4))
        #expect(machine.shares == [id3: 1])
    }

    /// Each drain's summary counts the uploads that finished in it: the agent forgets each
    /// upload once its journal has the end, and the drain still counts it; a retry by hand is
    /// counted in the drain it finishes in, once.
    @Test func theDrainCountsForgottenUploadsAndARetryOnce() {
        var machine = Machine(concurrency: 2, retryPolicy: RetryPolicy(maxRetries: 0))
        _ = machine.enqueue(request("a"), totalBytes: 1, id: id1)
        _ = machine.enqueue(request("b"), totalBytes: 1, id: id2)
        _ = machine.attemptEnded(id1, attempt: 1, result: result(.answered(status: 200)), reported: nil, at: t0)
        #expect(machine.forgetFinished([id1]) == 1)
        let first = machine.attemptEnded(id2, attempt: 1, result: result(.answered(status: 500)), reported: nil, at: t0)
        #expect(first.last == .emit(.allFinished(UploadSummary(succeeded: 1, failed: 1))), "a forgotten success still counts")
        _ = machine.retry(id2)
        let again = machine.attemptEnded(id2, attempt: 2, result: result(.answered(status: 200)), reported: nil, at: t0)
        #expect(again.last == .emit(.allFinished(UploadSummary(succeeded: 1, failed: 0))), "this drain: the retried one, as it ended")
        // Retried twice by hand within one drain: counted once, as it ended last.
        let id4 = UploadID(4)
        _ = machine.enqueue(request("c"), totalBytes: 1, id: id3)
        _ = machine.enqueue(request("d"), totalBytes: 1, id: id4)
        _ = machine.attemptEnded(id3, attempt: 1, result: result(.answered(status: 500)), reported: nil, at: t0)
        #expect(machine.retry(id3) != nil)
        _ = machine.attemptEnded(id3, attempt: 2, result: result(.answered(status: 500)), reported: nil, at: t0)
        #expect(machine.retry(id3) != nil)
        _ = machine.attemptEnded(id3, attempt: 3, result: result(.answered(status: 200)), reported: nil, at: t0)
        let third = machine.attemptEnded(id4, attempt: 1, result: result(.answered(status: 500)), reported: nil, at: t0)
        #expect(third.last == .emit(.allFinished(UploadSummary(succeeded: 1, failed: 1))))
    }

    /// The race from the queue: cancel reaches the attempt after the transport already has a
    /// transient failure. The attempt still comes back with that failure; no retry follows.
    @Test func aCancelledAttemptThatFailsTransientlyIsNotRetried() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 3))
        _ = machine.enqueue(request("a"), totalBytes: 1, id: id1)
        #expect(machine.cancel(id1, reason: "interrupted") == [.cancelAttempt(id1)])
        #expect(machine.cancel(id1, reason: "again") == [], "a second cancel asks nothing more")
        let ended = machine.attemptEnded(id1, attempt: 1, result: result(reset), reported: nil, at: t0)
        let outcome = UploadOutcome.failed(UploadFailure(.cancelled, "cancelled (interrupted)"))
        #expect(ended == [.emit(.finished(id1, outcome)), .emit(.allFinished(UploadSummary(succeeded: 0, failed: 0, cancelled: 1)))])
        #expect(machine.attempts(of: id1) == 1)
    }

    @Test func aCancelledAttemptKeepsAnAnswerThatCameFirst() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 3))
        _ = machine.enqueue(request("a"), totalBytes: 1, id: id1)
        _ = machine.cancel(id1)
        let ended = machine.attemptEnded(id1, attempt: 1, result: result(.answered(status: 503)), reported: nil, at: t0)
        #expect(events(ended).first == .finished(id1, .answered(status: 503)))
        #expect(!ended.contains { if case .wait = $0 { true } else { false } })
    }

    @Test func aTransportCancellationKeepsItsOwnWords() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy())
        _ = machine.enqueue(request("a"), totalBytes: 1, id: id1)
        _ = machine.cancel(id1, reason: "interrupted")
        let words = "cancelled while waiting for the answer (the server may have stored the file)"
        let ended = machine.attemptEnded(id1, attempt: 1, result: result(.failed(UploadFailure(.cancelled, words))), reported: nil, at: t0)
        #expect(events(ended).first == .finished(id1, .failed(UploadFailure(.cancelled, words + " (interrupted)"))))
    }

    @Test func aCancelDuringTheWaitEndsAtOnceAndTheLateTimerIsIgnored() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 3, baseDelay: 60))
        _ = machine.enqueue(request("a"), totalBytes: 1, id: id1)
        let ended = machine.attemptEnded(id1, attempt: 1, result: result(reset), reported: nil, at: t0)
        #expect(ended.contains { if case .wait(id1, attempt: 2, _) = $0 { true } else { false } })
        // Waiting as the record says it: the next attempt, why, and when (the machine's own clock is the input's).
        guard case .waitingToRetry(2, let reason, let due) = machine.phase(of: id1) else {
            Issue.record("\(String(describing: machine.phase(of: id1)))")
            return
        }
        #expect(reason == result(reset).outcome.words(reason: nil) && due > t0 && due <= t0.addingTimeInterval(120))
        let cancelled = machine.cancel(id1) ?? []
        #expect(cancelled.first == .cancelWait(id1))
        #expect(events(cancelled).first == .finished(id1, .failed(UploadFailure(.cancelled, "cancelled while waiting to retry"))))
        #expect(machine.retryDue(id1, attempt: 2) == [])
        #expect(machine.attempts(of: id1) == 1)
    }

    /// A cut that leaves the server with more of the upload than before is tried again at once,
    /// and the retry count starts over: five cuts of a long upload finish under `--retries 2`.
    /// Cuts that move nothing on back off and end at the limit as before (the retry at once
    /// after the last move counts as the first of them).
    @Test func anAttemptThatMovedTheServersOffsetOnIsRetriedAtOnceAndResetsTheCount() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 2, baseDelay: 5))
        _ = machine.enqueue(request("a"), totalBytes: 6000, id: id1)
        for attempt in 1...5 {
            let ended = machine.attemptEnded(
                id1, attempt: attempt,
                result: AttemptResult(
                    outcome: reset, response: nil, bytesSent: 1000, resume: point(Int64(attempt) * 1000)), reported: point(Int64(attempt) * 1000), at: t0)
            #expect(ended.contains(.wait(id1, attempt: attempt + 1, seconds: 0)), "\(ended)")
            #expect(starts(machine.retryDue(id1, attempt: attempt + 1)) == [id1])
        }
        // No progress: the usual backoff, then the limit.
        let stuck = machine.attemptEnded(
            id1, attempt: 6, result: AttemptResult(outcome: reset, response: nil, bytesSent: 0, resume: point(5000)), reported: nil, at: t0)
        #expect(stuck.contains(.wait(id1, attempt: 7, seconds: 10)), "\(stuck)")
        _ = machine.retryDue(id1, attempt: 7)
        let final = machine.attemptEnded(
            id1, attempt: 7, result: AttemptResult(outcome: reset, response: nil, bytesSent: 0, resume: point(5000)), reported: nil, at: t0)
        #expect(events(final).contains(.finished(id1, reset)))
    }

    /// A server whose offset goes up and down (1000, 500, 1000, 500, …) moves nothing on past
    /// the furthest it confirmed: `--retries 2` ends it after the usual backoff instead of
    /// retrying at once for ever.
    @Test func anOffsetThatGoesUpAndDownDoesNotResetTheCount() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 2, baseDelay: 5))
        _ = machine.enqueue(request("a"), totalBytes: 6000, id: id1)
        var attempt = 1
        var finished = false
        while attempt <= 20, !finished {
            let offset: Int64 = attempt % 2 == 1 ? 1000 : 500
            let ended = machine.attemptEnded(
                id1, attempt: attempt,
                result: AttemptResult(
                    outcome: reset, response: nil, bytesSent: 0, resume: point(offset)), reported: point(offset), at: t0)
            finished = events(ended).contains { if case .finished = $0 { true } else { false } }
            if !finished { _ = machine.retryDue(id1, attempt: attempt + 1) }
            attempt += 1
        }
        #expect(finished, "still retrying after 20 attempts")
        #expect(attempt - 1 <= 4, "the first move, then two retries and the end: \(attempt - 1) attempts")
    }

    /// A cut after body bytes went out is tried again at once even before the server confirmed
    /// a move (the first cut of an upload), but a server that keeps nothing of what it takes
    /// gets the usual backoff from the second time on.
    @Test func aCutAfterBytesWentOutIsRetriedAtOnceOnlyUntilTheServerFailsToMoveOn() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 5, baseDelay: 5))
        _ = machine.enqueue(request("a"), totalBytes: 6000, id: id1)
        let point = ResumePoint(
            uploadURL: "http://h/resumable/t", version: 8, boundary: "B", bodyLength: 6000,
            file: FileFingerprint(size: 5800, modificationNanoseconds: 1), offset: 0)
        let cut = AttemptResult(outcome: reset, response: nil, bytesSent: 3000, resume: point)
        #expect(machine.attemptEnded(id1, attempt: 1, result: cut, reported: nil, at: t0).contains(.wait(id1, attempt: 2, seconds: 0)))
        _ = machine.retryDue(id1, attempt: 2)
        #expect(machine.attemptEnded(id1, attempt: 2, result: cut, reported: nil, at: t0).contains(.wait(id1, attempt: 3, seconds: 10)))
        _ = machine.retryDue(id1, attempt: 3)
        // Without a resource on the server, bytes sent are lost: the usual backoff.
        let plain = AttemptResult(outcome: reset, response: nil, bytesSent: 3000)
        #expect(machine.attemptEnded(id1, attempt: 3, result: plain, reported: nil, at: t0).contains(.wait(id1, attempt: 4, seconds: 20)))
    }

    /// A failure the queue will not retry, or a cancel while waiting, removes what the server
    /// keeps of the upload; a failure that is retried keeps it, a success has none left.
    @Test func aFinalFailureDiscardsWhatTheServerKeeps() {
        func discards(_ actions: [Machine.Action]) -> [ResumePoint] {
            actions.compactMap { if case .discard(_, let point, _) = $0 { point } else { nil } }
        }
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 1, baseDelay: 5))
        _ = machine.enqueue(request("a"), totalBytes: 6000, id: id1)
        let cut = AttemptResult(outcome: reset, response: nil, bytesSent: 0, resume: point(2000))
        let retried = machine.attemptEnded(id1, attempt: 1, result: cut, reported: nil, at: t0)
        #expect(discards(retried).isEmpty, "a retry continues it")
        _ = machine.retryDue(id1, attempt: 2)
        let final = machine.attemptEnded(id1, attempt: 2, result: cut, reported: point(2000), at: t0)
        #expect(discards(final) == [point(2000)])
        #expect(events(final).prefix(2) == [.resumable(id1, nil), .finished(id1, reset)], "the record forgets it before it ends")
        // A retry by hand then starts over.
        #expect(
            machine.retry(id1).map { actions in actions.contains { if case .start(_, _, let request) = $0 { request.resume == nil } else { false } } } == true)

        // Cancelled while waiting to retry: the same.
        _ = machine.enqueue(request("b"), totalBytes: 6000, id: id2)
        _ = machine.attemptEnded(id1, attempt: 3, result: result(.answered(status: 200)), reported: nil, at: t0)
        let waiting = machine.attemptEnded(id2, attempt: 1, result: cut, reported: nil, at: t0)
        #expect(discards(waiting).isEmpty)
        #expect(discards(machine.cancel(id2) ?? []) == [point(2000)])
        // A success leaves nothing to remove.
        _ = machine.enqueue(request("c"), totalBytes: 6000, id: id3)
        #expect(
            discards(
                machine.attemptEnded(
                    id3, attempt: 1, result: AttemptResult(outcome: .answered(status: 200), response: nil, bytesSent: 6000), reported: nil, at: t0)
            ).isEmpty)
        // An upload URL another service handed out (`--upload-url`) is that service's: kept.
        var handed = request("d")
        handed.uploadURL = "http://h/resumable/t"
        _ = machine.enqueue(handed, totalBytes: 6000, id: UploadID(4))
        let handedFinal = machine.attemptEnded(
            UploadID(4), attempt: 1,
            result: AttemptResult(
                outcome: .answered(status: 400), response: nil,
                bytesSent: 0, resume: point(2000)), reported: point(2000), at: t0)
        #expect(discards(handedFinal).isEmpty)
        #expect(events(handedFinal).contains(.finished(UploadID(4), .answered(status: 400))))
    }

    /// One channel for the resume point: whatever the attempt's own reports said while it ran,
    /// the record (the fold of what the queue says) ends where the next attempt starts, and a
    /// point the request came with (a journal's) is in the first event.
    @Test func theRecordAndTheNextAttemptAgreeOnTheResumePoint() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 3, baseDelay: 5))
        var kept = request("a")
        kept.resume = point(1000)
        var record = UploadRecord.queued(id1, request: request("a"), fileSize: 6000, origin: "test", at: t0)
        func fold(_ actions: [Machine.Action]) {
            for event in events(actions) { record.apply(event, at: t0) }
        }
        func nextStart(_ actions: [Machine.Action]) -> UploadRequest? {
            actions.lazy.compactMap { if case .start(_, _, let request) = $0 { request } else { nil } }.first
        }
        let queued = machine.enqueue(kept, record: record, attemptsSoFar: 0, retryPolicy: nil)
        fold(queued)
        #expect(record.resume == point(1000), "the journal's point is in the queued record")
        #expect(nextStart(queued)?.resume == point(1000))

        // Reports said 3000, the result says 2000 (the server's own word at the end): said again.
        let first = machine.attemptEnded(
            id1, attempt: 1, result: AttemptResult(outcome: reset, response: nil, bytesSent: 0, resume: point(2000)),
            reported: point(3000), at: t0)
        #expect(events(first).first == .resumable(id1, point(2000)))
        record.resume = point(3000)  // what the reports left it at
        fold(first)
        let second = machine.retryDue(id1, attempt: 2)
        #expect(record.resume == point(2000) && nextStart(second)?.resume == point(2000))

        // Reports agree with the result: nothing said twice.
        let agreed = machine.attemptEnded(
            id1, attempt: 2, result: AttemptResult(outcome: reset, response: nil, bytesSent: 0, resume: point(4000)),
            reported: point(4000), at: t0)
        #expect(!events(agreed).contains { if case .resumable = $0 { true } else { false } })

        // The server lost it and the attempt ended without a point, though a report said one.
        _ = machine.retryDue(id1, attempt: 3)
        record.resume = point(4000)
        let lost = machine.attemptEnded(id1, attempt: 3, result: result(reset), reported: point(4500), at: t0)
        fold(lost)
        #expect(record.resume == nil)
        #expect(nextStart(machine.retryDue(id1, attempt: 4))?.resume == nil)

        // A retry by hand after a final failure: the queued record says no point, as the request.
        let failed = machine.attemptEnded(
            id1, attempt: 4, result: AttemptResult(outcome: .answered(status: 400), response: nil, bytesSent: 0, resume: point(5000)),
            reported: point(5000), at: t0)
        fold(failed)
        #expect(record.resume == nil)
        let again = machine.retry(id1) ?? []
        fold(again)
        #expect(record.resume == nil && nextStart(again)?.resume == nil)
    }

    /// An attempt count from a damaged journal (Int.max) once made the next attempt's count overflow.
    @Test func anAttemptCountFromOutsideIsBounded() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy())
        let actions = machine.enqueue(request("a"), totalBytes: 1, id: id1, attemptsSoFar: .max)
        #expect(starts(actions) == [id1])
        #expect(machine.attempts(of: id1) == 1_000_001)
        _ = machine.enqueue(request("b"), totalBytes: 1, id: id2, attemptsSoFar: -5)
        #expect(machine.attempts(of: id2) == 0, "queued behind a: not started yet")
    }

    @Test func aRetryThatComesDueGoesBeforeNewUploads() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy(maxRetries: 1))
        _ = machine.enqueue(request("a"), totalBytes: 1, id: id1)
        _ = machine.attemptEnded(id1, attempt: 1, result: result(reset), reported: nil, at: t0)
        // The slot is free while a waits: b takes it; c waits behind.
        #expect(starts(machine.enqueue(request("b"), totalBytes: 1, id: id2)) == [id2])
        _ = machine.enqueue(request("c"), totalBytes: 1, id: id3)
        #expect(machine.retryDue(id1, attempt: 2) == [])
        #expect(starts(machine.attemptEnded(id2, attempt: 1, result: result(.answered(status: 200)), reported: nil, at: t0)) == [id1])
    }

    @Test func anAttemptThatIsNotTheOneInFlightChangesNothing() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy())
        _ = machine.enqueue(request("a"), totalBytes: 1, id: id1)
        #expect(machine.attemptEnded(id1, attempt: 2, result: result(.answered(status: 200)), reported: nil, at: t0) == [])
        #expect(machine.attemptEnded(id2, attempt: 1, result: result(.answered(status: 200)), reported: nil, at: t0) == [])
        #expect(machine.phase(of: id1) == .sending(attempt: 1) && !machine.cancelRequested(id1))
    }

    @Test func cancellingEverythingTakesTheQueuedFirstAndStartsNothing() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy())
        for (n, name) in ["a", "b", "c"].enumerated() { _ = machine.enqueue(request(name), totalBytes: 1, id: UploadID(n + 1)) }
        let (count, actions) = machine.cancelAll(reason: "interrupted")
        #expect(count == 3)
        #expect(starts(actions).isEmpty)
        #expect(
            events(actions) == [
                .finished(id2, .failed(UploadFailure(.cancelled, "cancelled before it started (interrupted)"))),
                .finished(id3, .failed(UploadFailure(.cancelled, "cancelled before it started (interrupted)"))),
            ])
        #expect(actions.last == .cancelAttempt(id1))
        #expect(machine.cancelAll().count == 0, "the one sending was told already")
    }

    @Test func theEventsCloseOnceDrainedAfterTheySaidSo() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy())
        #expect(machine.finishWhenDrained() == [.closeEvents])
        var other = Machine(concurrency: 1, retryPolicy: RetryPolicy())
        _ = other.enqueue(request("a"), totalBytes: 1, id: id1)
        #expect(other.finishWhenDrained() == [])
        let ended = other.attemptEnded(id1, attempt: 1, result: result(.answered(status: 500)), reported: nil, at: t0)
        #expect(ended.suffix(2) == [.emit(.allFinished(UploadSummary(succeeded: 0, failed: 1))), .closeEvents])
    }

    /// Random inputs in random order (a seeded generator, so a failure repeats), checked
    /// against what must always hold: no more attempts in flight than allowed, exactly the
    /// attempts the machine started are in flight, every upload's events in a legal order, and
    /// once nothing is in flight or waiting, every upload finished and the drain said so.
    @Test(arguments: 1...40) func anyOrderOfInputsKeepsTheRules(seed: UInt64) {
        var random = SplitMix(seed: seed)
        let concurrency = Int(random.next() % 3) + 1
        var machine = Machine(concurrency: concurrency, retryPolicy: RetryPolicy(maxRetries: Int(random.next() % 3)))
        var inFlight: [UploadID: Int] = [:]
        var waits: [UploadID: Int] = [:]
        var life: [UploadID: [String]] = [:]
        var nextID = 1
        var drains = 0
        var finishedThisDrain: [UploadID: UploadOutcome] = [:]

        func take(_ actions: [Machine.Action]) {
            for action in actions {
                switch action {
                case .start(let id, let attempt, _):
                    #expect(inFlight[id] == nil, "two attempts of \(id)")
                    inFlight[id] = attempt
                    life[id, default: []].append("start")
                case .wait(let id, let attempt, _): waits[id] = attempt
                case .cancelWait(let id): waits[id] = nil
                case .emit(.queued(let record)): life[record.id, default: []].append("queued")
                case .emit(.finished(let id, let outcome)):
                    life[id, default: []].append("finished")
                    finishedThisDrain[id] = outcome
                case .emit(.retryScheduled(let id, _, _, _)): life[id, default: []].append("retry")
                case .emit(.allFinished(let summary)):
                    drains += 1
                    // Every upload that finished since the last drain, as it ended last.
                    let ends = Array(finishedThisDrain.values)
                    let cancelled = ends.count { if case .failed(let failure) = $0 { failure.kind == .cancelled } else { false } }
                    #expect(
                        summary
                            == UploadSummary(succeeded: ends.count(where: \.isSuccess), failed: ends.count { !$0.isSuccess } - cancelled, cancelled: cancelled))
                    finishedThisDrain = [:]
                default: break
                }
            }
            #expect(inFlight.count <= concurrency)
            for (id, attempt) in inFlight {
                if case .sending(attempt) = machine.phase(of: id) {
                } else {
                    Issue.record("\(id) attempt \(attempt) in flight but the machine says \(String(describing: machine.phase(of: id)))")
                }
            }
        }

        let outcomes: [UploadOutcome] = [
            .answered(status: 200), .answered(status: 503), .answered(status: 400), reset,
            .failed(UploadFailure(.cancelled, "cancelled")),
        ]
        for _ in 0..<200 {
            let known = Array(life.keys)
            switch random.next() % 7 {
            case 0, 1:
                take(machine.enqueue(request("f\(nextID)"), totalBytes: 1, id: UploadID(nextID)))
                nextID += 1
            case 2:
                if let (id, attempt) = inFlight.randomElement(using: &random) {
                    inFlight[id] = nil
                    take(machine.attemptEnded(id, attempt: attempt, result: result(outcomes.randomElement(using: &random)!), reported: nil, at: t0))
                }
            case 3:
                if let (id, attempt) = waits.randomElement(using: &random) {
                    waits[id] = nil
                    take(machine.retryDue(id, attempt: attempt))
                }
            case 4:
                if let id = known.randomElement(using: &random) { take(machine.cancel(id) ?? []) }
            case 5:
                if let id = known.randomElement(using: &random) { take(machine.retry(id) ?? []) }
            default:
                if random.next() % 10 == 0 { take(machine.cancelAll().actions) }
            }
        }
        // Let everything run out: attempts end with a final answer, waits come due.
        while !inFlight.isEmpty || !waits.isEmpty {
            if let (id, attempt) = inFlight.first {
                inFlight[id] = nil
                take(machine.attemptEnded(id, attempt: attempt, result: result(.answered(status: 200)), reported: nil, at: t0))
            } else if let (id, attempt) = waits.first {
                waits[id] = nil
                take(machine.retryDue(id, attempt: attempt))
            }
        }
        #expect(machine.isIdle)
        for (id, steps) in life {
            #expect(machine.outcome(of: id) != nil, "\(id) never finished: \(steps)")
            // queued (start (retry start)* )? finished, and again after a manual retry.
            var expectingQueued = true
            var finishedOnce = false
            for step in steps {
                switch step {
                case "queued":
                    #expect(expectingQueued, "\(id): \(steps)")
                    expectingQueued = false
                    finishedOnce = false
                case "finished":
                    #expect(!expectingQueued && !finishedOnce, "\(id): \(steps)")
                    expectingQueued = true
                    finishedOnce = true
                default: #expect(!expectingQueued, "\(id): \(steps)")
                }
            }
            #expect(steps.last == "finished", "\(id): \(steps)")
        }
        if !life.isEmpty { #expect(drains >= 1) }
    }
}

extension UploadQueueMachineTests {
    /// An upload the caller held back and the user cancelled: queued and ended at once, without
    /// taking a slot, and retried by id like any other.
    @Test func anUploadCancelledBeforeItWasQueuedEndsAtOnceAndCanBeRetried() {
        var machine = Machine(concurrency: 1, retryPolicy: RetryPolicy())
        #expect(starts(machine.enqueue(request("a"), totalBytes: 1, id: id1)) == [id1])
        let record = UploadRecord.queued(id2, request: request("b"), fileSize: 1, origin: "test", at: t0)
        let cancelled = machine.enqueueCancelled(request("b"), record: record, reason: "by hand")
        #expect(starts(cancelled) == [])
        #expect(events(cancelled) == [.queued(record), .finished(id2, .failed(UploadFailure(.cancelled, "cancelled before it started (by hand)")))])
        let again = machine.enqueueCancelled(request("b"), record: record, reason: nil)
        #expect(again == [], "an id already known is ignored")
        // The slot still belongs to the first; the retry waits for it.
        let retried = machine.retry(id2) ?? []
        #expect(starts(retried) == [])
        let ended = machine.attemptEnded(id1, attempt: 1, result: result(.answered(status: 200)), reported: nil, at: t0)
        #expect(starts(ended) == [id2])
    }
}

/// A small seeded generator: the same seed gives the same sequence of inputs.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The machine reads no clock: the time an attempt ended is given.
private let t0 = Date(timeIntervalSince1970: 1_700_000_000)

extension UploadQueueMachine {
    /// An upload of `request` named by its request, `totalBytes` long, queued at `t0`.
    mutating func enqueue(_ request: UploadRequest, totalBytes: Int64?, id: UploadID, attemptsSoFar: Int = 0, retryPolicy: RetryPolicy? = nil) -> [Action] {
        enqueue(
            request, record: .queued(id, request: request, fileSize: totalBytes, origin: "test", at: t0),
            attemptsSoFar: attemptsSoFar, retryPolicy: retryPolicy)
    }
}
