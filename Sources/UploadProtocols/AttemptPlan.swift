import UploadCore

/// Which way one attempt sends its upload, decided from what is known before anything is sent
/// and decided again after each thing the attempt learns: the origin's answer to the
/// discovery question, a tus server's refusal of a multipart body, a draft resource the origin
/// would not create, a remembered tus origin that refuses as no tus server would. Pure: the
/// transport gathers the facts, follows `route`, and tells the plan what it learnt.
public struct AttemptPlan: Sendable, Equatable {
    /// The protocol and path one attempt takes.
    public enum Route: Sendable, Equatable {
        /// Ask the origin what it speaks (`OPTIONS`, `DiscoveryMachine`), then plan again.
        case ask
        /// tus 1.0.0 (`TusUploadMachine`; `TusStreamMachine` for a pipe), offering this.
        case tus(TusCapabilities)
        /// The resumable-upload draft (`ResumableUploadMachine`); `optimistic`: the body goes in
        /// the creation request, where interim answers (`104`) are seen.
        case draft(optimistic: Bool)
        /// One multipart `POST` (`PlainUploadMachine`); `inOneWrite`: the whole body is in
        /// memory and goes with its head in one write on this client's own connection.
        case multipart(inOneWrite: Bool)
        /// The file's raw bytes in one `PUT` (`PutUploadMachine`); `inOneWrite` as for multipart.
        case put(inOneWrite: Bool)
    }

    /// Which carries a request: this client's own HTTP/1 connections, or AsyncHTTPClient.
    public enum Carrier: Sendable, Equatable {
        case direct
        case client
    }

    /// Files smaller than this go in one request: resuming them would save less than the
    /// request that makes them resumable costs.
    public static let resumeThreshold: Int64 = 1 << 20

    /// `--protocol`.
    public var asked: UploadProtocol
    /// Whether uploads continue where a server has them (`--no-resume`: false).
    public var resume: Bool
    /// Which protocol an earlier attempt left the upload in, if it did.
    public var point: ResumableProtocol?
    /// The upload URL was handed out by another service (`send --upload-url`): tus, never asked.
    public var handedOut: Bool
    /// The file's size; nil for a pipe.
    public var size: Int64?
    /// Requests to the endpoint can go on this client's own connections (plain `http`, a
    /// request target that can go on the request line as is, the direct way not turned off).
    public var directPossible: Bool
    /// Through an HTTP proxy (which may take a `104` for the answer).
    public var throughHTTPProxy: Bool
    /// The whole body is held in memory (a file of up to one chunk), unpaced by a rate limit.
    public var bodyInMemory: Bool
    /// What the origin is known to speak (nil: nothing yet).
    public private(set) var known: OriginSupport?
    private var askedOrigin = false
    /// A tus answer came to something that was no tus request (a multipart body).
    private var tusShown = false
    /// Taken for tus, it refused as no tus server would (or the draft's machine chose the plain way).
    private var tusRefused = false
    private var draftDeclined = false

    public init(
        asked: UploadProtocol, resume: Bool, point: ResumableProtocol?, handedOut: Bool, size: Int64?,
        directPossible: Bool, throughHTTPProxy: Bool, bodyInMemory: Bool, known: OriginSupport?
    ) {
        self.asked = asked
        self.resume = resume
        self.point = point
        self.handedOut = handedOut
        self.size = size
        self.directPossible = directPossible
        self.throughHTTPProxy = throughHTTPProxy
        self.bodyInMemory = bodyInMemory
        self.known = known
    }

