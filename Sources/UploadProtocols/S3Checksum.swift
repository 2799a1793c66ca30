import UploadCore

/// What S3 checks of what arrives: every `PUT` (a whole object or a part) carries the CRC-32C
/// of its bytes (`x-amz-checksum-crc32c`), which S3 recomputes and refuses on a mismatch
/// (`400 BadDigest`), keeping nothing; a multipart upload is created for the whole object's
/// CRC-32C (`x-amz-checksum-type: FULL_OBJECT`), which its completion carries and S3 checks
/// against the parts it put together. Its answers name the value it kept: equal to the one
/// sent, the upload is verified.
///
/// CRC-32C because it costs almost nothing (the processor's own instruction) and its parts'
/// values combine into the whole object's, so parts sent side by side need no second pass.
public enum S3Checksum {
    /// The algorithm's name as the journal keeps it and the monitor shows it ("verified (crc32c)").
    public static let name = "crc32c"
    public static let header = "x-amz-checksum-crc32c"
    /// What the creation of a multipart upload says it will be checked by.
    public static let creationFields = [("x-amz-checksum-algorithm", "CRC32C"), ("x-amz-checksum-type", "FULL_OBJECT")]
    /// What the AWS SDKs send beside the value (some S3-compatible servers read the value only
    /// when it is there).
    public static let sdkAlgorithm = ("x-amz-sdk-checksum-algorithm", "CRC32C")

    /// The fields a `PUT` of bytes whose CRC-32C is `crc` carries.
    public static func fields(_ crc: CRC32C) -> [(String, String)] {
        [sdkAlgorithm, (header, crc.base64)]
    }

    /// The fields a completion carries: the whole object's value.
    public static func completionFields(_ whole: CRC32C) -> [(String, String)] {
        [(header, whole.base64), ("x-amz-checksum-type", "FULL_OBJECT")]
    }

    /// How an answer judged what was sent.
    public enum Verdict: Sendable, Equatable {
        /// The answer names no value (a server that does not keep checksums).
        case none
        case verified
        /// It names another value than the one sent.
        case mismatch(said: String)
    }

    /// A `PUT`'s answer: the value in its `x-amz-checksum-crc32c`, compared with `sent`.
    public static func verdict(of response: UploadResponse, sent: CRC32C) -> Verdict {
        guard (200..<300).contains(response.status), let said = response.header(header), !said.isEmpty else { return .none }
        return judged(said, sent)
    }

    /// A composite value (`…-N`, the CRC of the parts' CRCs) is not the bytes' own: it says nothing here.
    private static func judged(_ said: String, _ sent: CRC32C) -> Verdict {
        if said.contains("-") { return .none }
        return CRC32C(base64: said) == sent ? .verified : .mismatch(said: said)
    }

    /// A completion's answer: the `<ChecksumCRC32C>` of its result, compared with `whole`.
    public static func verdict(ofCompletion response: UploadResponse, whole: CRC32C) -> Verdict {
        guard let said = S3MultipartMachine.element("ChecksumCRC32C", in: response.body) ?? response.header(header) else { return .none }
        return judged(said, whole)
    }

    /// Whether S3 refused the bytes for their checksum: `BadDigest` (the value did not match),
    /// `XAmzContentChecksumMismatch`, or an `InvalidRequest` about the checksum.
    public static func refusedForChecksum(_ response: UploadResponse) -> Bool {
        guard response.status == 400 else { return false }
        guard let code = S3MultipartMachine.element("Code", in: response.body) else { return false }
        if code == "BadDigest" || code == "XAmzContentChecksumMismatch" { return true }
        let message = S3MultipartMachine.element("Message", in: response.body) ?? ""
        return code == "InvalidRequest" && message.lowercased().contains("checksum")
    }

    /// An answer that is verified gets it said (`UploadResponse.verified`).
    public static func marked(_ result: AttemptResult) -> AttemptResult {
        guard var response = result.response else { return result }
        response.verified = name
        var marked = result
        marked.response = response
        return marked
    }

    /// The failure when S3 names another value than the one sent.
    public static func mismatch(_ what: String, said: String, sent: CRC32C) -> UploadFailure {
        UploadFailure(.integrityMismatch, "integrity mismatch: S3 kept \(what) with CRC-32C \(said), not \(sent.base64) as sent")
    }
}
