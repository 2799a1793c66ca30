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
    /// Continue an interrupted upload where the server has it, on servers that support it
    /// (`--no-resume`: always start over).
    public var resume: Bool
    /// Send photos without where they were taken (`--strip-location`): GPS in EXIF and location
    /// in XMP removed from JPEG, PNG, WebP, HEIC and AVIF; other formats are refused.
    public var stripLocation: Bool
    /// The proxy the upload goes through (`ProxyRules` chose it where it was queued: an upload
    /// queued to the agent keeps the proxy of the shell that queued it), or nil to go direct.
    public var proxy: String?
    /// The hosts reached directly rather than through `proxy` (`--noproxy`, else `no_proxy`
    /// where it was queued), read for each request's own host: a redirect is routed by where
    /// it goes. nil: every request goes through `proxy`.
    public var noProxy: String?
    /// Prove each upload arrived intact (RFC 9530): its SHA-256 goes with it (`Content-Digest`)
    /// and the server is asked for the digest of what it received (`Want-Repr-Digest`);
    /// `--no-digest` sends neither.
    public var digests: Bool
    /// Which upload protocol to speak (`--protocol`).
    public var uploadProtocol: UploadProtocol
    /// Bytes per tus `PATCH` at most (`--chunk-size`), or nil for the whole rest in one.
    public var chunkSize: Int64?
    /// With `put`: a missing WebDAV collection on the way to the file is made (`MKCOL`) and the
    /// file sent again (`--create-dirs`).
    public var createDirs: Bool
    /// A 307/308 to another origin is followed (`-L`/`--location`, as curl's); without it the
    /// upload ends saying where the server wanted the file.
    public var followsRedirectsElsewhere: Bool
    /// Photos made into another format or size before they are sent (`--convert`,
    /// `--max-dimension`, `--max-bytes`); nil: sent as they are.
    public var conversion: PhotoConversion?

    public init(
        caCertificatePath: String? = nil, insecure: Bool = false, rateLimit: Int64? = nil,
        connectTimeout: Double = 10, stallTimeout: Double = 30, answerTimeout: Double = 60, retries: Int = 0,
        resume: Bool = true, stripLocation: Bool = false, proxy: String? = nil, digests: Bool = true,
        uploadProtocol: UploadProtocol = .auto, chunkSize: Int64? = nil, createDirs: Bool = false,
        noProxy: String? = nil, followsRedirectsElsewhere: Bool = false, conversion: PhotoConversion? = nil
    ) {
        self.conversion = conversion
        self.followsRedirectsElsewhere = followsRedirectsElsewhere
        self.noProxy = noProxy
        self.createDirs = createDirs
        self.uploadProtocol = uploadProtocol
        self.chunkSize = chunkSize
        self.digests = digests
        self.resume = resume
        self.stripLocation = stripLocation
        self.proxy = proxy
        self.caCertificatePath = caCertificatePath
        self.insecure = insecure
        self.rateLimit = rateLimit
        self.connectTimeout = connectTimeout
        self.stallTimeout = stallTimeout
        self.answerTimeout = answerTimeout
        self.retries = retries
    }

    public var retryPolicy: RetryPolicy { RetryPolicy(maxRetries: retries) }

    /// `proxy` and `noProxy` read: which proxy each request goes through.
    public func proxyRoute() throws(UploadInputError) -> ProxyRoute {
        ProxyRoute(proxy: try proxy.map { text throws(UploadInputError) in try ProxyTarget(parsing: text) }, bypass: noProxy)
    }

    enum CodingKeys: String, CodingKey {
        case caCertificatePath, insecure, rateLimit, connectTimeout, stallTimeout, answerTimeout, retries, resume, stripLocation, proxy, digests
        case uploadProtocol = "protocol"
        case chunkSize, createDirs, noProxy
        case followsRedirectsElsewhere = "location"
        case conversion = "convert"
    }

    /// Settings stored before uploads could resume read as resuming.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            caCertificatePath: try c.decodeIfPresent(String.self, forKey: .caCertificatePath),
            insecure: try c.decode(Bool.self, forKey: .insecure),
            rateLimit: try c.decodeIfPresent(Int64.self, forKey: .rateLimit),
            connectTimeout: try c.decode(Double.self, forKey: .connectTimeout),
            stallTimeout: try c.decode(Double.self, forKey: .stallTimeout),
            answerTimeout: try c.decode(Double.self, forKey: .answerTimeout),
            retries: try c.decode(Int.self, forKey: .retries),
            resume: try c.decodeIfPresent(Bool.self, forKey: .resume) ?? true,
            stripLocation: try c.decodeIfPresent(Bool.self, forKey: .stripLocation) ?? false,
            proxy: try c.decodeIfPresent(String.self, forKey: .proxy),
            digests: try c.decodeIfPresent(Bool.self, forKey: .digests) ?? true,
            uploadProtocol: try c.decodeIfPresent(UploadProtocol.self, forKey: .uploadProtocol) ?? .auto,
            chunkSize: try c.decodeIfPresent(Int64.self, forKey: .chunkSize),
            createDirs: try c.decodeIfPresent(Bool.self, forKey: .createDirs) ?? false,
            noProxy: try c.decodeIfPresent(String.self, forKey: .noProxy),
            followsRedirectsElsewhere: try c.decodeIfPresent(Bool.self, forKey: .followsRedirectsElsewhere) ?? false,
            conversion: try c.decodeIfPresent(PhotoConversion.self, forKey: .conversion))
    }

    /// Refuses settings no upload can run with, naming the option: the command line checks them
    /// as they are typed, the agent again when they arrive over its socket or from its journal.
    public func validate() throws(RangeError) {
        _ = try DurationRule.timeout.check(connectTimeout, option: "--connect-timeout")
        _ = try DurationRule.timeout.check(stallTimeout, option: "--stall-timeout")
        _ = try DurationRule.timeout.check(answerTimeout, option: "--answer-timeout")
        if let rateLimit, rateLimit < 1 { throw RangeError(message: "--limit-rate \(rateLimit) must be at least 1 byte per second") }
        if let rateLimit, rateLimit > BoundedNumber.maxBytes {
            throw RangeError(
                message: "--limit-rate \(rateLimit) is out of range: at most \(BoundedNumber.maxBytes) bytes per second (8 PiB/s); leave it out for full speed")
        }
        if let chunkSize, chunkSize < 1 || chunkSize > BoundedNumber.maxBytes {
            throw RangeError(message: "--chunk-size \(chunkSize) is out of range: from 1 byte to \(BoundedNumber.maxBytes) bytes")
        }
        try conversion?.validate()
        guard (0...1000).contains(retries) else { throw RangeError(message: "--retries \(retries) is out of range: allowed 0 to 1000") }
        if let proxy {
            do throws(UploadInputError) { _ = try ProxyTarget(parsing: proxy) } catch { throw RangeError(message: error.description) }
        }
    }
}

/// The protocol an upload speaks (`--protocol`).
public enum UploadProtocol: String, Sendable, Hashable, Codable, CaseIterable {
    /// Whatever the origin speaks, learnt from one `OPTIONS` per origin (remembered): tus 1.0.0,
    /// the resumable-upload draft, or a plain multipart `POST`.
    case auto
    /// A multipart/form-data `POST`, through the draft's upload resource when the origin offers one.
    case multipart
    /// tus 1.0.0: the file's raw bytes, its name and type in `Upload-Metadata`.
    case tus
    /// The file's raw bytes in a `PUT` to the URL (curl's `-T`): presigned object-store URLs,
    /// WebDAV; a URL ending in `/` gets the file's name.
    case put
}
