import Foundation
import NIOConcurrencyHelpers
import UploadCore

/// Runs uploads first in, first out, at most `concurrency` at once, and reports every step as an
/// `UploadEvent` on `events`.
///
/// Per upload the events come in order: `queued`, then for each attempt `started`, `progress`…,
/// `response` (when the server answered), then either `retryScheduled` (and another attempt) or
/// `finished`. When nothing is queued, running or waiting to retry, `allFinished` follows.
/// A failed or cancelled upload stays in the queue with its reason and can be retried by id.
public actor UploadQueue {
    public nonisolated let events = UploadEvents()
    private let transport: any UploadTransport
    private let sleep: @Sendable (Double) async throws -> Void
    /// What the records' times are read from.
    private let clock: HouseClock

    /// The decisions; everything below only carries out the actions it returns.
    private var machine: UploadQueueMachine
    private var attemptTasks: [UploadID: Task<Void, Never>] = [:]
    private var waitTasks: [UploadID: Task<Void, Never>] = [:]
    /// Transports of uploads that asked for their own (kept for a retry by id).
    private var transports: [UploadID: any UploadTransport] = [:]
    /// Removals of what servers keep of failed uploads, still going: the events end after them.
    private var discards: [Int: Task<Void, Never>] = [:]
    private var discardCount = 0
    private let log: @Sendable (String) -> Void
    /// The machine's `shares`, as attempts running off the actor read them.
    private let shares = NIOLockedValueBox<[UploadID: Int]>([:])

    /// - Parameter sleep: how the queue waits before a retry (tests pass a fast one).
    /// - Parameter log: where it says what became of a failed upload's part on the server.
    public init(
        transport: any UploadTransport,
        concurrency: Int = 2,
        retryPolicy: RetryPolicy = RetryPolicy(),
        sleep: @escaping @Sendable (Double) async throws -> Void = { try await Task.sleep(nanoseconds: UInt64(DurationRule.nanoseconds($0))) },
        log: @escaping @Sendable (String) -> Void = { _ in },
        clock: HouseClock = .system
    ) {
        self.log = log
        self.transport = transport
        self.machine = UploadQueueMachine(concurrency: concurrency, retryPolicy: retryPolicy)
        self.sleep = sleep
        self.clock = clock
    }

    /// Adds an upload; it starts as soon as a slot is free. `totalBytes` is what the caller
    /// knows of the size for display (`nil` for a pipe); `transport`: this upload's own (other
    /// settings than the queue's), or nil for the queue's.
    @discardableResult
    public func enqueue(
        _ request: UploadRequest, totalBytes: Int64?, origin: String = "send", fileModified: Int64? = nil, fileChanged: Int64? = nil,
        withoutLocation: Bool = false, transport: (any UploadTransport)? = nil
    ) -> UploadID {
        let id = machine.unusedID
        var record = UploadRecord.queued(
            id, request: request, fileSize: totalBytes, fileModified: fileModified, fileChanged: fileChanged, origin: origin, at: clock.wall())
        record.withoutLocation = withoutLocation
        enqueue(request, record: record, transport: transport)
        return id
    }

    /// Adds the upload `record` under its id, which the caller owns (the agent's journal numbers
    /// uploads), with the attempts it already made, and optionally its own transport and retry
    /// policy (uploads queued by different clients may ask for different TLS trust, rate limits
    /// or retries). An id already known to the queue is ignored.
    public func enqueue(
        _ request: UploadRequest, record: UploadRecord, attemptsSoFar: Int = 0,
        transport: (any UploadTransport)? = nil, retryPolicy: RetryPolicy? = nil
    ) {
        guard machine.phase(of: record.id) == nil else { return }
        if let transport { transports[record.id] = transport }
        var request = request
        // One key for all of the upload's attempts (the agent's journal keeps it across restarts).
        if request.idempotencyKey == nil { request.idempotencyKey = UploadRequest.newIdempotencyKey() }
        run(machine.enqueue(request, record: record, attemptsSoFar: attemptsSoFar, retryPolicy: retryPolicy))
    }

    /// One upload for `enqueue(_:)`: as the single-upload `enqueue` takes it.
    public struct Item: Sendable {
        public var request: UploadRequest
        public var record: UploadRecord
        public var attemptsSoFar: Int
        public var transport: (any UploadTransport)?
        public var retryPolicy: RetryPolicy?

        public init(
            _ request: UploadRequest, record: UploadRecord, attemptsSoFar: Int = 0,
            transport: (any UploadTransport)? = nil, retryPolicy: RetryPolicy? = nil
        ) {
            self.request = request
            self.record = record
            self.attemptsSoFar = attemptsSoFar
            self.transport = transport
            self.retryPolicy = retryPolicy
        }
    }

    /// Adds uploads in order, in one call: a caller that feeds the queue many at a time pays
    /// one hop to the queue for all of them.
    public func enqueue(_ items: [Item]) {
        for item in items {
            enqueue(item.request, record: item.record, attemptsSoFar: item.attemptsSoFar, transport: item.transport, retryPolicy: item.retryPolicy)
        }
    }

    /// Adds an upload that was cancelled before the caller handed it over (it held the upload
    /// back for want of room): it ends at once, "cancelled before it started", and may be
    /// retried by id like any other.
    public func enqueueCancelled(_ item: Item, reason: String? = nil) {
        guard machine.phase(of: item.record.id) == nil else { return }
        if let transport = item.transport { transports[item.record.id] = transport }
        run(machine.enqueueCancelled(item.request, record: item.record, attemptsSoFar: item.attemptsSoFar, reason: reason))
    }

    /// Cancels a queued, waiting or running upload. Returns false for unknown or finished ids.
    /// A `reason` ("interrupted") becomes part of the failure: "cancelled (interrupted)".
    /// A running upload is never retried after this, whatever its attempt ends with.
    @discardableResult
    public func cancel(_ id: UploadID, reason: String? = nil) -> Bool {
        guard let actions = machine.cancel(id, reason: reason) else { return false }
        run(actions)
        return true
    }

    /// Cancels everything not finished yet: the queued uploads first, so that no slot freed by a
    /// cancelled one starts another. Returns how many were cancelled.
    @discardableResult
    public func cancelAll(reason: String? = nil) -> Int {
        let (count, actions) = machine.cancelAll(reason: reason)
        run(actions)
        return count
    }

    /// Queues a failed or cancelled upload again under the same id; the attempt count goes on.
    @discardableResult
    public func retry(_ id: UploadID) -> Bool {
        guard let actions = machine.retry(id) else { return false }
        run(actions)
        return true
    }

    /// Ends the event stream once everything queued so far has finished.
    /// How many uploads run at once from now on (at least 1); uploads already sending go on.
    public func setConcurrency(_ count: Int) {
        run(machine.setConcurrency(max(1, count)))
    }

    /// Ends the event stream once every upload queued so far has finished.
    public func finishWhenDrained() {
        run(machine.finishWhenDrained())
    }

    public func outcome(of id: UploadID) -> UploadOutcome? { machine.outcome(of: id) }

    /// True while anything is queued, sending or waiting to retry.
    public var isBusy: Bool { !machine.isIdle }

    /// Drops finished uploads from memory (they live on in the caller's records); returns how many.
    @discardableResult
    public func forgetFinished(_ ids: [UploadID]) -> Int {
        let dropped = machine.forgetFinished(ids)
        for id in ids where machine.phase(of: id) == nil { transports[id] = nil }
        return dropped
    }

    public func attempts(of id: UploadID) -> Int { machine.attempts(of: id) }

    /// How many uploads the queue keeps in memory (finished ones until they are forgotten).
    public var held: Int { machine.entries.count }

    // MARK: The shell

    private func run(_ actions: [UploadQueueMachine.Action]) {
        let now = machine.shares
        shares.withLockedValue { $0 = now }
        // Whatever changed the line (a start, an upload queued behind the others), the next
        // in it are made ready.
        defer { prepareAhead() }
        for action in actions {
            switch action {
            case .emit(let event):
                events.yield(event)
            case .start(let id, let attempt, let request):
                start(id, attempt: attempt, request: request)
            case .cancelAttempt(let id):
                attemptTasks[id]?.cancel()
            case .wait(let id, let attempt, let seconds):
                let sleep = self.sleep
                waitTasks[id] = Task {
                    guard (try? await sleep(seconds)) != nil else { return }
                    self.retryDue(id, attempt: attempt)
                }
            case .cancelWait(let id):
                waitTasks.removeValue(forKey: id)?.cancel()
            case .discard(let id, let point, let request):
                let transport = transports[id] ?? self.transport
                let log = self.log
                discardCount += 1
                let key = discardCount
                discards[key] = Task {
                    let said = await transport.discard(point, of: request)
                    log("\(id) \(RedactedURL.display(point.uploadURL)): the failed upload's part \(said)")
                    self.discarded(key)
                }
            case .closeEvents:
                let pending = Array(discards.values)
                let events = self.events
                if pending.isEmpty {
                    events.finish()
                } else {
                    Task {
                        for task in pending { await task.value }
                        events.finish()
                    }
                }
            }
        }
    }

    private func start(_ id: UploadID, attempt: Int, request: UploadRequest) {
        let events = self.events
        let transport = transports[id] ?? self.transport
        // Where the attempt's own reports leave the record: the machine says the result's point
        // again when it differs.
        let reported = NIOLockedValueBox(request.resume)
        let observer = AttemptObserver(
            // Events are for showing and logging: a URL's credentials never travel in them.
            started: { url, total in events.yield(.started(id, attempt: attempt, url: RedactedURL.display(url), totalBytes: total)) },
            progress: { bytes, total, expected in
                events.yield(.progress(id, bytesSent: bytes, totalBytesSent: total, totalBytesExpected: expected))
            },
            redirected: { url in events.yield(.redirected(id, to: RedactedURL.display(url))) },
            resumable: { point, why in
                reported.withLockedValue { $0 = point }
                events.yield(.resumable(id, point, startedOver: why))
            },
            resumed: { offset, length in events.yield(.resumed(id, offset: offset, of: length)) },
            content: { sha256, source, name in events.yield(.content(id, sha256: sha256, source: source, name: name)) },
            share: { [shares] in shares.withLockedValue { $0[id] } ?? 1 }
        )
        let executor = transport.beginAttempt()
        attemptTasks[id] = Task(executorPreference: executor) {
            let result = await transport.perform(request, observer: observer)
            transport.endAttempt(on: executor)
            await self.attemptEnded(id, attempt: attempt, result: result, reported: reported.withLockedValue { $0 })
        }
    }

    /// The uploads next in line, handed to their transports to make ready while others send
    /// (`HTTPUploadTransport.prepareAhead`: photos converted on the cores the uploads leave free).
    private func prepareAhead() {
        let next = machine.upcoming(HTTPUploadTransport.aheadLimit)
        guard !next.isEmpty else { return }
        if transports.isEmpty { return transport.prepareAhead(next.map { $0.1 }) }
        for (id, request) in next { (transports[id] ?? transport).prepareAhead([request]) }
    }

    private func discarded(_ key: Int) {
        discards[key] = nil
    }

    private func attemptEnded(_ id: UploadID, attempt: Int, result: AttemptResult, reported: ResumePoint?) {
        attemptTasks[id] = nil
        run(machine.attemptEnded(id, attempt: attempt, result: result, reported: reported, at: clock.wall()))
    }

    private func retryDue(_ id: UploadID, attempt: Int) {
        waitTasks[id] = nil
        run(machine.retryDue(id, attempt: attempt))
    }
}
