import Foundation

/// The phase in one word, as the journal's `state` column, `status` and `status --json` say it.
public enum UploadState: String, Sendable, Codable, CaseIterable {
    case queued
    case sending
    /// Waiting for an automatic retry after a transient failure (`retrying` in the journal and
    /// in `status --json`, as it always was).
    case waitingToRetry = "retrying"
    case succeeded
    case failed

    public var isFinished: Bool { self == .succeeded || self == .failed }
}

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

    public var state: UploadState {
        switch self {
        case .queued: .queued
        case .sending: .sending
        case .waitingToRetry: .waitingToRetry
        case .finished(let outcome): outcome.isSuccess ? .succeeded : .failed
        }
    }

    /// The phase from its flat form (a journal row, a JSON object): the state word, the
    /// attempts made, the wait's reason and time, and how it finished (a failure, or else the
    /// answer's status). The one way back from `state` and the fields beside it.
    public init(
        state: UploadState, attempts: Int, retryReason: String?, retryDue: Date?, fallbackDue: Date,
        status: Int?, failure: UploadFailure?
    ) {
        switch state {
        case .queued: self = .queued
        case .sending: self = .sending(attempt: attempts)
        case .waitingToRetry: self = .waitingToRetry(attempt: attempts + 1, reason: retryReason ?? "", due: retryDue ?? fallbackDue)
        case .succeeded, .failed: self = .finished(failure.map { .failed($0) } ?? .answered(status: status ?? 0))
        }
    }

    /// `waiting to retry in 4 s (attempt 2: 503 Service Unavailable)` with `secondsLeft` to go,
    /// or nil when not waiting: the one wording the monitor and `status` share.
    public func waitingText(secondsLeft: Double) -> String? {
        guard case .waitingToRetry(let attempt, let reason, _) = self else { return nil }
        // Whole seconds, rounded up: a countdown that says "0 s" while still waiting reads wrong.
        let left = secondsLeft.isFinite ? max(0, secondsLeft) : 0
        let time = left < 60 ? "\(Int(left.rounded(.up))) s" : ByteFormat.duration(left)
        return "waiting to retry in \(time) (attempt \(attempt): \(reason))"
    }

    /// While waiting to retry: why, and when the next attempt is due.
    public var retry: (reason: String, due: Date)? {
        if case .waitingToRetry(_, let reason, let due) = self { return (reason, due) }
        return nil
    }
}

/// One upload as everything outside the queue knows it: the monitor's row, the journal's row,
/// `status` and `status --json`, the send reporters. Built by folding the upload's
/// `UploadEvent`s with `apply(_:at:)`, the one fold there is; what a view shows is read from
/// here, so two views of one upload cannot disagree.
public struct UploadRecord: Sendable, Hashable {
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
    /// The file's modification time when it was queued, in nanoseconds since 1970 (known to
    /// the agent's journal; nil where it was not kept).
    public var fileModified: Int64?
    /// The inode's change time when it was queued (ns since 1970; nil where it was not read):
    /// with size and modification time, what proves a file is still the one sent.
    public var fileChanged: Int64?
    /// Sent without where the photo was taken (`--strip-location`, or `L` in the monitor).
    public var withoutLocation = false
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
    /// Where the upload can continue after an interruption, while the server keeps it.
    public var resume: ResumePoint?
    /// Where the current (or last) attempt resumed, when it did not start at 0.
    public var resumedAt: Int64?
    /// Body bytes not sent again thanks to resuming, over all attempts.
    public var bytesSaved: Int64 = 0
    /// The SHA-256 (lowercase hex) of the file's bytes as last sent, once an attempt read them all.
    public var contentSHA256: String?
    /// For a photo converted on the way, the digest naming the original and the conversion.
    public var sourceSHA256: String?
    /// For a photo converted on the way, the name it went under when that is not `name`
    /// (`IMG_0001.HEIC` went as `IMG_0001.jpg`).
    public var sentName: String?
    /// What "already sent" knows this upload's content by: the original and the conversion for
    /// a converted photo, else the bytes sent.
    public var sentIdentity: String? { sourceSHA256 ?? contentSHA256 }

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

