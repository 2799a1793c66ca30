import Foundation
import UploadCore

/// Runs uploads first in, first out, at most `concurrency` at once, and reports every step as an
/// `UploadEvent` on `events`.
///
/// Per upload the events come in order: `queued`, then for each attempt `started`, `progress`…,
/// `response` (when the server answered), then either `retryScheduled` (and another attempt) or
/// `finished`. When nothing is queued, running or waiting to retry, `allFinished` follows.
/// A failed or cancelled upload stays in the queue with its reason and can be retried by id.
public actor UploadQueue {
    public nonisolated let events: AsyncStream<UploadEvent>
    private let continuation: AsyncStream<UploadEvent>.Continuation
    private let transport: any UploadTransport
    private let concurrency: Int
    private let retryPolicy: RetryPolicy
    private let clock: @Sendable (Double) async throws -> Void

    private var entries: [UploadID: UploadEntry] = [:]
    private var waiting = IDQueue()
    /// Uploads sending now, and those sending or waiting to retry: kept as counts so that
    /// queueing thousands of uploads costs the same per upload as queueing one.
    private var running = 0
    private var active = 0
    private var nextID = 1
    private var drainReported = true

    /// - Parameter sleep: how the queue waits before a retry (tests pass a fast one).
    public init(
        transport: any UploadTransport,
        concurrency: Int = 2,
        retryPolicy: RetryPolicy = RetryPolicy(),
        sleep: @escaping @Sendable (Double) async throws -> Void = { try await Task.sleep(nanoseconds: UInt64(DurationRule.nanoseconds($0))) }
    ) {
        precondition(concurrency >= 1, "at least one upload must be able to run")
        (events, continuation) = AsyncStream.makeStream(of: UploadEvent.self, bufferingPolicy: .unbounded)
        self.transport = transport
        self.concurrency = concurrency
        self.retryPolicy = retryPolicy
        self.clock = sleep
    }

    /// Adds an upload; it starts as soon as a slot is free. `totalBytes` is what the caller
    /// knows of the size for display (`nil` for a pipe).
    @discardableResult
    public func enqueue(_ request: UploadRequest, totalBytes: Int64?) -> UploadID {
        let id = UploadID(nextID)
        enqueue(request, totalBytes: totalBytes, id: id)
        return id
    }

    /// Adds an upload under an id the caller owns (the agent's journal numbers uploads), with the
    /// attempts it already made, and optionally its own transport and retry policy (uploads queued
    /// by different clients may ask for different TLS trust, rate limits or retries).
    /// An id already known to the queue is ignored.
    public func enqueue(
        _ request: UploadRequest, totalBytes: Int64?, id: UploadID, attemptsSoFar: Int = 0,
        transport: (any UploadTransport)? = nil, retryPolicy: RetryPolicy? = nil
    ) {
        guard entries[id] == nil else { return }
        nextID = max(nextID, id.rawValue + 1)
        var entry = UploadEntry(request: request, totalBytes: totalBytes)
        entry.attempts = attemptsSoFar
        entry.transport = transport
        entry.retryPolicy = retryPolicy
        entries[id] = entry
        waiting.append(id)
        drainReported = false
        continuation.yield(.queued(id, name: request.uploadName, totalBytes: totalBytes))
        pump()
    }

    /// Cancels a queued, waiting or running upload. Returns false for unknown or finished ids.
    /// A `reason` ("interrupted") becomes part of the failure: "cancelled (interrupted)".
    @discardableResult
    public func cancel(_ id: UploadID, reason: String? = nil) -> Bool {
        guard var entry = entries[id] else { return false }
        entry.cancelReason = reason
        switch entry.phase {
        case .queued:
            waiting.remove(id)
            finishUnstarted(id, &entry)
            reportDrainIfIdle()
        case .running(let task), .waitingToRetry(let task):
            entries[id] = entry
            task.cancel()
        case .finished:
            return false
        }
        return true
    }

    /// Cancels everything not finished yet: the queued uploads first, so that no slot freed by a
    /// cancelled one starts another. Returns how many were cancelled.
    @discardableResult
    public func cancelAll(reason: String? = nil) -> Int {
        var cancelled = 0
        while let id = waiting.popFirst() {
            guard var entry = entries[id] else { continue }
            entry.cancelReason = reason
            finishUnstarted(id, &entry)
            cancelled += 1
        }
        for (id, entry) in entries where entry.phase.isActive {
            if cancel(id, reason: reason) { cancelled += 1 }
        }
        reportDrainIfIdle()
        return cancelled
    }

    /// Ends a queued upload that never started (already out of `waiting`) as cancelled.
    private func finishUnstarted(_ id: UploadID, _ entry: inout UploadEntry) {
        finish(id, entry: &entry, outcome: .failed(Self.cancelled(entry, "cancelled before it started")))
    }

    private static func cancelled(_ entry: UploadEntry, _ message: String) -> UploadFailure {
        UploadFailure(.cancelled, entry.cancelReason.map { "\(message) (\($0))" } ?? message)
    }

    /// Queues a failed or cancelled upload again under the same id; the attempt count goes on.
    @discardableResult
    public func retry(_ id: UploadID) -> Bool {
        guard var entry = entries[id], case .finished(let outcome) = entry.phase, !outcome.isSuccess else { return false }
        setPhase(id, &entry, .queued)
        waiting.append(id)
        drainReported = false
        continuation.yield(.queued(id, name: entry.request.uploadName, totalBytes: entry.totalBytes))
        pump()
        return true
    }

    /// Ends the event stream once everything queued so far has finished.
    public func finishWhenDrained() {
        closeWhenDrained = true
        if isIdle { continuation.finish() }
    }

    public func outcome(of id: UploadID) -> UploadOutcome? { entries[id]?.phase.outcome }

    /// True while anything is queued, sending or waiting to retry.
    public var isBusy: Bool { !isIdle }

    /// Drops finished uploads from memory (they live on in the caller's records); returns how many.
    @discardableResult
    public func forgetFinished(_ ids: [UploadID]) -> Int {
        var dropped = 0
        for id in ids {
            if case .finished = entries[id]?.phase {
                entries[id] = nil
                dropped += 1
            }
        }
        return dropped
    }
    public func attempts(of id: UploadID) -> Int { entries[id]?.attempts ?? 0 }

    private var closeWhenDrained = false

    private var isIdle: Bool { waiting.isEmpty && active == 0 }

    /// Every change of phase goes through here, so the counts stay right.
    private func setPhase(_ id: UploadID, _ entry: inout UploadEntry, _ phase: UploadEntry.Phase) {
        if case .running = entry.phase { running -= 1 }
        if entry.phase.isActive { active -= 1 }
        entry.phase = phase
        if case .running = phase { running += 1 }
        if phase.isActive { active += 1 }
        entries[id] = entry
    }

    private func pump() {
        while running < concurrency, let id = waiting.popFirst() {
            start(id)
        }
    }

    private func start(_ id: UploadID) {
        guard var entry = entries[id] else { return }
        entry.attempts += 1
        let attempt = entry.attempts
        let request = entry.request
        let continuation = self.continuation
        let transport = entry.transport ?? self.transport
        let observer = AttemptObserver(
            // Events are for showing and logging: a URL's credentials never travel in them.
            started: { url, total in continuation.yield(.started(id, attempt: attempt, url: RedactedURL.display(url), totalBytes: total)) },
            progress: { bytes, total, expected in
                continuation.yield(.progress(id, bytesSent: bytes, totalBytesSent: total, totalBytesExpected: expected))
            },
            redirected: { url in continuation.yield(.redirected(id, to: RedactedURL.display(url))) }
        )
        let task = Task {
            let result = await transport.perform(request, observer: observer)
            self.attemptEnded(id, attempt: attempt, result: result)
        }
        setPhase(id, &entry, .running(task))
    }

    private func attemptEnded(_ id: UploadID, attempt: Int, result: AttemptResult) {
        guard var entry = entries[id] else { return }
        if let response = result.response {
            continuation.yield(.response(id, response))
        }
        if case .failed(let failure) = result.outcome, failure.kind == .cancelled {
            finish(id, entry: &entry, outcome: .failed(Self.cancelled(entry, failure.message)))
        } else if let delay = (entry.retryPolicy ?? retryPolicy).delay(after: result.outcome, response: result.response, attempt: attempt) {
            let reason = Self.describe(result.outcome, response: result.response)
            continuation.yield(.retryScheduled(id, attempt: attempt + 1, delaySeconds: delay, reason: reason))
            let sleep = clock
            let waitTask = Task {
                do {
                    try await sleep(delay)
                    self.retryDue(id)
                } catch {
                    self.retryAbandoned(id)
                }
            }
            setPhase(id, &entry, .waitingToRetry(waitTask))
        } else {
            finish(id, entry: &entry, outcome: result.outcome)
        }
        pump()
        reportDrainIfIdle()
    }

    private func retryDue(_ id: UploadID) {
        guard var entry = entries[id], case .waitingToRetry = entry.phase else { return }
        if Task.isCancelled { return retryAbandoned(id) }
        setPhase(id, &entry, .queued)
        waiting.prepend(id)
        pump()
    }

    private func retryAbandoned(_ id: UploadID) {
        guard var entry = entries[id], case .waitingToRetry = entry.phase else { return }
        finish(id, entry: &entry, outcome: .failed(Self.cancelled(entry, "cancelled while waiting to retry")))
        reportDrainIfIdle()
    }

    private func finish(_ id: UploadID, entry: inout UploadEntry, outcome: UploadOutcome) {
        setPhase(id, &entry, .finished(outcome))
        continuation.yield(.finished(id, outcome))
    }

    private func reportDrainIfIdle() {
        guard isIdle, !drainReported else { return }
        drainReported = true
        let outcomes = entries.values.compactMap { $0.phase.outcome }
        let ok = outcomes.filter(\.isSuccess).count
        continuation.yield(.allFinished(UploadSummary(succeeded: ok, failed: outcomes.count - ok)))
        if closeWhenDrained { continuation.finish() }
    }

    static func describe(_ outcome: UploadOutcome, response: UploadResponse?) -> String {
        switch outcome {
        case .answered(let status):
            return HTTPStatus.line(status, reason: response?.reason)
        case .failed(let failure):
            return failure.description
        }
    }
}

