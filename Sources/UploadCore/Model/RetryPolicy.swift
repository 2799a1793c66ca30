import Foundation

/// When and how often a failed attempt is tried again automatically (`--retries N`).
///
/// Only failures a later attempt can fix are retried: connect failures, lost or stalled
/// connections, and the answers 408, 429, 500, 502, 503, 504 (curl's --retry list); and 409 to a retry that repeats an
/// `Idempotency-Key`, which is how a server following draft-ietf-httpapi-idempotency-key-header
/// says the attempt before (whose connection it has not yet seen end) is still in progress.
/// A 409 to the first attempt is a real conflict and final. The delay doubles from `baseDelay`
/// up to `maxDelay`; a server's `Retry-After` (seconds or an HTTP date) takes precedence, capped
/// at `maxRetryAfter` so a hostile header cannot park an upload for a day.
public struct RetryPolicy: Sendable, Equatable {
    public var maxRetries: Int
    public var baseDelay: Double
    public var maxDelay: Double
    public var maxRetryAfter: Double

    public init(maxRetries: Int = 0, baseDelay: Double = 1, maxDelay: Double = 60, maxRetryAfter: Double = 300) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// The delay before attempt `attempt + 1`, or `nil` when the outcome is final.
    /// `attempt` counts from 1 for the first try; `keyed` says the request carried an Idempotency-Key.
    public func delay(after outcome: UploadOutcome, response: UploadResponse?, attempt: Int, keyed: Bool = false, now: Date) -> Double? {
        guard attempt <= maxRetries else { return nil }
        switch outcome {
        case .answered(let status):
            let earlierAttemptStillRunning = status == 409 && keyed && attempt > 1
            guard HTTPStatus.isRetryable(status) || earlierAttemptStillRunning else { return nil }
            if let header = response?.header("Retry-After"), let wait = Self.parseRetryAfter(header, now: now) {
                return min(wait, maxRetryAfter)
            }
        case .failed(let failure):
            guard failure.isTransient else { return nil }
        }
        return backoff(attempt: attempt)
    }

    public func backoff(attempt: Int) -> Double {
        min(maxDelay, baseDelay * pow(2, Double(max(attempt - 1, 0))))
    }

    /// `Retry-After` is either delta-seconds or an IMF-fixdate (RFC 9110 §10.2.3).
    public static func parseRetryAfter(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return Double(seconds) }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
