import Foundation

/// One upload as a live view shows it: its `UploadRecord` (the one fold of its events), plus
/// what only a view that watches it happen has: the send rate, and the attempt's times on the
/// view's own monotonic clock (for elapsed times, ETAs and countdowns).
public struct TransferState: Sendable, Equatable {
    public var record: UploadRecord
    /// The rate, on the view's monotonic clock (the record's times are the wall clock's).
    public var meter = RateMeter()

    public init(record: UploadRecord) {
        self.record = record
    }

    public var id: UploadID { record.id }
    public var name: String { record.name }
    /// The body's length once an attempt started, before that the file's size.
    public var totalBytes: Int64? { record.bytesExpected ?? record.fileSize }
    public var sentBytes: Int64 { record.bytesSent }
    public var attempt: Int { record.attempts }
    public var response: UploadResponse? { record.response }
    public var outcome: UploadOutcome? { record.outcome }

    /// Why the last attempt failed, while waiting to retry.
    public var retryReason: String? {
        if case .waitingToRetry(_, let reason, _) = record.phase { return reason }
        return nil
    }

    /// Waiting before another attempt (the queue scheduled a retry and none has started yet).
    public var isWaitingToRetry: Bool {
        if case .waitingToRetry = record.phase { return true }
        return false
    }

    /// `waiting to retry in 4 s (attempt 2: 503 Service Unavailable)` at `date`, or nil when not waiting.
    public func waitingText(at date: Date) -> String? {
        guard case .waitingToRetry(_, _, let due) = record.phase else { return nil }
        return record.phase.waitingText(secondsLeft: due.timeIntervalSince(date))
    }

    /// 0…1, or `nil` when the length is unknown.
    public var fraction: Double? { record.fraction }

    public var etaSeconds: Double? {
        guard let total = totalBytes, outcome == nil else { return nil }
        return meter.eta(remainingBytes: total - sentBytes)
    }

    /// How long the last attempt took, once the upload finished (0 before), from the record's times.
    public var elapsed: Double? {
        guard let startedAt = record.startedAt else { return nil }
        return max(0, (record.finishedAt ?? startedAt).timeIntervalSince(startedAt))
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
            guard let state = states[id], case .sending = state.record.phase else { continue }
            states[id]?.meter.record(totalBytes: state.sentBytes, at: now)
        }
    }

    /// `sampleRates(now:)` for the uploads `ids` alone (those a view knows are sending), so a
    /// long queue of waiting uploads costs nothing per sample.
    public mutating func sampleRates(_ ids: Set<UploadID>, now: Double) {
        for id in ids {
            guard let index = states.index(forKey: id), case .sending = states.values[index].record.phase else { continue }
            let sent = states.values[index].sentBytes
            states.values[index].meter.record(totalBytes: sent, at: now)
        }
    }

    /// Drops finished uploads from the tracker (a front end clearing its finished rows).
    public mutating func forget(_ ids: Set<UploadID>) {
        order.removeAll { ids.contains($0) }
        for id in ids { states[id] = nil }
    }

    /// Takes an upload as a record made elsewhere (the agent's), seen at `now` on this
    /// tracker's clock and `date` on the wall clock: its times are moved onto this clock.
    public mutating func adopt(_ record: UploadRecord, now: Double, date: Date) {
        if states[record.id] == nil { order.append(record.id) }
        var state = TransferState(record: record)
        if case .sending = record.phase {
            // The attempt's start on this clock, for its rate.
            let started = now - max(0, date.timeIntervalSince(record.startedAt ?? record.createdAt))
            // An attempt that resumed sent only what lies past its offset.
            state.meter.record(totalBytes: record.resumedAt ?? 0, at: started)
            state.meter.record(totalBytes: record.bytesSent, at: now)
        }
        states[record.id] = state
        summary = nil
    }

    /// Applies one event at `now` (seconds on a monotonic clock) and `date` (the wall clock,
    /// for the record's times).
    public mutating func apply(_ event: UploadEvent, now: Double, date: Date) {
        if case .allFinished(let summary) = event {
            self.summary = summary
            return
        }
        guard let id = event.uploadID else { return }
        if case .queued(let record) = event, states[id] == nil {
            order.append(id)
            states[id] = TransferState(record: record)
        }
        // In place: a copy taken out and written back made the dictionary's and the copy's
        // buffers shared, so every event copied the upload's record.
        guard let index = states.index(forKey: id) else { return }
        if case .queued = event { summary = nil }
        Self.apply(event, to: &states.values[index], now: now, date: date)
    }

    private static func apply(_ event: UploadEvent, to state: inout TransferState, now: Double, date: Date) {
        state.record.apply(event, at: date)
        switch event {
        case .started:
            state.meter = RateMeter()
            state.meter.record(totalBytes: 0, at: now)
        case .progress(_, _, let sent, _):
            state.meter.record(totalBytes: sent, at: now)
        case .resumed(_, let offset, _):
            // The rate counts what goes out from here, not the bytes the server already had.
            state.meter = RateMeter()
            state.meter.record(totalBytes: offset, at: now)
        case .queued, .retryScheduled, .finished, .response, .redirected, .allFinished, .resumable, .content:
            break
        }
    }
}
