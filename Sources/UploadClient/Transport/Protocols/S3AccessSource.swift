import Foundation
import NIOConcurrencyHelpers
import UploadCore
import UploadProtocols

/// The S3 credentials, region and endpoint a transport signs with: read from its environment
/// and the AWS files the first time an `s3://` upload needs them, and kept once read (a failure
/// is not kept: the files may be put right while the agent runs).
public final class S3AccessSource: Sendable {
    private let environment: [String: String]
    private let known = NIOLockedValueBox<S3Access?>(nil)

    init(environment: [String: String]) {
        self.environment = environment
    }

    func access() throws(UploadInputError) -> S3Access {
        if let access = known.withLockedValue({ $0 }) { return access }
        let access = try Self.read(environment: environment)
        known.withLockedValue { $0 = access }
        return access
    }

    /// The access `environment` and the AWS files it names give (`S3Access.resolve` with this
    /// machine's files): for uploads, and for `uploadmon presign`.
    public static func read(environment: [String: String]) throws(UploadInputError) -> S3Access {
        try S3Access.resolve(environment: environment) { path in
            FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The URL an `s3://` destination's requests go to, as `environment` and the AWS files say:
    /// a proxy and `no_proxy` are chosen by that host, not by the bucket's name. Any other URL,
    /// or one whose access cannot be read (the upload then says why), as it is.
    public static func requestURL(for url: String, environment: [String: String]) -> String {
        guard S3Location.isS3(url), let location = try? S3Location(parsing: url), let access = try? read(environment: environment) else { return url }
        return access.url(for: location)
    }
}
