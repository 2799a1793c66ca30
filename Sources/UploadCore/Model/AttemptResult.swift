/// What one attempt of an upload ended with.
public struct AttemptResult: Sendable {
    public var outcome: UploadOutcome
    public var response: UploadResponse?
    public var bytesSent: Int64
    /// Where the next attempt continues (the server keeps the upload there), or nil to start over.
    public var resume: ResumePoint?

    public init(outcome: UploadOutcome, response: UploadResponse?, bytesSent: Int64, resume: ResumePoint? = nil) {
        self.outcome = outcome
        self.response = response
        self.bytesSent = bytesSent
        self.resume = resume
    }
}
