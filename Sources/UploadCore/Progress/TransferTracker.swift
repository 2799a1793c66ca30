/// What is known about one upload while it runs, built from `UploadEvent`s: enough for any
/// front end (a progress line, a JSON stream, a queue row) to show it.
public struct TransferState: Sendable, Equatable {
    public let id: UploadID
    public var name: String
    public var totalBytes: Int64?
    public var sentBytes: Int64 = 0
    public var attempt = 0
    public var meter = RateMeter()
    public var startedAt: Double?
    public var finishedAt: Double?
    public var response: UploadResponse?
    public var outcome: UploadOutcome?
    public var retryReason: String?
    /// While waiting to retry: the attempt that comes next, and when (same clock as `now`).
    public var retryAttempt: Int?
    public var retryDue: Double?

    /// Waiting before another attempt (the queue scheduled a retry and none has started yet).
    public var isWaitingToRetry: Bool { outcome == nil && retryDue != nil }

    /// `waiting to retry in 4 s (attempt 2: 503 Service Unavailable)`, or nil when not waiting.
    public func waitingText(now: Double) -> String? {
        guard isWaitingToRetry, let due = retryDue else { return nil }
        let attempt = retryAttempt.map { "attempt \($0)" } ?? "next attempt"
        // Whole seconds, rounded up: a countdown that says "0 s" while still waiting reads wrong.
        let left = max(0, due - now)
        let time = left < 60 ? "\(Int(left.rounded(.up))) s" : ByteFormat.duration(left)
        return "waiting to retry in \(time) (\(attempt): \(retryReason ?? "failed"))"
    }

    public init(id: UploadID, name: String, totalBytes: Int64?) {
        self.id = id
        self.name = name
        self.totalBytes = totalBytes
    }

    /// 0…1, or `nil` when the length is unknown.
    public var fraction: Double? {
        guard let total = totalBytes, total > 0 else { return totalBytes == 0 && outcome != nil ? 1 : nil }
        return min(1, Double(sentBytes) / Double(total))
    }

    public var etaSeconds: Double? {
        guard let total = totalBytes, outcome == nil else { return nil }
        return meter.eta(remainingBytes: total - sentBytes)
    }

    public var elapsed: Double? {
        guard let startedAt else { return nil }
        return (finishedAt ?? startedAt) - startedAt
    }
}

/// Folds upload events into `TransferState`s, keyed by id and kept in queue order.
/// Events for ids it never saw queued are dropped, as stale task events are.
public struct TransferTracker: Sendable {
    public private(set) var order: [UploadID] = []
    public private(set) var states: [UploadID: TransferState] = [:]
    public private(set) var summary: UploadSummary?

    public init() {}

    public subscript(id: UploadID) -> TransferState? { states[id] }

    /// Folds "nothing more was sent" into the rates of uploads that are sending, so a stalled
    /// upload's rate decays instead of freezing at its last value.
    public mutating func sampleRates(now: Double) {
        for id in order {
            guard let state = states[id], state.outcome == nil, state.startedAt != nil else { continue }
            states[id]?.meter.record(totalBytes: state.sentBytes, at: now)
        }
    }

    /// Drops finished uploads from the tracker (a front end clearing its finished rows).
    public mutating func forget(_ ids: Set<UploadID>) {
        order.removeAll { ids.contains($0) }
        for id in ids { states[id] = nil }
    }

    /// Applies one event at `now` (seconds on a monotonic clock).
    public mutating func apply(_ event: UploadEvent, now: Double) {
        switch event {
        case .queued(let id, let name, let total):
            if states[id] == nil {
                order.append(id)
                states[id] = TransferState(id: id, name: name, totalBytes: total)
            } else {
                states[id]?.outcome = nil
                states[id]?.finishedAt = nil
                states[id]?.response = nil
            }
            summary = nil
        case .started(let id, let attempt, _, let total):
            guard states[id] != nil else { return }
            states[id]?.attempt = attempt
            states[id]?.sentBytes = 0
            states[id]?.startedAt = now
            states[id]?.meter = RateMeter()
            states[id]?.meter.record(totalBytes: 0, at: now)
            states[id]?.retryReason = nil
            states[id]?.retryAttempt = nil
            states[id]?.retryDue = nil
            if let total { states[id]?.totalBytes = total }
        case .progress(let id, _, let sent, _):
            guard states[id] != nil else { return }
            states[id]?.sentBytes = sent
            states[id]?.meter.record(totalBytes: sent, at: now)
        case .response(let id, let response):
            states[id]?.response = response
        case .redirected(let id, _):
            states[id]?.sentBytes = 0
        case .retryScheduled(let id, let attempt, let delay, let reason):
            states[id]?.retryReason = reason
            states[id]?.retryAttempt = attempt
            states[id]?.retryDue = now + (delay.isFinite ? max(0, delay) : 0)
        case .finished(let id, let outcome):
            guard states[id] != nil else { return }
            states[id]?.outcome = outcome
            states[id]?.finishedAt = now
            states[id]?.retryDue = nil
        case .allFinished(let summary):
            self.summary = summary
        }
    }
}
