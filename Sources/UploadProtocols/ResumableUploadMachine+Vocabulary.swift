import UploadCore

/// What `ResumableUploadMachine` asks of the transport and what it is told about the origin.
extension ResumableUploadMachine {
    /// What the shell is asked to send.
    public enum Request: Sendable, Equatable {
        /// Whether the endpoint's origin resumes uploads.
        case ask
        /// Create the upload resource at the endpoint in this interop version; the shell makes
        /// the body's layout (a fresh boundary) and reports it with the answer (`created`).
        case create(version: Int)
        /// The whole body in the creation request (`Upload-Complete: ?1`): the resource is
        /// learned from a `104` while it goes out (`announcement`), and the answer is the
        /// endpoint's (`createdOptimistically`). No round trip of its own.
        case createOptimistically(version: Int)
        /// `HEAD` on the resource: its offset, or that it completed.
        case head(ResumePoint)
        /// The endpoint's answer to a completed upload, lost with the connection: the valid
        /// append to it (`PATCH` at its end, no content) from interop version 9, `GET` before.
        case fetchAnswer(ResumePoint)
        /// `PATCH` with the body from the point's offset to its end.
        case append(ResumePoint)
        /// `PATCH` with the body from the point's offset to `end` (`Upload-Complete: ?0`): the
        /// server takes appends of at most `max-append-size` (`Upload-Limit`).
        case appendPart(ResumePoint, end: Int64)
        /// `DELETE` on the resource (best effort, briefly): nothing will continue it.
        case delete(ResumePoint)
    }

    /// What the transport does next.
    public enum Next: Sendable {
        case request(Request)
        /// Not resumable here (no support, a small file): the ordinary request.
        case sendPlainly
        /// The attempt ends with this.
        case finish(AttemptResult)
    }

    /// What one input decided: what to report (in order), then what to do next.
    public struct Decision: Sendable {
        public var reports: [Report]
        public var next: Next
    }

    /// What the origin said (or was remembered to have said) about resuming.
    public enum Support: Sendable, Equatable {
        case supported(version: Int)
        case unsupported
        /// The origin took the question and did not answer it in time (a server that routes
        /// only `POST`, or one slow under load): the upload goes as an optimistic creation where
        /// that can be seen, which a plain server answers as the ordinary upload and one that
        /// resumes answers with its `104`; otherwise the ordinary way.
        case unanswered
    }
}