/// One upload as the queue tracks it.
struct UploadEntry {
    enum Phase {
        case queued
        case running(Task<Void, Never>)
        case waitingToRetry(Task<Void, Never>)
        case finished(UploadOutcome)

        var outcome: UploadOutcome? {
            if case .finished(let outcome) = self { return outcome }
            return nil
        }

        /// Sending or waiting to retry.
        var isActive: Bool {
            switch self {
            case .running, .waitingToRetry: true
            case .queued, .finished: false
            }
        }
    }

    let request: UploadRequest
    let totalBytes: Int64?
    var attempts = 0
    var transport: (any UploadTransport)?
    var retryPolicy: RetryPolicy?
    /// Why the user cancelled it, when they said.
    var cancelReason: String?
    var phase: Phase = .queued
}

/// Ids waiting to start, first in first out, with O(1) taking from the front.
struct IDQueue {
    private var items: [UploadID] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }

    mutating func append(_ id: UploadID) { items.append(id) }

    /// Puts an id in front (a retry that came due goes before new uploads).
    mutating func prepend(_ id: UploadID) {
        if head > 0 {
            head -= 1
            items[head] = id
        } else {
            items.insert(id, at: 0)
        }
    }

    mutating func popFirst() -> UploadID? {
        guard head < items.count else { return nil }
        let id = items[head]
        head += 1
        if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return id
    }

    mutating func remove(_ id: UploadID) {
        guard let index = items[head...].firstIndex(of: id) else { return }
        items.remove(at: index)
    }
}