    /// The way to go now.
    public var route: Route {
        // Asked for by name: never a question, never another protocol.
        if asked == .put { return .put(inOneWrite: bodyInMemory && directPossible) }
        // Handed out by another service: tus whatever was asked; what the origin offers, if known.
        if handedOut { return .tus(known?.tusCapabilities ?? .assumed) }
        if tusShown { return askedOrigin ? .tus(known?.tusCapabilities ?? .assumed) : .ask }
        if !tusRefused, asked != .multipart, let capabilities = known?.tusCapabilities { return .tus(capabilities) }
        switch asked {
        case .tus:
            // Asked once per origin; a server that does not answer OPTIONS (some hand out
            // upload URLs and take only HEAD and PATCH) is assumed to do the core and creation.
            if point == .tus { return .tus(.assumed) }
            return known == nil && !askedOrigin ? .ask : .tus(.assumed)
        case .auto:
            if point == .tus { return .tus(.assumed) }
            // The one discovery question, for files worth resuming: tus and the draft take the
            // same answer.
            if resume, known == nil, !askedOrigin, let size, size >= Self.resumeThreshold { return .ask }
        case .multipart, .put:
            break
        }
        // A tus upload point is not the draft's: its body would be made again with no boundary.
        // Without a point of its own, the draft is for files worth resuming at an origin not
        // known to refuse it (one that took the question and said nothing gets an optimistic
        // creation, which a plain server answers as the ordinary upload).
        if resume, let size, !draftDeclined,
            point == .draft || (size >= Self.resumeThreshold && mayResumeByTheDraft)
        {
            return .draft(optimistic: seesInterimAnswers)
        }
        return .multipart(inOneWrite: bodyInMemory && directPossible)
    }

    /// Whether the origin may take the draft, as far as is known.
    private var mayResumeByTheDraft: Bool {
        switch known {
        case nil, .supported, .silent, .unknown: true
        case .unsupported, .tus: false
        }
    }

    /// The discovery question must be asked of the origin itself, not answered from what was
    /// known: a tus answer to a multipart body contradicted it.
    public var askAfresh: Bool { tusShown && !askedOrigin }

    /// Whether requests go where this client parses the answers itself and sees interim ones
    /// (`100`, `104`): its own connections, not through an HTTP proxy (a SOCKS5 tunnel carries
    /// them; tinyproxy, for one, takes a `104` for the answer and closes the connection).
    public var seesInterimAnswers: Bool { directPossible && !throughHTTPProxy }

    /// What carries a request with a body of `bodyLength` bytes (nil: unknown, a pipe's):
    /// this client's own connections where they can, AsyncHTTPClient otherwise (TLS, a body
    /// of unknown length).
    public static func carrier(directPossible: Bool, bodyLength: Int64?, hasBody: Bool) -> Carrier {
        directPossible && (!hasBody || bodyLength != nil) ? .direct : .client
    }

    /// The origin answered the discovery question (`remembered` answers count as asked too).
    public mutating func learnt(_ answer: OriginSupport) {
        known = answer
        askedOrigin = true
    }

    /// The draft's machine chose the ordinary request (no support, a small file).
    public mutating func draftWentPlain() {
        draftDeclined = true
    }

    /// What a tus attempt's answer says of the plan: true when the origin, taken for tus on
    /// what was known of it (remembered for a day), refused the creation as no tus server
    /// would (no `Tus-Resumable` in a 4xx): it is not one any more, and the upload goes the
    /// ordinary way in this attempt. Only a refusal the ordinary upload would meet too (401,
    /// 403, 407, 413) is final.
    public mutating func tusAttemptRefused(_ result: AttemptResult) -> Bool {
        guard asked == .auto, point == nil, !handedOut, !tusShown, let response = result.response,
            (400..<500).contains(response.status), ![401, 403, 407, 413].contains(response.status),
            !TusCapabilities.speaksTus(response)
        else { return false }
        known = .unsupported
        tusRefused = true
        return true
    }

    /// What a multipart attempt's first answer says of the plan: true when, under `auto`, a
    /// tus server refused the body (a 4xx with `Tus-Resumable`: it takes no other); the origin
    /// is asked what it offers, and the same file goes by tus.
    public mutating func plainAnsweredAsTus(_ result: AttemptResult) -> Bool {
        guard asked == .auto, !tusShown, let response = result.response, (400..<500).contains(response.status),
            TusCapabilities.speaksTus(response)
        else { return false }
        tusShown = true
        askedOrigin = false
        known = nil
        return true
    }
}
