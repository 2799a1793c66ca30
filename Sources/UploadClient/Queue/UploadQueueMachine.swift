import Foundation
import UploadCore

/// Every decision of the upload queue, as a value: what runs next, when an upload is retried,
/// how a cancel ends it, when the queue has drained. Each input returns the actions to take;
/// `UploadQueue` is the thin shell that takes them (starts and cancels attempt tasks, sleeps
/// before retries, yields events). No task, clock or transport lives in here, so every order
/// of inputs can be tested directly, including the ones real tasks make rare.
struct UploadQueueMachine {

    struct Entry {
        var request: UploadRequest
        /// The upload's record as it was queued: what `queued` says, again when retried by hand
        /// (then with where the server keeps the upload now).
        var record: UploadRecord
        var attempts = 0
        /// The last attempt after which the server kept more of the upload than before: the
        /// retry count and its backoff start again from there.
        var attemptThatLastMovedOn = 0
        /// The furthest offset the server ever confirmed for this upload: moving on means going
        /// past it, so a server whose offset goes up and down cannot reset the count forever.
        var furthestConfirmed: Int64 = 0
        /// The last retry was started at once, on the word of bytes sent rather than of an
        /// offset the server confirmed.
        var retriedAtOnceUnconfirmed = false
        var retryPolicy: RetryPolicy?
        /// Why the user cancelled it, when they said.
        var cancelReason: String?
        /// Where the upload stands, as its record says it.
        var phase: UploadPhase = .queued
        /// The drain it finished in (`drain`), counted in that drain's summary.
        var finishedInDrain = -1
        /// The user cancelled the attempt in flight and its task was told: whatever the attempt
        /// ends with, it is not retried.
        var cancelRequested = false
    }

    enum Action: Equatable {
        case emit(UploadEvent)
        /// Start attempt number `attempt`; its end comes back as `attemptEnded(id, attempt:…)`.
        case start(UploadID, attempt: Int, request: UploadRequest)
        /// Cancel the attempt in flight; its end still comes back through `attemptEnded`.
        case cancelAttempt(UploadID)
        /// After `seconds`, input `retryDue(id, attempt:)`.
        case wait(UploadID, attempt: Int, seconds: Double)
        /// The wait is void: drop it (a `retryDue` that comes anyway is ignored).
        case cancelWait(UploadID)
        /// The upload failed for good while the server keeps part of it: remove that (best effort).
        case discard(UploadID, ResumePoint, UploadRequest)
        /// No event will follow.
        case closeEvents
    }

    private(set) var concurrency: Int
    let retryPolicy: RetryPolicy

    private(set) var entries: [UploadID: Entry] = [:]
    private var waiting = IDQueue()
    /// Counts kept as the phases change, so that queueing thousands of uploads costs the same
    /// per upload as queueing one.
    private var sending = 0
    /// The uploads sending, for their shares of the concurrency.
    private var sendingIDs = Set<UploadID>()
    private var active = 0
    /// Uploads finished since the last drain was reported, by outcome, kept as phases change:
    /// the drain's summary counts every upload that finished in it, also those forgotten since
    /// (the agent forgets them at once), and not one retried by hand and running again.
    private var finishedCounts = (succeeded: 0, failed: 0, cancelled: 0)
    /// Which drain this is: counted up as each is reported.
    private var drain = 0
    private var nextID = 1
    private var drainReported = true
    private var closeWhenDrained = false

    init(concurrency: Int, retryPolicy: RetryPolicy) {
        precondition(concurrency >= 1, "at least one upload must be able to run")
        self.concurrency = concurrency
        self.retryPolicy = retryPolicy
    }

    // MARK: Queries

    func outcome(of id: UploadID) -> UploadOutcome? { entries[id]?.phase.outcome }
    func attempts(of id: UploadID) -> Int { entries[id]?.attempts ?? 0 }
    func phase(of id: UploadID) -> UploadPhase? { entries[id]?.phase }
    func cancelRequested(_ id: UploadID) -> Bool { entries[id]?.cancelRequested ?? false }
    var isIdle: Bool { waiting.isEmpty && active == 0 }

