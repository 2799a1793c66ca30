/// Which resumable protocol an upload resource speaks.
public enum ResumableProtocol: String, Sendable, Hashable, Codable {
    /// draft-ietf-httpbis-resumable-upload: the multipart body appended to an upload resource.
    case draft
    /// tus 1.0.0: the file's raw bytes appended to an upload URL.
    case tus
    /// An S3 multipart upload: the file's parts, each a `PUT` of its own, put together at the end.
    case s3
}

/// One part S3 has of a multipart upload: its number (from 1), its `ETag` and its size.
public struct S3Part: Sendable, Hashable, Codable {
    public let number: Int
    public let etag: String
    public let size: Int64
    /// The part's CRC-32C as S3 checked it (base64, `x-amz-checksum-crc32c`); nil when it was
    /// sent without one.
    public var crc32c: String?

    public init(number: Int, etag: String, size: Int64, crc32c: String? = nil) {
        self.number = number
        self.etag = etag
        self.size = size
        self.crc32c = crc32c
    }
}

/// Where an interrupted upload can continue instead of starting over: the upload resource the
/// server created (draft-ietf-httpbis-resumable-upload, or a tus 1.0.0 upload URL) and what is
/// needed to make the same body again, byte for byte: for the draft the boundary (the rest of
/// the layout follows from the request), for tus nothing (the body is the file), and the file
/// as it was when the body was made.
public struct ResumePoint: Sendable, Hashable, Codable {
    /// The upload resource's absolute URL. Whoever holds it can append to the upload: it is
    /// shown to its owner (`status --json`), never in logs meant for others.
    public var uploadURL: String
    /// The protocol the resource speaks (points kept before tus were the draft's).
    public var kind: ResumableProtocol
    /// The draft's interop version the server speaks (0 for tus).
    public var version: Int
    /// The multipart body's boundary (empty for tus).
    public var boundary: String
    /// The body's length: the multipart body's, or for tus the file's as sent.
    public var bodyLength: Int64
    /// The file when its body was made; a file that changed since starts over.
    public var file: FileFingerprint
    /// Bytes the server has acknowledged (as of the last answer that said so).
    public var offset: Int64
    /// Bytes sent past `offset` by a request that was cut before its answer (0: none): whether
    /// the server kept them, the next offset it names says (a server that keeps nothing of a cut
    /// request is sent chunks from then on).
    public var unconfirmed: Int64 = 0
    /// When the server forgets an unfinished upload, as it said (tus `Upload-Expires`, an HTTP
    /// date), or nil.
    public var expires: String?
    /// S3: the multipart upload's id (in `boundary`'s stead) and the parts it has, as each
    /// arrived; every part but the last is `partSize` bytes.
    public var uploadID: String?
    public var parts: [S3Part] = []
    public var partSize: Int64 = 0
    /// S3: the checksum the multipart upload was created with (`crc32c`: every part carries
    /// its CRC-32C, and the whole object's is checked at completion); nil for one created
    /// without (its parts must go without too).
    public var checksum: String?

    public init(uploadURL: String, version: Int, boundary: String, bodyLength: Int64, file: FileFingerprint, offset: Int64 = 0) {
        self.uploadURL = uploadURL
        self.kind = .draft
        self.version = version
        self.boundary = boundary
        self.bodyLength = bodyLength
        self.file = file
        self.offset = offset
    }

    /// A tus upload URL holding `bodyLength` bytes of `file` when complete.
    public static func tus(uploadURL: String, bodyLength: Int64, file: FileFingerprint, offset: Int64 = 0, expires: String? = nil) -> ResumePoint {
        var point = ResumePoint(uploadURL: uploadURL, version: 0, boundary: "", bodyLength: bodyLength, file: file, offset: offset)
        point.kind = .tus
        point.expires = expires
        return point
    }

    /// An S3 multipart upload `uploadID` of `bodyLength` bytes of `file` to the object at
    /// `objectURL`, in parts of `partSize` bytes.
    public static func s3(
        objectURL: String, uploadID: String, partSize: Int64, bodyLength: Int64, file: FileFingerprint, parts: [S3Part] = [], checksum: String? = nil
    ) -> ResumePoint {
        var point = ResumePoint(
            uploadURL: objectURL, version: 0, boundary: "", bodyLength: bodyLength, file: file,
            offset: parts.reduce(0) { $0 + $1.size })
        point.kind = .s3
        point.uploadID = uploadID
        point.partSize = partSize
        point.parts = parts
        point.checksum = checksum
        return point
    }

    /// Whether the server keeps the upload on another origin than `url`'s (the endpoint the file
    /// was given for): the draft's `104`/`201` and tus's creation name the upload resource
    /// where the server likes, and the bytes go there (said, not refused: it is the protocol's
    /// own way). S3's object URL is made here, never the server's choice.
    public func isElsewhere(than url: String) -> Bool {
        guard kind != .s3, let resource = Endpoint(uploadURL), let endpoint = Endpoint(url) else { return false }
        return resource.origin != endpoint.origin
    }

    enum CodingKeys: String, CodingKey {
        case uploadURL
        case kind = "protocol"
        case version, boundary, bodyLength, file, offset, expires, unconfirmed, uploadID, parts, partSize, checksum
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        uploadURL = try c.decode(String.self, forKey: .uploadURL)
        kind = try c.decodeIfPresent(ResumableProtocol.self, forKey: .kind) ?? .draft
        version = try c.decode(Int.self, forKey: .version)
        boundary = try c.decode(String.self, forKey: .boundary)
        bodyLength = try c.decode(Int64.self, forKey: .bodyLength)
        file = try c.decode(FileFingerprint.self, forKey: .file)
        offset = try c.decode(Int64.self, forKey: .offset)
        expires = try c.decodeIfPresent(String.self, forKey: .expires)
        unconfirmed = try c.decodeIfPresent(Int64.self, forKey: .unconfirmed) ?? 0
        uploadID = try c.decodeIfPresent(String.self, forKey: .uploadID)
        parts = try c.decodeIfPresent([S3Part].self, forKey: .parts) ?? []
        partSize = try c.decodeIfPresent(Int64.self, forKey: .partSize) ?? 0
        checksum = try c.decodeIfPresent(String.self, forKey: .checksum)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(uploadURL, forKey: .uploadURL)
        try c.encode(kind, forKey: .kind)
        try c.encode(version, forKey: .version)
        try c.encode(boundary, forKey: .boundary)
        try c.encode(bodyLength, forKey: .bodyLength)
        try c.encode(file, forKey: .file)
        try c.encode(offset, forKey: .offset)
        try c.encodeIfPresent(expires, forKey: .expires)
        if unconfirmed > 0 { try c.encode(unconfirmed, forKey: .unconfirmed) }
        try c.encodeIfPresent(uploadID, forKey: .uploadID)
        if !parts.isEmpty { try c.encode(parts, forKey: .parts) }
        if partSize > 0 { try c.encode(partSize, forKey: .partSize) }
        try c.encodeIfPresent(checksum, forKey: .checksum)
    }
}
