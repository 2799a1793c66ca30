import Foundation

/// Where `--to s3://bucket/prefix/` puts files: the bucket, and the key (a prefix ending in `/`,
/// or empty, gets each file's name; anything else is the key itself).
public struct S3Location: Sendable, Equatable {
    public let bucket: String
    public let key: String

    public static func isS3(_ url: String) -> Bool { url.lowercased().hasPrefix("s3://") }

    /// Refuses anything but `s3://` with a bucket name S3 allows (3 to 63 lower-case letters,
    /// digits, dots and hyphens, beginning and ending with a letter or digit).
    public init(parsing text: String) throws(UploadInputError) {
        guard Self.isS3(text) else { throw .badURL(text) }
        let rest = text.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        let valid =
            (3...63).contains(bucket.count)
            && bucket.utf8.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".")
                    || $0 == UInt8(ascii: "-")
            }
            && bucket.first.map { $0.isLetter || $0.isNumber } == true && bucket.last.map { $0.isLetter || $0.isNumber } == true
        guard valid else { throw .badS3Bucket(text) }
        self.bucket = bucket
        key = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
    }

    /// The key as it goes in a request's path: each segment percent-encoded, `/` kept.
    public var encodedKey: String {
        key.split(separator: "/", omittingEmptySubsequences: false).map { Endpoint.percentEncoded(String($0)) }.joined(separator: "/")
    }
}

/// Where uploads may go: an `http`/`https` endpoint, or an S3 bucket (`s3://bucket/prefix/`).
public enum Destination {
    /// Refuses what is neither, with the reason.
    public static func validate(_ url: String) throws(UploadInputError) {
        if S3Location.isS3(url) {
            _ = try S3Location(parsing: url)
            return
        }
        do throws(UploadInputError) {
            _ = try Endpoint(parsing: url)
        } catch .unsupportedScheme {
            throw .unsupportedDestination(url: url)
        }
    }

    /// Why these protocol options cannot go to `url` (nil: each file's own URL, none of them
    /// `s3://`), or nil: `--put` with another protocol, an `s3://` destination with another
    /// protocol or `--create-dirs` (S3 has no folders), and `--create-dirs` or form fields where
    /// no `PUT` goes.
    public static func refusal(_ url: String?, protocol asked: UploadProtocol, put: Bool, createDirs: Bool, formFields: Bool) -> String? {
        if put, asked != .auto, asked != .put { return "--put sends a PUT; it cannot go with --protocol \(asked.rawValue)" }
        let sent: UploadProtocol = put ? .put : asked
        if let url, S3Location.isS3(url) {
            guard asked == .auto || asked == .put else {
                return "an s3:// destination takes S3's own PUT; it cannot go with --protocol \(asked.rawValue)"
            }
            if createDirs { return "--create-dirs makes WebDAV folders; S3 has none to make (a key's / is part of its name)" }
        }
        if createDirs, sent != .put { return "--create-dirs makes WebDAV folders for --put; add --put" }
        if sent == .put, formFields { return "--put sends the file's bytes alone; form fields (-F) go only in a multipart upload" }
        return nil
    }
}
