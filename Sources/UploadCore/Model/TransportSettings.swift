/// How one upload is sent, apart from the request itself: the TLS trust, the pace, the clocks
/// and the retries. Plain data, so the agent can keep it with an upload in its journal and
/// resend the upload the same way after a restart.
public struct TransportSettings: Sendable, Hashable, Codable {
    public var caCertificatePath: String?
    public var insecure: Bool
    /// Bytes per second per upload, or `nil` for no limit.
    public var rateLimit: Int64?
    public var connectTimeout: Double
    public var stallTimeout: Double
    public var answerTimeout: Double
    public var retries: Int

    public init(
        caCertificatePath: String? = nil, insecure: Bool = false, rateLimit: Int64? = nil,
        connectTimeout: Double = 10, stallTimeout: Double = 30, answerTimeout: Double = 60, retries: Int = 0
    ) {
        self.caCertificatePath = caCertificatePath
        self.insecure = insecure
        self.rateLimit = rateLimit
        self.connectTimeout = connectTimeout
        self.stallTimeout = stallTimeout
        self.answerTimeout = answerTimeout
        self.retries = retries
    }

    public var retryPolicy: RetryPolicy { RetryPolicy(maxRetries: retries) }
}
