import NIOCore
import UploadCore
import UploadProtocols

/// How `uploadmon serve` receives uploads.
public struct ReceiverConfiguration: Sendable, Equatable {
    public var host: String
    /// 0 picks an ephemeral port; the running server reports the real one.
    public var port: Int
    /// Where files are stored; nothing is ever written outside it.
    public var directory: String
    public var path: String
    public var field: String
    /// The largest request body accepted, in bytes.
    public var maxSize: Int64
    /// Refuse file parts whose content is not an image (415).
    public var imagesOnly: Bool
    /// Serve HTTPS with this certificate chain and key (PEM files) instead of plain HTTP.
    public var tls: TLSFiles?
    /// Timeouts, the connection cap and the stopping grace period.
    public var limits: Limits
    /// How long a resumable upload may take from its creation before it is removed, complete or
    /// not (its `Upload-Limit: max-age`).
    public var resumableMaxAge: Duration
    /// How long an unfinished resumable upload is kept when no request touches it.
    public var resumableIdleAge: Duration
    /// Unfinished resumable uploads one client may hold.
    public var resumablePerClient: Int
    /// The most one resumable request (a creation with content, an append) may carry
    /// (`max-append-size`), or nil for no limit but `maxSize`.
    public var resumableMaxAppend: Int64?

    var resumableQuota: ResumableQuota { ResumableQuota(total: ResumableQuota.standard.total, perClient: resumablePerClient) }

    /// How long the receiver waits for a client, how many it serves at once, and how long
    /// uploads may go on once it is told to stop.
    public struct Limits: Sendable, Equatable {
        /// From a request's first byte (or a connection's opening) to its complete head.
        public var headerTimeout: Duration
        /// A kept-alive connection with no request.
        public var idleTimeout: Duration
        /// A request body that stops arriving while the receiver waits for it.
        public var bodyStallTimeout: Duration
        /// Connections open at once; more are answered 503 at once. Lowered to what the
        /// process's descriptor limit allows (`ConnectionBudget`).
        public var maxConnections: Int
        /// How long uploads in progress may go on after SIGTERM/SIGINT before they are cut.
        public var shutdownGrace: Duration

        public init(
            headerTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
            bodyStallTimeout: Duration = .seconds(30), maxConnections: Int = 1024, shutdownGrace: Duration = .seconds(5)
        ) {
            self.headerTimeout = headerTimeout
            self.idleTimeout = idleTimeout
            self.bodyStallTimeout = bodyStallTimeout
            self.maxConnections = maxConnections
            self.shutdownGrace = shutdownGrace
        }

        var clock: ConnectionClock.Limits {
            .init(header: .init(headerTimeout), idle: .init(idleTimeout), bodyStall: .init(bodyStallTimeout))
        }
    }

    /// The PEM files `serve --tls-cert` and `--tls-key` name.
    public struct TLSFiles: Sendable, Equatable {
        public var certificateChain: String
        public var privateKey: String

        public init(certificateChain: String, privateKey: String) {
            self.certificateChain = certificateChain
            self.privateKey = privateKey
        }
    }

    public init(
        host: String = "127.0.0.1",
        port: Int = 3000,
        directory: String = "./uploads",
        path: String = "/photo",
        field: String = "photo",
        maxSize: Int64 = 1 << 30,
        imagesOnly: Bool = false,
        tls: TLSFiles? = nil,
        limits: Limits = Limits(),
        resumableMaxAge: Duration = .seconds(24 * 3600),
        resumableIdleAge: Duration = .seconds(3600),
        resumablePerClient: Int = 64,
        resumableMaxAppend: Int64? = nil
    ) {
        self.resumableMaxAppend = resumableMaxAppend.map { min(max($0, 1), BoundedNumber.maxBytes) }
        self.host = host
        self.port = port
        self.directory = directory
        self.path = path.hasPrefix("/") ? path : "/" + path
        self.field = field
        self.maxSize = min(max(maxSize, 0), BoundedNumber.maxBytes)
        self.imagesOnly = imagesOnly
        self.tls = tls
        self.limits = limits
        self.resumableMaxAge = resumableMaxAge
        self.resumableIdleAge = min(resumableIdleAge, resumableMaxAge)
        self.resumablePerClient = max(1, resumablePerClient)
    }

    public var scheme: String { tls == nil ? "http" : "https" }

    /// The limits every `Upload-Limit` this receiver sends says, with `maxAge` seconds left.
    func uploadLimit(maxAge: Int64? = nil) -> UploadLimit {
        UploadLimit(maxSize: maxSize, maxAppendSize: resumableMaxAppend, maxAge: maxAge)
    }
}
