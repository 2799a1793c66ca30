import Foundation
/// Where an upload's bytes come from.
public enum UploadSource: Sendable, Hashable, Codable {
    /// A file on disk, streamed in chunks; its size fixes the `Content-Length`.
    case file(path: String)
    /// Standard input (or any pipe): unknown length, sent chunked.
    case standardInput

    /// The file's path as given, `-` for standard input.
    public var path: String {
        if case .file(let path) = self { return path }
        return "-"
    }
}

/// One header the user asked to send. Its value is a secret as far as output goes:
/// `description` never shows it. It is Codable so a request can travel whole (to the agent,
/// into the journal and back) — encoding is for sending, never for showing.
public struct RequestHeader: Sendable, Hashable, Codable, CustomStringConvertible {
    public let name: String
    public let value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value` as curl's `-H` does.
    public init(parsing argument: String) throws(UploadInputError) {
        guard let colon = argument.firstIndex(of: ":") else { throw .badHeader(argument) }
        let name = argument[..<colon].trimmingWhitespaceSubstring()
        let value = argument[argument.index(after: colon)...].trimmingWhitespaceSubstring()
        guard Self.isToken(name), !value.contains(where: { $0 == "\r" || $0 == "\n" }) else {
            throw .badHeader(argument)
        }
        self.init(name: name, value: value)
    }

    /// Whether `name` can be a field name: an RFC 9110 token (one or more tchar).
    public static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(isTokenByte)
    }

    /// Whether `byte` is an RFC 9110 tchar.
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    public var description: String { "\(name): <hidden>" }
}

/// Everything needed to perform one upload, fixed when it is queued: the one request type,
/// from the command line through the agent's socket and the journal back to the transport.
public struct UploadRequest: Sendable, Hashable, Codable {
    public var source: UploadSource
    public var url: String
    public var field: String
    /// The `filename` sent in the part; defaults to the file's own name.
    public var uploadName: String
    public var formFields: [FormField]
    public var headers: [RequestHeader]
    /// When false, content that is not an image is refused before sending.
    public var allowAnyFile: Bool
    /// The file as it was when queued; an attempt refuses to send a file that no longer matches.
    public var expectedFile: FileFingerprint?
    /// Where an earlier attempt left the upload on a server that resumes (the body is made
    /// again from it, byte for byte); nil to start at 0.
    public var resume: ResumePoint?
    /// Sent as `Idempotency-Key` with an ordinary upload, the same on every attempt, so a server
    /// that honours it answers a repeat of a completed upload without storing it twice.
    public var idempotencyKey: String?
    /// A tus upload URL another service handed out (`send --upload-url`): the file goes there,
    /// continued from the server's offset (`HEAD`, then `PATCH`), and is never created anew.
    public var uploadURL: String?

    public init(
        source: UploadSource,
        url: String,
        field: String = "photo",
        uploadName: String,
        formFields: [FormField] = [],
        headers: [RequestHeader] = [],
        allowAnyFile: Bool = false,
        expectedFile: FileFingerprint? = nil,
        resume: ResumePoint? = nil,
        idempotencyKey: String? = nil
    ) {
        self.expectedFile = expectedFile
        self.resume = resume
        self.idempotencyKey = idempotencyKey
        self.source = source
        self.url = url
        self.field = field
        self.uploadName = uploadName
        self.formFields = formFields
        self.headers = headers
        self.allowAnyFile = allowAnyFile
    }

    /// Builds a request for a path as the command line gives it (`-` is standard input),
    /// applying `--name` with the extension rule.
    public static func forPath(
        _ path: String,
        url: String,
        field: String = "photo",
        requestedName: String? = nil,
        formFields: [FormField] = [],
        headers: [RequestHeader] = [],
        allowAnyFile: Bool = false
    ) throws(UploadInputError) -> UploadRequest {
        let source: UploadSource = path == "-" ? .standardInput : .file(path: path)
        let original = path == "-" ? "stdin" : UploadName.uploadName(ofPath: path)
        return UploadRequest(
            source: source, url: url, field: field,
            uploadName: try UploadName.resolve(originalFileName: original, requested: requestedName),
            formFields: formFields, headers: headers, allowAnyFile: allowAnyFile
        )
    }
}

extension UploadRequest {
    /// A new random key for `idempotencyKey`: a version 4 UUID in lower case, its 122 random
    /// bits drawn in one system call (`UUID()` opened, read and closed `/dev/urandom` for each,
    /// three system calls per upload queued).
    public static func newIdempotencyKey() -> String {
        var generator = DrawnRandomWords(count: 2)
        var bytes: [UInt8] = []
        for _ in 0..<2 { withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) } }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        var text = Array(Digester.hex(bytes).utf8)
        for dash in [20, 16, 12, 8] { text.insert(UInt8(ascii: "-"), at: dash) }
        return String(decoding: text, as: UTF8.self)
    }
}

extension Substring {
    func trimmingWhitespaceSubstring() -> String { String(self).trimmingWhitespace() }
}
