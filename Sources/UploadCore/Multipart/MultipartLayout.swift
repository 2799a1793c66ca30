/// The exact byte layout of a `multipart/form-data` body with text fields and one file part,
/// computed before any byte is sent (RFC 7578 / RFC 2046 framing, CRLF everywhere).
///
/// The body is `head` + the file's bytes + `tail`. `head` holds every text field and the file
/// part's headers, `tail` the closing delimiter, so `contentLength` is known exactly from the
/// file size and `segment(at:)` says which bytes sit at any offset (a resume restarts mid-body).
public struct MultipartLayout: Sendable, Equatable {
    public let boundary: Boundary
    public let fields: [FormField]
    public let fileField: String
    public let fileName: String
    public let contentType: MediaType
    /// `nil` when the file's length is unknown (a pipe): the body is then sent chunked.
    public let fileSize: Int64?

    public let head: [UInt8]
    public let tail: [UInt8]

    public init(
        boundary: Boundary,
        fields: [FormField] = [],
        fileField: String,
        fileName: String,
        contentType: MediaType,
        fileSize: Int64?
    ) {
        self.boundary = boundary
        self.fields = fields
        self.fileField = fileField
        self.fileName = fileName
        self.contentType = contentType
        self.fileSize = fileSize

        // Bytes, not String concatenation: this runs for every upload.
        let dashBoundary = Array("--\(boundary.value)".utf8)
        var head: [UInt8] = []
        head.reserveCapacity(160 + fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 96 })
        for field in fields {
            head += dashBoundary
            head += "\r\nContent-Disposition: form-data; name=\"\(HeaderEscaping.escapeQuoted(field.name))\"\r\n\r\n".utf8
            head += field.value.utf8
            head += "\r\n".utf8
        }
        head += dashBoundary
        head += "\r\nContent-Disposition: form-data; name=\"\(HeaderEscaping.escapeQuoted(fileField))\"; ".utf8
        head += "filename=\"\(HeaderEscaping.escapeQuoted(fileName))\"\r\n".utf8
        head += "Content-Type: \(contentType.mime)\r\n\r\n".utf8
        self.head = head
        self.tail = Array("\r\n--\(boundary.value)--\r\n".utf8)
    }

    private init(bare contentType: MediaType, fileSize: Int64?) {
        boundary = Boundary("bare")
        fields = []
        fileField = ""
        fileName = ""
        self.contentType = contentType
        self.fileSize = fileSize
        head = []
        tail = []
    }

    /// The file alone, with no framing: the body of a protocol that sends a file's raw bytes
    /// (tus), laid out as a multipart body is so the same streaming serves both.
    public static func bare(contentType: MediaType, fileSize: Int64?) -> MultipartLayout {
        MultipartLayout(bare: contentType, fileSize: fileSize)
    }

    /// The request's `Content-Type` header value.
    public var contentTypeHeader: String { "multipart/form-data; boundary=\(boundary.value)" }

    /// The exact body length, or `nil` for a file of unknown length.
    public var contentLength: Int64? {
        fileSize.map { Int64(head.count) + $0 + Int64(tail.count) }
    }

    /// Where a body offset falls.
    public enum Segment: Equatable, Sendable {
        /// Inside `head`, at this index.
        case head(Int)
        /// Inside the file, at this file offset.
        case file(Int64)
        /// Inside `tail`, at this index.
        case tail(Int)
        /// At or past the end of the body.
        case end
    }

    /// Which part of the body holds the byte at `offset` (requires a known file size).
    public func segment(at offset: Int64) -> Segment {
        precondition(offset >= 0, "body offsets are never negative")
        guard let fileSize else { preconditionFailure("segment(at:) needs a known file size") }
        let headCount = Int64(head.count)
        if offset < headCount { return .head(Int(offset)) }
        if offset < headCount + fileSize { return .file(offset - headCount) }
        let tailOffset = offset - headCount - fileSize
        if tailOffset < Int64(tail.count) { return .tail(Int(tailOffset)) }
        return .end
    }
}
