import Foundation

/// Everything that happens to uploads, in order per upload:
/// queued → started → progress… → response → finished, with retries starting again at `started`.
/// `allFinished` follows the last `finished` when the queue drains.
public enum UploadEvent: Sendable, Hashable, Codable {
    /// The upload's whole record as it begins (or begins again, retried by hand): the file,
    /// where it goes, who queued it, when; every later event folds into it.
    case queued(UploadRecord)
    case started(UploadID, attempt: Int, url: String, totalBytes: Int64?)
    /// `bytesSent` just went out; `totalBytesSent` so far in this attempt; expected is the Content-Length.
    case progress(UploadID, bytesSent: Int64, totalBytesSent: Int64, totalBytesExpected: Int64?)
    case response(UploadID, UploadResponse)
    /// A 307/308 made the client send the body again to another URL.
    case redirected(UploadID, to: String)
    case retryScheduled(UploadID, attempt: Int, delaySeconds: Double, reason: String)
    case finished(UploadID, UploadOutcome)
    case allFinished(UploadSummary)
    /// The server keeps the upload resumable at this point (nil: not any more). `startedOver`:
    /// why the bytes the server had could not be continued, and the upload begins again at 0.
    case resumable(UploadID, ResumePoint?, startedOver: String? = nil)
    /// This attempt continues at `offset` of the body's `length` bytes instead of at 0.
    case resumed(UploadID, offset: Int64, of: Int64)
    /// The SHA-256 (lowercase hex) of the file's bytes as this attempt sent them (after
    /// `--strip-location`, the stripped bytes): what "already sent" is matched by. For a photo
    /// converted on the way (`--convert`…), `source` names the original and the settings
    /// (`ContentIdentity.converted`), and "already sent" matches by it instead: it is known
    /// before the photo is converted again; `name` is the name it was sent under
    /// (`IMG_0001.HEIC` went as `IMG_0001.jpg`).
    case content(UploadID, sha256: String, source: String? = nil, name: String? = nil)

    public var uploadID: UploadID? {
        switch self {
        case .queued(let record):
            return record.id
        case .started(let id, _, _, _), .progress(let id, _, _, _),
            .response(let id, _), .redirected(let id, _), .retryScheduled(let id, _, _, _),
            .finished(let id, _), .resumable(let id, _, _), .resumed(let id, _, _), .content(let id, _, _, _):
            return id
        case .allFinished:
            return nil
        }
    }
}

/// Counts reported when the queue drains. A cancelled upload is counted apart from a failed
/// one: the user stopped it, nothing went wrong.
public struct UploadSummary: Sendable, Hashable, Codable {
    public let succeeded: Int
    /// Failed, not counting the cancelled.
    public let failed: Int
    public let cancelled: Int
    public init(succeeded: Int, failed: Int, cancelled: Int = 0) {
        self.succeeded = succeeded
        self.failed = failed
        self.cancelled = cancelled
    }
    public var total: Int { succeeded + failed + cancelled }

    /// The two added (a drain's counts joining the next one's).
    public func adding(_ other: UploadSummary) -> UploadSummary {
        UploadSummary(succeeded: succeeded + other.succeeded, failed: failed + other.failed, cancelled: cancelled + other.cancelled)
    }

    /// "All 3 uploads finished: 2 ok, 1 failed", "1 upload finished: 1 ok, 0 failed", "…, 1
    /// cancelled" when one was: the one way every view says it (`capitalized`: as a sentence starts).
    public func finishedText(capitalized: Bool) -> String {
        let counts = "finished: \(succeeded) ok, \(failed) failed" + (cancelled > 0 ? ", \(cancelled) cancelled" : "")
        if total == 1 { return "1 upload " + counts }
        return (capitalized ? "All " : "all ") + "\(total) uploads " + counts
    }

    enum CodingKeys: String, CodingKey { case succeeded, failed, cancelled }

    /// An agent of an earlier version says no `cancelled` (its `failed` counts them).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        succeeded = try container.decode(Int.self, forKey: .succeeded)
        failed = try container.decode(Int.self, forKey: .failed)
        cancelled = try container.decodeIfPresent(Int.self, forKey: .cancelled) ?? 0
    }
}
