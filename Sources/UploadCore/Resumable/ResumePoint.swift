/// Where an interrupted upload can continue instead of starting over: the upload resource the
/// server created (draft-ietf-httpbis-resumable-upload) and what is needed to make the same
/// body again, byte for byte: the boundary (the rest of the layout follows from the request)
/// and the file as it was when the body was made.
public struct ResumePoint: Sendable, Hashable, Codable {
    /// The upload resource's absolute URL. Whoever holds it can append to the upload: it is
    /// shown to its owner (`status --json`), never in logs meant for others.
    public var uploadURL: String
    /// The interop version the server speaks.
    public var version: Int
    public var boundary: String
    /// The multipart body's length.
    public var bodyLength: Int64
    /// The file when its body was made; a file that changed since starts over.
    public var file: FileFingerprint
    /// Bytes the server has acknowledged (as of the last answer that said so).
    public var offset: Int64

    public init(uploadURL: String, version: Int, boundary: String, bodyLength: Int64, file: FileFingerprint, offset: Int64 = 0) {
        self.uploadURL = uploadURL
        self.version = version
        self.boundary = boundary
        self.bodyLength = bodyLength
        self.file = file
        self.offset = offset
    }
}
