import Foundation
import UploadCore

/// What the draft's machine and tus's (`TusUploadMachine`, `TusStreamMachine`) share: the reports
/// an attempt makes to its observer, and the two results every step may end with.
extension ResumableUploadMachine {
    /// What a `DELETE` of an upload resource (the draft's or tus's) came to, in words: gone
    /// (removed, or already unknown to the server), or why not.
    public static func removal(_ result: AttemptResult) -> String {
        guard let response = result.response else { return "not removed: " + result.outcome.words(reason: nil) }
        return (200..<300).contains(response.status) || response.status == 404 || response.status == 410
            ? "removed from the server" : "the server answered \(response.status) to its removal"
    }

    /// What happened, for the attempt's observer, in order.
    public enum Report: Sendable, Equatable {
        /// The server keeps the upload at this point (nil: no longer; with the reason when what
        /// the server had is given up and the upload starts over).
        case resumable(ResumePoint?, startedOver: String?)
        /// The body starts going out (the requests before it carry no byte of the file).
        case sending(bodyLength: Int64)
        /// The body continues at `offset`.
        case resumed(offset: Int64, bodyLength: Int64)
        /// The origin was remembered to resume uploads and refused to create one: it does not
        /// (now); the remembered answer is wrong.
        case originRefused
        /// The tus server kept nothing of a request that was cut: it stores a request only once it
        /// is whole. Its uploads go in chunks of this size from now on.
        case discardsCutRequests(chunk: Int64)
        /// The tus server takes at most this many bytes in one request (a `413` said so).
        case requestLimit(bytes: Int64)
    }

    /// A request before the body failed: a cancel then is a cancel before anything was sent (the
    /// classifier would take an empty body sent for a whole upload awaiting its answer).
    static func beforeTheBody(_ result: AttemptResult) -> AttemptResult {
        guard case .failed(let failure) = result.outcome, failure.kind == .cancelled else { return result }
        return AttemptResult(outcome: .failed(.cancelled(bodySent: false)), response: nil, bytesSent: 0)
    }

    /// An input that does not fit the state: a bug in the shell, reported as the attempt's end
    /// rather than a crash.
    static let misuse = AttemptResult(
        outcome: .failed(UploadFailure(.other, "internal error: the resumable upload's steps went out of order")),
        response: nil, bytesSent: 0)
}

extension UploadFailure {
    /// A cancelled attempt, with what can be said of the file's fate.
    public static func cancelled(bodySent: Bool) -> UploadFailure {
        bodySent
            ? UploadFailure(.cancelled, "cancelled while waiting for the answer (the server may have stored the file)")
            : UploadFailure(.cancelled, "cancelled")
    }
}
