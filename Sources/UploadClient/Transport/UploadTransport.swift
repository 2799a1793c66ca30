import UploadCore

// What the queue needs of a transport: the attempt, its callbacks and its result, and the
// trust settings a transport is made with.

/// How the client trusts servers.
public struct TLSOptions: Sendable, Equatable {
    /// A PEM bundle to trust instead of the system store (curl's `--cacert`).
    public var caCertificatePath: String?
    /// Skip certificate verification; only when the user asks (`--insecure`).
    public var insecure: Bool

    public init(caCertificatePath: String? = nil, insecure: Bool = false) {
        self.caCertificatePath = caCertificatePath
        self.insecure = insecure
    }
}

/// Callbacks an attempt reports through, in order: started, progress…, redirected…
public struct AttemptObserver: Sendable {
    public var started: @Sendable (_ url: String, _ totalBytes: Int64?) -> Void
    public var progress: @Sendable (_ bytes: Int64, _ total: Int64, _ expected: Int64?) -> Void
    public var redirected: @Sendable (_ url: String) -> Void
    /// The server keeps the upload resumable at this point (nil: not any more; with the reason
    /// when what the server had is given up and the upload starts over).
    public var resumable: @Sendable (_ point: ResumePoint?, _ startedOver: String?) -> Void
    /// The attempt continues at `offset` of `length` body bytes.
    public var resumed: @Sendable (_ offset: Int64, _ length: Int64) -> Void
    /// The SHA-256 (hex) of the file's bytes as sent, once the attempt has read all of them,
    /// and for a converted photo the digest naming its original and the conversion.
    public var content: @Sendable (_ sha256: String, _ source: String?, _ sentName: String?) -> Void
    /// How many requests the attempt may have in flight now (parts sent side by side): its
    /// share of the queue's concurrency, which changes as other uploads start and end.
    public var share: @Sendable () -> Int

    public init(
        started: @escaping @Sendable (String, Int64?) -> Void = { _, _ in },
        progress: @escaping @Sendable (Int64, Int64, Int64?) -> Void = { _, _, _ in },
        redirected: @escaping @Sendable (String) -> Void = { _ in },
        resumable: @escaping @Sendable (ResumePoint?, String?) -> Void = { _, _ in },
        resumed: @escaping @Sendable (Int64, Int64) -> Void = { _, _ in },
        content: @escaping @Sendable (String, String?, String?) -> Void = { _, _, _ in },
        share: @escaping @Sendable () -> Int = { 1 }
    ) {
        self.content = content
        self.share = share
        self.started = started
        self.progress = progress
        self.redirected = redirected
        self.resumable = resumable
        self.resumed = resumed
    }
}

/// Performs one attempt of an upload; the queue decides about retries.
public protocol UploadTransport: Sendable {
    /// Runs until the server answers or the attempt fails. Cancelling the calling task cancels
    /// the request and yields a `.cancelled` failure.
    func perform(_ request: UploadRequest, observer: AttemptObserver) async -> AttemptResult

    /// Where the queue runs the task of an attempt about to start (nil: anywhere). A transport
    /// whose I/O happens on event loops hands out one of them, so that the attempt's own work and
    /// its connection's share a thread and no await in between crosses to another. Each call is
    /// followed by one `endAttempt(on:)` with what it returned, once the attempt is over.
    func beginAttempt() -> (any TaskExecutor)?

    func endAttempt(on executor: (any TaskExecutor)?)

    /// Removes what the server keeps of an upload that will not be continued (it failed for
    /// good): best effort, within a short time. Returns what happened, in words, for a log.
    func discard(_ point: ResumePoint, of request: UploadRequest) async -> String

    /// These uploads come next, in order: what of them takes long to make ready before a byte
    /// goes (a photo to convert) may be made ready now, on cores the uploads leave free, and be
    /// taken by their attempts when they start.
    func prepareAhead(_ requests: [UploadRequest])
}

extension UploadTransport {
    public func beginAttempt() -> (any TaskExecutor)? { nil }
    public func endAttempt(on executor: (any TaskExecutor)?) {}
    public func discard(_ point: ResumePoint, of request: UploadRequest) async -> String { "not removed (this transport cannot)" }
    public func prepareAhead(_ requests: [UploadRequest]) {}
}