    /// How many requests each sending upload may have in flight (an S3 upload's parts go side by
    /// side): the concurrency shared out among the uploads sending, the remainder to the oldest;
    /// one each while others wait for a slot. Every upload sending has a share of at least one.
    var shares: [UploadID: Int] {
        guard !sendingIDs.isEmpty else { return [:] }
        let ids = sendingIDs.sorted()
        guard waiting.isEmpty, concurrency > ids.count else { return Dictionary(uniqueKeysWithValues: ids.map { ($0, 1) }) }
        let each = concurrency / ids.count
        let rest = concurrency % ids.count
        return Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, each + ($0 < rest ? 1 : 0)) })
    }

    /// The id the next upload without one of its own gets.
    var unusedID: UploadID { UploadID(nextID) }

    // MARK: Inputs

    /// Adds the upload `record` (under its id) with the attempts it already made; an id already
    /// known is ignored.
    mutating func enqueue(
        _ request: UploadRequest, record: UploadRecord, attemptsSoFar: Int = 0, retryPolicy: RetryPolicy? = nil
    ) -> [Action] {
        guard let entry = admit(request, record: record, attemptsSoFar: attemptsSoFar, retryPolicy: retryPolicy) else { return [] }
        waiting.append(entry.record.id)
        var actions: [Action] = [.emit(.queued(entry.record))]
        pump(into: &actions)
        return actions
    }

    /// Adds an upload the user cancelled before it was queued here (a caller that holds uploads
    /// back until there is room): it is queued and ends at once, as a cancel of a queued upload
    /// does, and may be retried by id like any other.
    mutating func enqueueCancelled(_ request: UploadRequest, record: UploadRecord, attemptsSoFar: Int = 0, reason: String?) -> [Action] {
        guard var entry = admit(request, record: record, attemptsSoFar: attemptsSoFar, retryPolicy: nil) else { return [] }
        let id = entry.record.id
        entry.cancelReason = reason
        var actions: [Action] = [.emit(.queued(entry.record))]
        finish(id, &entry, .failed(Self.cancelled(entry, "cancelled before it started")), into: &actions)
        reportDrainIfIdle(into: &actions)
        return actions
    }

    /// The entry of a new upload, kept (not yet waiting); nil for an id already known.
    private mutating func admit(_ request: UploadRequest, record: UploadRecord, attemptsSoFar: Int, retryPolicy: RetryPolicy?) -> Entry? {
        let id = record.id
        guard entries[id] == nil else { return nil }
        nextID = max(nextID, id.rawValue + 1)
        var record = record
        // The record starts where the request does: the point a journal kept is the one the first
        // attempt continues from.
        record.resume = request.resume
        var entry = Entry(request: request, record: record)
        // A count read back from the journal: bounded, so that counting on cannot overflow.
        entry.attempts = min(max(0, attemptsSoFar), 1_000_000)
        entry.retryPolicy = retryPolicy
        entries[id] = entry
        drainReported = false
        return entry
    }

    /// Runs at most `count` uploads at once from now on: more start at once if slots opened;
    /// with fewer, uploads already sending finish and no new one starts until one is free.
    mutating func setConcurrency(_ count: Int) -> [Action] {
        precondition(count >= 1, "at least one upload must be able to run")
        concurrency = count
        var actions: [Action] = []
        pump(into: &actions)
        return actions
    }

    /// Cancels a queued, waiting or sending upload; nil for an unknown or finished one. A
    /// queued or waiting upload ends at once; a sending one when its attempt comes back, and
    /// then without a retry whatever the attempt ended with.
    mutating func cancel(_ id: UploadID, reason: String? = nil) -> [Action]? {
        guard var entry = entries[id] else { return nil }
        var actions: [Action] = []
        switch entry.phase {
        case .finished:
            return nil
        case .queued:
            entry.cancelReason = reason
            waiting.remove(id)
            finish(id, &entry, .failed(Self.cancelled(entry, "cancelled before it started")), into: &actions)
        case .waitingToRetry:
            entry.cancelReason = reason
            actions.append(.cancelWait(id))
            finish(id, &entry, .failed(Self.cancelled(entry, "cancelled while waiting to retry")), into: &actions)
        case .sending:
            if entry.cancelRequested { return [] }
            entry.cancelReason = reason
            entry.cancelRequested = true
            entries[id] = entry
            return [.cancelAttempt(id)]
        }
        reportDrainIfIdle(into: &actions)
        return actions
    }

    /// Cancels everything not finished: the queued uploads first, so that no slot a cancelled
    /// one frees starts another. Returns how many it cancelled.
    mutating func cancelAll(reason: String? = nil) -> (count: Int, actions: [Action]) {
        var count = 0
        var actions: [Action] = []
        while let id = waiting.popFirst() {
            guard var entry = entries[id] else { continue }
            entry.cancelReason = reason
            finish(id, &entry, .failed(Self.cancelled(entry, "cancelled before it started")), into: &actions)
            count += 1
        }
        let live = entries.filter { $0.value.phase.isActive }.keys.sorted { $0.rawValue < $1.rawValue }
        for id in live {
            if entries[id]?.cancelRequested == true { continue }
            if let more = cancel(id, reason: reason) {
                actions += more
                count += 1
            }
        }
        reportDrainIfIdle(into: &actions)
        return (count, actions)
    }

    /// Queues a failed or cancelled upload again under its id; the attempt count goes on.
    mutating func retry(_ id: UploadID) -> [Action]? {
        guard var entry = entries[id], case .finished(let outcome) = entry.phase, !outcome.isSuccess else { return nil }
        entry.cancelReason = nil
        entry.record.resume = entry.request.resume
        setPhase(id, &entry, .queued)
        waiting.append(id)
        drainReported = false
        var actions: [Action] = [.emit(.queued(entry.record))]
        pump(into: &actions)
        return actions
    }

    /// An attempt came back. One that is not the attempt in flight (it cannot be, but a shell
    /// may deliver late) changes nothing.
    /// `reported`: the point the attempt's own `resumable` reports left the record at while it
    /// ran (they go out at once, so that a process killed mid-upload still knows the upload URL);
    /// nil means none, or that they said nil. The result's point is the one the next attempt
    /// continues from, and when the reports said otherwise, it is said again here: the record
    /// and the next attempt cannot disagree.
    /// `now`: when it ended (an HTTP-date `Retry-After` counts from it).
    mutating func attemptEnded(
        _ id: UploadID, attempt: Int, result: AttemptResult, reported: ResumePoint?, at now: Date
    ) -> [Action] {
        guard var entry = entries[id], case .sending(attempt) = entry.phase else { return [] }
        let cancelRequested = entry.cancelRequested
        entry.cancelRequested = false
        var actions: [Action] = []
        // The next attempt (a retry now, or by hand later) continues where this one left the upload.
        // When the server keeps more of it than when the attempt before began (the offset an
        // attempt reports is the one the server confirmed), the link is carrying data: a cut is
        // tried again at once and the retry count starts over, so a long upload over a link that
        // drops every few minutes still finishes. A cut after body bytes went out to a server
        // that keeps them is tried again at once too (it will most likely have moved on), but
        // not twice in a row without a confirmed move: a server that takes bytes and keeps
        // none cannot make the client loop.
        let furthest = max(entry.furthestConfirmed, entry.request.resume?.offset ?? 0)
        let movedOn = (result.resume?.offset ?? 0) > furthest
        entry.furthestConfirmed = max(furthest, result.resume?.offset ?? 0)
        if movedOn { entry.attemptThatLastMovedOn = attempt - 1 }
        let atOnce = result.resume != nil && (movedOn || (result.bytesSent > 0 && !entry.retriedAtOnceUnconfirmed))
        entry.retriedAtOnceUnconfirmed = atOnce && !movedOn
        entry.request.resume = result.resume
        if result.resume != reported {
            actions.append(.emit(.resumable(id, result.resume)))
        }
        if let response = result.response {
            actions.append(.emit(.response(id, response)))
        }
        switch result.outcome {
        case .answered where cancelRequested:
            // The server answered before the cancel took effect: that answer is what happened.
            finish(id, &entry, result.outcome, into: &actions)
        case .failed(let failure) where cancelRequested || failure.kind == .cancelled:
            let message = failure.kind == .cancelled ? failure.message : "cancelled"
            finish(id, &entry, .failed(Self.cancelled(entry, message)), into: &actions)
        default:
            let policy = entry.retryPolicy ?? retryPolicy
            let keyed = entry.request.idempotencyKey != nil
            let failures = attempt - entry.attemptThatLastMovedOn
            if var delay = policy.delay(after: result.outcome, response: result.response, attempt: failures, keyed: keyed, now: now) {
                if atOnce, case .failed = result.outcome { delay = 0 }
                let reason = result.outcome.words(reason: result.response?.reason)
                setPhase(id, &entry, .waitingToRetry(attempt: attempt + 1, reason: reason, due: now.addingTimeInterval(delay.isFinite ? delay : 0)))
                actions.append(.emit(.retryScheduled(id, attempt: attempt + 1, delaySeconds: delay, reason: reason)))
                actions.append(.wait(id, attempt: attempt + 1, seconds: delay))
            } else {
                finish(id, &entry, result.outcome, into: &actions)
            }
        }
        pump(into: &actions)
        reportDrainIfIdle(into: &actions)
        return actions
    }

    /// The wait before `attempt` is over: the upload goes first in line.
    mutating func retryDue(_ id: UploadID, attempt: Int) -> [Action] {
        guard var entry = entries[id], case .waitingToRetry(attempt, _, _) = entry.phase else { return [] }
        setPhase(id, &entry, .queued)
        waiting.prepend(id)
        var actions: [Action] = []
        pump(into: &actions)
        return actions
    }

    /// Ends the events once everything queued so far has finished.
    mutating func finishWhenDrained() -> [Action] {
        closeWhenDrained = true
        return isIdle && drainReported ? [.closeEvents] : []
    }

    /// Drops finished uploads (they live on in the caller's records); returns how many.
    mutating func forgetFinished(_ ids: [UploadID]) -> Int {
        var dropped = 0
        for id in ids where entries[id]?.phase.outcome != nil {
            entries[id] = nil
            dropped += 1
        }
        return dropped
    }

    /// The next `count` uploads to start, in order, with their requests: what may be made ready
    /// ahead of their turn (a photo converted while others upload).
    func upcoming(_ count: Int) -> [(UploadID, UploadRequest)] {
        waiting.first(count).compactMap { id in entries[id].map { (id, $0.request) } }
    }

    // MARK: Steps

    private mutating func pump(into actions: inout [Action]) {
        while sending < concurrency, let id = waiting.popFirst() {
            guard var entry = entries[id] else { continue }
            entry.attempts += 1
            setPhase(id, &entry, .sending(attempt: entry.attempts))
            actions.append(.start(id, attempt: entry.attempts, request: entry.request))
        }
    }

    private mutating func finish(_ id: UploadID, _ entry: inout Entry, _ outcome: UploadOutcome, into actions: inout [Action]) {
        if !outcome.isSuccess, let point = entry.request.resume {
            // Nothing continues a failed upload (a retry by hand starts over): what the server
            // keeps of it would only wait out its age there and count against its limits.
            entry.request.resume = nil
            actions.append(.emit(.resumable(id, nil)))
            // Not an upload URL another service handed out: its flow is that service's (the
            // user may continue it later with the same URL).
            if entry.request.uploadURL != point.uploadURL { actions.append(.discard(id, point, entry.request)) }
        }
        setPhase(id, &entry, .finished(outcome))
        actions.append(.emit(.finished(id, outcome)))
    }

    private mutating func reportDrainIfIdle(into actions: inout [Action]) {
        guard isIdle, !drainReported else { return }
        drainReported = true
        actions.append(
            .emit(.allFinished(UploadSummary(succeeded: finishedCounts.succeeded, failed: finishedCounts.failed, cancelled: finishedCounts.cancelled))))
        finishedCounts = (0, 0, 0)
        drain += 1
        if closeWhenDrained { actions.append(.closeEvents) }
    }

    /// Every change of phase goes through here, so the counts stay right.
    private mutating func setPhase(_ id: UploadID, _ entry: inout Entry, _ phase: UploadPhase) {
        if case .sending = entry.phase {
            sending -= 1
            sendingIDs.remove(id)
        }
        if entry.phase.isActive { active -= 1 }
        if let old = entry.phase.outcome, entry.finishedInDrain == drain { count(old, by: -1) }
        entry.phase = phase
        if case .sending = phase {
            sending += 1
            sendingIDs.insert(id)
        }
        if phase.isActive { active += 1 }
        if let new = phase.outcome {
            count(new, by: 1)
            entry.finishedInDrain = drain
        }
        entries[id] = entry
    }

    private mutating func count(_ outcome: UploadOutcome, by step: Int) {
        if outcome.isSuccess {
            finishedCounts.succeeded += step
        } else if case .failed(let failure) = outcome, failure.kind == .cancelled {
            finishedCounts.cancelled += step
        } else {
            finishedCounts.failed += step
        }
    }

    static func cancelled(_ entry: Entry, _ message: String) -> UploadFailure {
        UploadFailure(.cancelled, entry.cancelReason.map { "\(message) (\($0))" } ?? message)
    }
}

extension UploadPhase {
    /// Sending or waiting to retry.
    fileprivate var isActive: Bool {
        switch self {
        case .sending, .waitingToRetry: true
        case .queued, .finished: false
        }
    }
}
