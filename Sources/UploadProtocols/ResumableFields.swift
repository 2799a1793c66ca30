import Foundation
import UploadCore

/// The header fields of "Resumable Uploads for HTTP" (draft-ietf-httpbis-resumable-upload) as
/// both ends read and write them. Every field is a Structured Field (RFC 9651): an Item
/// (`Upload-Offset`, `Upload-Length`: a non-negative Integer; `Upload-Complete`: a Boolean) or
/// a Dictionary (`Upload-Limit`). A value of the wrong form makes the whole field be ignored,
/// as the draft says, so every reader here returns nil for it.
public enum ResumableFields {
    public static let interopVersion = "Upload-Draft-Interop-Version"
    public static let complete = "Upload-Complete"
    public static let offset = "Upload-Offset"
    public static let length = "Upload-Length"
    public static let limit = "Upload-Limit"
    /// The media type of an append's content (from interop version 6 on).
    public static let partialUploadType = "application/partial-upload"

    /// The interop versions spoken here: 6 (URLSession on iOS 18.1 / macOS 15.1, tusd,
    /// SwiftNIO's `NIOResumableUpload`), 8 (drafts -09 to -11), 9 (draft -12) and 10 (drafts
    /// -13 to -15). Offered newest first; an answer is in the version its request named.
    public static let supportedVersions = [10, 9, 8, 6]
    public static let currentVersion = 10

    /// The versions spoken here as a sentence says them: "10, 9, 8 and 6".
    public static var spokenVersions: String {
        let names = supportedVersions.map(String.init)
        return names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    /// From version 9 on, `OPTIONS` answers say the limits and no longer `Accept-Patch`, and the
    /// final answer of a completed upload is had again by a valid append to it (`PATCH` at its
    /// end with `Upload-Complete: ?1` and no content); a `GET` on the upload resource retrieves
    /// its offset as `HEAD` does.
    public static func replaysByAppend(_ version: Int?) -> Bool { (version ?? 0) >= 9 }

    /// Up to version 9 an offset retrieval answer (`HEAD`/`GET` on the upload resource) must say
    /// `Upload-Complete` and `Upload-Length`; from 10 on neither is required (PR #3493), and
    /// `Upload-Complete` is not sent there, since it means something else in every other answer
    /// (whether the answer is the endpoint's own): whether an upload is whole is its offset
    /// reaching its length.
    public static func offsetAnswerSaysComplete(_ version: Int?) -> Bool { (version ?? 0) < 10 }

    /// The draft's problem types (RFC 9457), by the last part of their URI.
    public enum Problem: String, Sendable {
        case mismatchingOffset = "mismatching-upload-offset"
        case completedUpload = "completed-upload"
        case inconsistentLength = "inconsistent-upload-length"

        public var type: String { "https://iana.org/assignments/http-problem-types#" + rawValue }

        public var title: String {
            switch self {
            case .mismatchingOffset: "offset from request does not match offset of resource"
            case .completedUpload: "upload is already completed"
            case .inconsistentLength: "inconsistent length values for upload"
            }
        }
    }

    /// An sf-boolean: `?0` or `?1`, parameters (`;…`) allowed and ignored.
    public static func boolean(_ value: String?) -> Bool? {
        switch bareItem(value) {
        case "?1": true
        case "?0": false
        default: nil
        }
    }

    /// A non-negative sf-integer (at most 15 digits).
    public static func integer(_ value: String?) -> Int64? {
        guard let bare = bareItem(value), !bare.isEmpty, !bare.utf8.contains(where: { $0 == 0x20 || $0 == 0x09 }) else { return nil }
        return BoundedNumber.decimal(bare, max: 999_999_999_999_999, maxDigits: 15)
    }

    public static func boolean(_ value: Bool) -> String { value ? "?1" : "?0" }

    /// The interop version a request or answer names, if it is a number.
    public static func version(_ value: String?) -> Int? {
        guard let value, let number = BoundedNumber.decimal(value, max: 9999, maxDigits: 4), number > 0 else { return nil }
        return Int(number)
    }

    private static func bareItem(_ value: String?) -> String? {
        guard let value else { return nil }
        let item = value.prefix { $0 != ";" }
        return item.trimmingCharacters(in: .whitespaces)
    }
}

/// `Upload-Limit`: what a server allows for one upload.
public struct UploadLimit: Sendable, Equatable {
    public var maxSize: Int64?
    public var minSize: Int64?
    public var maxAppendSize: Int64?
    public var minAppendSize: Int64?
    /// Seconds the upload resource lives on from the answer that says it.
    public var maxAge: Int64?

    public init(maxSize: Int64? = nil, minSize: Int64? = nil, maxAppendSize: Int64? = nil, minAppendSize: Int64? = nil, maxAge: Int64? = nil) {
        self.maxSize = maxSize
        self.minSize = minSize
        self.maxAppendSize = maxAppendSize
        self.minAppendSize = minAppendSize
        self.maxAge = maxAge
    }

    /// The field's value, e.g. `max-size=1073741824, max-age=86400`.
    public var fieldValue: String {
        [
            ("max-size", maxSize), ("min-size", minSize), ("max-append-size", maxAppendSize),
            ("min-append-size", minAppendSize), ("max-age", maxAge),
        ]
        .compactMap { key, value in value.map { "\(key)=\($0)" } }
        .joined(separator: ", ")
    }

    /// Reads an RFC 9651 dictionary: unknown keys are ignored; a known key whose value is not a
    /// non-negative Integer, or a value that is no dictionary at all, makes the whole field be
    /// ignored (nil), as the draft says.
    public init?(parsing value: String?) {
        guard let value, let members = try? StructuredFields.dictionary(value, field: ResumableFields.limit) else { return nil }
        self.init()
        for (key, item) in members {
            let known = ["max-size", "min-size", "max-append-size", "min-append-size", "max-age", "expires"]
            guard known.contains(key) else { continue }
            // A bare key is `true` in a Dictionary: the wrong type for every known key.
            guard case .integer(let integer) = item, integer >= 0 else { return nil }
            let number = Int64(integer)
            switch key {
            case "max-size": maxSize = number
            case "min-size": minSize = number
            case "max-append-size": maxAppendSize = number
            case "min-append-size": minAppendSize = number
            default: maxAge = number  // `expires` is interop version 5's name for it
            }
        }
    }
}
