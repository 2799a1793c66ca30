import Crypto
import Foundation
import UploadCore

/// The header fields of tus 1.0.0 (tus.io/protocols/resumable-upload, the protocol Cloudflare
/// Stream, Vimeo, Supabase Storage, Transloadit and every tusd speak) as the client writes and
/// reads them.
public enum TusFields {
    public static let resumable = "Tus-Resumable"
    public static let version = "Tus-Version"
    public static let extensions = "Tus-Extension"
    public static let maxSize = "Tus-Max-Size"
    public static let checksumAlgorithms = "Tus-Checksum-Algorithm"
    public static let offset = "Upload-Offset"
    public static let length = "Upload-Length"
    public static let metadata = "Upload-Metadata"
    public static let expires = "Upload-Expires"
    public static let checksum = "Upload-Checksum"
    /// `creation-defer-length`: the length is said later, in a `PATCH`.
    public static let deferLength = "Upload-Defer-Length"
    /// The only version spoken here (and the only one deployed).
    public static let protocolVersion = "1.0.0"
    /// The media type of every `PATCH` (and of a creation that carries bytes).
    public static let chunkType = "application/offset+octet-stream"
    /// The status of a chunk whose `Upload-Checksum` did not match (the checksum extension).
    public static let checksumMismatch = 460

    /// A non-negative integer field (`Upload-Offset`, `Upload-Length`, `Tus-Max-Size`).
    public static func integer(_ value: String?) -> Int64? {
        value.flatMap { BoundedNumber.decimal($0) }
    }

    /// A comma-separated list, each member trimmed, empty members dropped.
    public static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `Upload-Metadata`: `key base64(value)` pairs joined by commas, in order, each key once
    /// (the first wins). A key must be non-empty and hold no space or comma: such a key is
    /// refused with why (`Problem`), never sent mangled.
    public static func metadata(_ pairs: [(key: String, value: String)]) throws(MetadataProblem) -> String {
        var seen = Set<String>()
        var members: [String] = []
        for (key, value) in pairs {
            guard !key.isEmpty, !key.contains(" "), !key.contains(","), key.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
            else { throw MetadataProblem(key: key) }
            guard seen.insert(key).inserted else { continue }
            members.append(value.isEmpty ? key : "\(key) \(Data(value.utf8).base64EncodedString())")
        }
        return members.joined(separator: ",")
    }

    /// An `Upload-Metadata` key tus cannot carry (empty, or with a space or comma).
    public struct MetadataProblem: Error, Sendable, Equatable, CustomStringConvertible {
        public let key: String
        public init(key: String) { self.key = key }
        public var description: String {
            "the field name '\(key)' cannot go in tus metadata (Upload-Metadata keys are printable ASCII without spaces or commas)"
        }
    }

    /// Why a tus creation answered with a success but no (usable) `Location` failed.
    public static func noUploadURL(_ response: UploadResponse) -> String {
        let location = response.header("Location")
        return "the tus server answered \(response.status) to the creation but "
            + (location == nil ? "named no upload URL (Location)" : "its Location is not an http(s) URL")
            + ": nothing was made to send the file to"
    }
}

/// What a tus server said it does in its `OPTIONS` answer: the extensions (`creation`,
/// `creation-with-upload`, `termination`, `checksum`, `expiration`, …), the largest upload it
/// takes, and the checksum algorithms it knows.
public struct TusCapabilities: Sendable, Hashable, Codable {
    public var extensions: [String]
    public var maxSize: Int64?
    public var checksumAlgorithms: [String]
    /// Learnt, not said: the server keeps nothing of a `PATCH` that was cut (it stores a request
    /// only once it is whole, as many small tus servers do), so its uploads go in chunks.
    public var discardsCutRequests: Bool?
    /// Learnt with it: the fewest bytes a request to it carried before the link cut it (chunks
    /// are sized to lose little of the next cut).
    public var cutAfter: Int64?
    /// Learnt: the most bytes one request may carry (a `413` named it).
    public var maxRequest: Int64?

    public init(
        extensions: [String] = ["creation"], maxSize: Int64? = nil, checksumAlgorithms: [String] = [],
        discardsCutRequests: Bool? = nil, cutAfter: Int64? = nil, maxRequest: Int64? = nil
    ) {
        self.extensions = extensions
        self.maxSize = maxSize
        self.checksumAlgorithms = checksumAlgorithms
        self.discardsCutRequests = discardsCutRequests
        self.cutAfter = cutAfter
        self.maxRequest = maxRequest
    }

    /// What is assumed of a server that was not asked or did not say (as tus-js-client
    /// assumes): the core protocol and creation, nothing more.
    public static let assumed = TusCapabilities()

    public func has(_ name: String) -> Bool { extensions.contains(name) }

    /// Reads an `OPTIONS` answer: a success whose `Tus-Version` lists 1.0.0. nil: not tus (or
    /// not a version spoken here).
    public init?(options response: UploadResponse) {
        guard (200..<300).contains(response.status),
            TusFields.list(response.header(TusFields.version)).contains(TusFields.protocolVersion)
        else { return nil }
        self.init(
            extensions: TusFields.list(response.header(TusFields.extensions)).map { $0.lowercased() },
            maxSize: TusFields.integer(response.header(TusFields.maxSize)),
            checksumAlgorithms: TusFields.list(response.header(TusFields.checksumAlgorithms)).map { $0.lowercased() })
    }

    /// Whether an answer comes from a tus server (every answer but `OPTIONS` carries
    /// `Tus-Resumable`): a tus server refusing a multipart `POST` says so this way.
    public static func speaksTus(_ response: UploadResponse) -> Bool {
        response.header(TusFields.resumable) != nil || response.header(TusFields.version) != nil
    }
}

/// tus's checksum extension: each `PATCH` may carry `Upload-Checksum: <algorithm> <base64>` of
/// its content; a server that finds it wrong answers `460` and keeps nothing of the chunk.
public struct TusChecksum: Sendable {
    /// The algorithms spoken here, best first.
    public static let preference = ["sha256", "sha512", "sha1", "md5"]

    /// The algorithm to use with a server that lists `checksum` and these algorithms, or nil.
    public static func algorithm(for capabilities: TusCapabilities) -> String? {
        guard capabilities.has("checksum") else { return nil }
        return preference.first { capabilities.checksumAlgorithms.contains($0) }
    }

    public let algorithm: String
    private var sha256: SHA256?
    private var sha512: SHA512?
    private var sha1: Insecure.SHA1?
    private var md5: Insecure.MD5?

    public init?(_ algorithm: String) {
        self.algorithm = algorithm
        switch algorithm {
        case "sha256": sha256 = SHA256()
        case "sha512": sha512 = SHA512()
        case "sha1": sha1 = Insecure.SHA1()
        case "md5": md5 = Insecure.MD5()
        default: return nil
        }
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        sha256?.update(bufferPointer: bytes)
        sha512?.update(bufferPointer: bytes)
        sha1?.update(bufferPointer: bytes)
        md5?.update(bufferPointer: bytes)
    }

    /// The field's value: the algorithm and the base64 of the digest.
    public func fieldValue() -> String {
        let digest: [UInt8] =
            if let sha256 { Array(sha256.finalize()) } else if let sha512 { Array(sha512.finalize()) } else if let sha1 { Array(sha1.finalize()) } else {
                Array(md5!.finalize())
            }
        return "\(algorithm) \(Data(digest).base64EncodedString())"
    }
}