    /// The record of an upload as it is queued: `request` to send, `fileSize` bytes (nil for a
    /// pipe) last modified at `fileModified`, queued by `origin` at `now`.
    public static func queued(
        _ id: UploadID, request: UploadRequest, fileSize: Int64?, fileModified: Int64? = nil, fileChanged: Int64? = nil,
        origin: String, at now: Date
    ) -> UploadRecord {
        let path: String? = if case .file(let path) = request.source { path } else { nil }
        var record = UploadRecord(
            id: id, name: request.uploadName, path: path, url: RedactedURL.display(request.url), field: request.field, origin: origin,
            fileSize: fileSize, createdAt: now)
        record.fileModified = fileModified
        record.fileChanged = fileChanged
        return record
    }

    public var outcome: UploadOutcome? { phase.outcome }
    public var isFinished: Bool { phase.isFinished }

    public var state: UploadState { phase.state }

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
        case .queued(let initial):
            name = initial.name
            path = initial.path
            field = initial.field
            origin = initial.origin
            if let total = initial.fileSize { fileSize = total }
            fileModified = initial.fileModified ?? fileModified
            fileChanged = initial.fileChanged ?? fileChanged
            withoutLocation = initial.withoutLocation
            resume = initial.resume
            if url.isEmpty { url = initial.url }
            phase = .queued
            response = nil
            finishedAt = nil
        case .started(_, let attempt, let url, let total):
            phase = .sending(attempt: attempt)
            attempts = attempt
            self.url = url
            bytesSent = 0
            resumedAt = nil
            bytesExpected = total
            response = nil
            startedAt = now
        case .progress(_, _, let sent, let expected):
            bytesSent = sent
            if let expected { bytesExpected = expected }
        case .response(_, let response):
            self.response = response.redactingSecrets()
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
        case .resumable(_, let point, _):
            resume = point
        case .resumed(_, let offset, let length):
            resumedAt = offset
            bytesSaved += offset
            bytesSent = offset
            bytesExpected = length
        case .content(_, let sha256, let source, let name):
            contentSHA256 = sha256
            sourceSHA256 = source
            if let name { sentName = name }
        case .allFinished:
            break
        }
    }

    /// "resumed at 41 %" while an attempt that resumed runs (or after it), or nil.
    public var resumedText: String? {
        guard let resumedAt, resumedAt > 0, let total = bytesExpected, total > 0 else { return nil }
        return "resumed at \(Int((Double(resumedAt) / Double(total) * 100).rounded(.down))) %"
    }

    /// "the server keeps 41 % until 30 Nov 21:00" for an upload waiting to continue where a
    /// server keeps part of it (local time, from tus's `Upload-Expires`), or nil.
    public func keptText(timeZone: TimeZone = .current) -> String? {
        guard let point = resume, point.bodyLength > 0 else { return nil }
        if case .sending = phase { return nil }
        let percent = Int((Double(min(point.offset, point.bodyLength)) / Double(point.bodyLength) * 100).rounded(.down))
        var text = "the server keeps \(percent) %"
        if let expires = point.expires.flatMap(HTTPDate.parse) {
            text += " until " + LocalTime.format(expires, .dayMonth, timeZone: timeZone)
        }
        return text
    }
}

