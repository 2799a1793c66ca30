import Foundation

/// Where an upload stands: the one phase type every view reads.
public enum UploadPhase: Sendable, Hashable, Codable {
    case queued
    /// Attempt number `attempt` is in flight.
    case sending(attempt: Int)
    /// Attempt `attempt` (the next one) starts at `due`; `reason` says why the last one failed.
    case waitingToRetry(attempt: Int, reason: String, due: Date)
    case finished(UploadOutcome)

    public var outcome: UploadOutcome? {
        if case .finished(let outcome) = self { return outcome }
        return nil
    }

    public var isFinished: Bool { outcome != nil }
}

/// One upload as everything outside the queue knows it: the monitor's row, the journal's row,
/// `status` and `status --json`, the send reporters. Built by folding the upload's
/// `UploadEvent`s with `apply(_:at:)`, the one fold there is; what a view shows is read from
/// here, so two views of one upload cannot disagree.
public struct UploadRecord: Sendable, Hashable, Codable {
    public let id: UploadID
    /// The name the file is sent under.
    public var name: String
    /// The file sent, or nil for standard input.
    public var path: String?
    /// Where the upload goes, as it may be shown (`RedactedURL`); after a redirect, where the
    /// last attempt went.
    public var url: String
    /// The form field the file goes in.
    public var field: String
    /// Who queued it: `send`, `monitor`, `watch <folder>`.
    public var origin: String
    /// The file's size when it was queued (nil for a pipe).
    public var fileSize: Int64?
    public var phase: UploadPhase
    /// Attempts started so far.
    public var attempts: Int
    /// Body bytes the current (or last) attempt has sent, and the body's length when known.
    public var bytesSent: Int64
    public var bytesExpected: Int64?
    /// The server's answer to the last attempt, when there was one (even to a failed upload:
    /// a success that came too early is shown with its answer).
    public var response: UploadResponse?
    public var createdAt: Date
    /// When the current (or last) attempt started.
    public var startedAt: Date?
    public var finishedAt: Date?

    public init(
        id: UploadID, name: String, path: String?, url: String, field: String = "photo", origin: String, fileSize: Int64?,
        phase: UploadPhase = .queued, attempts: Int = 0, bytesSent: Int64 = 0, bytesExpected: Int64? = nil,
        response: UploadResponse? = nil, createdAt: Date, startedAt: Date? = nil, finishedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.path = path
        self.url = url
        self.field = field
        self.origin = origin
        self.fileSize = fileSize
        self.phase = phase
        self.attempts = attempts
        self.bytesSent = bytesSent
        self.bytesExpected = bytesExpected
        self.response = response
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }

    public var outcome: UploadOutcome? { phase.outcome }
    public var isFinished: Bool { phase.isFinished }

    /// Why it failed, when it finished without success and without an answer that says so.
    public var failure: UploadFailure? {
        if case .failed(let failure) = outcome { return failure }
        return nil
    }

    /// 0…1 of the body sent, or nil when its length is unknown.
    public var fraction: Double? {
        guard let total = bytesExpected ?? fileSize, total > 0 else { return (bytesExpected ?? fileSize) == 0 && isFinished ? 1 : nil }
        return min(1, Double(bytesSent) / Double(total))
    }

    /// Folds one event into the record; events of other uploads change nothing.
    public mutating func apply(_ event: UploadEvent, at now: Date) {
        guard event.uploadID == id else { return }
        switch event {
        case .queued(_, let name, let total):
            self.name = name
            if let total { fileSize = total }
            phase = .queued
            response = nil
            finishedAt = nil
        case .started(_, let attempt, let url, let total):
            phase = .sending(attempt: attempt)
            attempts = attempt
            self.url = url
            bytesSent = 0
            bytesExpected = total
            response = nil
            startedAt = now
        case .progress(_, _, let sent, let expected):
            bytesSent = sent
            if let expected { bytesExpected = expected }
        case .response(_, let response):
            self.response = response
        case .redirected(_, let url):
            self.url = url
            bytesSent = 0
        case .retryScheduled(_, let attempt, let delay, let reason):
            // A date that reads back (the journal stores it): a retry is never more than a year off.
            let year = 365 * 86_400.0
            let wait = delay.isFinite ? max(0, min(delay, year)) : year
            phase = .waitingToRetry(attempt: attempt, reason: reason, due: now.addingTimeInterval(wait))
        case .finished(_, let outcome):
            phase = .finished(outcome)
            finishedAt = now
            if outcome.isSuccess, let expected = bytesExpected { bytesSent = expected }
        case .allFinished:
            break
        }
    }
}
