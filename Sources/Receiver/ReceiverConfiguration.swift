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
        tls: TLSFiles? = nil
    ) {
        self.host = host
        self.port = port
        self.directory = directory
        self.path = path.hasPrefix("/") ? path : "/" + path
        self.field = field
        self.maxSize = maxSize
        self.imagesOnly = imagesOnly
        self.tls = tls
    }

    public var scheme: String { tls == nil ? "http" : "https" }
}