/// The record's JSON form, for `status --json` and the agent's socket alike: flat, with the
/// answer's body as text where it is text, and lossless (the whole answer and failure ride
/// along, so a record read back is the record written).
extension UploadRecord: Codable {
    enum CodingKeys: String, CodingKey {
        case id, state, name, file, url, field, origin, attempts, fileSize, bytesSent, bytesExpected
        case status, reason, body, error, errorKind, retryReason, retryAt, queuedAt, startedAt, finishedAt
        case response, failure
        case uploadURL, offset, resume, resumedAt, bytesSaved
        case uploadProtocol = "protocol"
        case fileModifiedNs, fileChangedNs, verified, sha256, sourceSHA256, sentName, withoutLocation
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id.rawValue, forKey: .id)
        try c.encode(state, forKey: .state)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(path, forKey: .file)
        try c.encode(url, forKey: .url)
        try c.encode(field, forKey: .field)
        try c.encode(origin, forKey: .origin)
        try c.encode(attempts, forKey: .attempts)
        try c.encodeIfPresent(fileSize, forKey: .fileSize)
        try c.encodeIfPresent(fileModified, forKey: .fileModifiedNs)
        try c.encodeIfPresent(fileChanged, forKey: .fileChangedNs)
        try c.encode(bytesSent, forKey: .bytesSent)
        try c.encodeIfPresent(bytesExpected, forKey: .bytesExpected)
        if case .finished(.answered(let status)) = phase, response == nil {
            try c.encode(status, forKey: .status)
        } else {
            try c.encodeIfPresent(response?.status, forKey: .status)
        }
        try c.encodeIfPresent(response?.reason, forKey: .reason)
        try c.encodeIfPresent(response?.verified, forKey: .verified)
        try c.encodeIfPresent(response?.textBody, forKey: .body)
        try c.encodeIfPresent(response, forKey: .response)
        try c.encodeIfPresent(failure?.description, forKey: .error)
        try c.encodeIfPresent(failure?.kind, forKey: .errorKind)
        try c.encodeIfPresent(failure, forKey: .failure)
        try c.encodeIfPresent(phase.retry?.reason, forKey: .retryReason)
        try c.encodeIfPresent(phase.retry?.due, forKey: .retryAt)
        try c.encode(createdAt, forKey: .queuedAt)
        try c.encodeIfPresent(startedAt, forKey: .startedAt)
        try c.encodeIfPresent(finishedAt, forKey: .finishedAt)
        try c.encodeIfPresent(resume?.kind, forKey: .uploadProtocol)
        try c.encodeIfPresent(resume?.uploadURL, forKey: .uploadURL)
        try c.encodeIfPresent(resume?.offset, forKey: .offset)
        try c.encodeIfPresent(resume, forKey: .resume)
        try c.encodeIfPresent(resumedAt, forKey: .resumedAt)
        if bytesSaved > 0 { try c.encode(bytesSaved, forKey: .bytesSaved) }
        try c.encodeIfPresent(contentSHA256, forKey: .sha256)
        try c.encodeIfPresent(sourceSHA256, forKey: .sourceSHA256)
        try c.encodeIfPresent(sentName, forKey: .sentName)
        if withoutLocation { try c.encode(true, forKey: .withoutLocation) }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = UploadID(try c.decode(Int.self, forKey: .id))
        name = try c.decode(String.self, forKey: .name)
        path = try c.decodeIfPresent(String.self, forKey: .file)
        url = try c.decode(String.self, forKey: .url)
        field = try c.decode(String.self, forKey: .field)
        origin = try c.decode(String.self, forKey: .origin)
        attempts = try c.decode(Int.self, forKey: .attempts)
        fileSize = try c.decodeIfPresent(Int64.self, forKey: .fileSize)
        fileModified = try c.decodeIfPresent(Int64.self, forKey: .fileModifiedNs)
        fileChanged = try c.decodeIfPresent(Int64.self, forKey: .fileChangedNs)
        bytesSent = try c.decode(Int64.self, forKey: .bytesSent)
        bytesExpected = try c.decodeIfPresent(Int64.self, forKey: .bytesExpected)
        response = try c.decodeIfPresent(UploadResponse.self, forKey: .response)
        createdAt = try c.decode(Date.self, forKey: .queuedAt)
        startedAt = try c.decodeIfPresent(Date.self, forKey: .startedAt)
        finishedAt = try c.decodeIfPresent(Date.self, forKey: .finishedAt)
        resume = try c.decodeIfPresent(ResumePoint.self, forKey: .resume)
        resumedAt = try c.decodeIfPresent(Int64.self, forKey: .resumedAt)
        bytesSaved = try c.decodeIfPresent(Int64.self, forKey: .bytesSaved) ?? 0
        contentSHA256 = try c.decodeIfPresent(String.self, forKey: .sha256)
        sourceSHA256 = try c.decodeIfPresent(String.self, forKey: .sourceSHA256)
        sentName = try c.decodeIfPresent(String.self, forKey: .sentName)
        withoutLocation = try c.decodeIfPresent(Bool.self, forKey: .withoutLocation) ?? false
        phase = UploadPhase(
            state: try c.decode(UploadState.self, forKey: .state), attempts: attempts,
            retryReason: try c.decodeIfPresent(String.self, forKey: .retryReason),
            retryDue: try c.decodeIfPresent(Date.self, forKey: .retryAt), fallbackDue: createdAt,
            status: try c.decodeIfPresent(Int.self, forKey: .status),
            failure: try c.decodeIfPresent(UploadFailure.self, forKey: .failure))
    }
}
