import Foundation
import UploadClient
import UploadCore
import UploadProtocols

/// `uploadmon presign`: what it accepts and the URL it prints.
public enum Presign {
    /// The object `text` names, or why it is none: `s3://bucket/key`, not a prefix.
    public static func object(_ text: String) throws(UploadInputError) -> S3Location {
        let location = try S3Location(parsing: text)
        guard !location.key.isEmpty, !location.key.hasSuffix("/") else { throw .notAnS3Object(bucket: location.bucket) }
        return location
    }

    /// The lifetime `text` says, in seconds: from one second to seven days (SigV4's limit).
    public static func lifetime(_ text: String) throws(RangeError) -> Int64 {
        Int64(try DurationText.parse(text, option: "--expires", allowed: 1...Double(S3Access.longestPresign)))
    }

    /// A presigned PUT URL for `object`, valid `expires` from `now`, signed with the access
    /// `environment` and the AWS files give.
    public static func url(_ object: S3Location, expires: Int64, environment: [String: String], now: Date) throws(UploadInputError) -> String {
        try S3AccessSource.read(environment: environment).presignedPut(object, expires: expires, date: now)
    }
}
