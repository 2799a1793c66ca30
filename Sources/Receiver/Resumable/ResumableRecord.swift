import Foundation
import UploadCore

/// What the receiver keeps of one resumable upload besides its bytes: the creation request's
/// metadata (the multipart body is processed with it once complete) and, once complete, the
/// final answer, so a client that lost it can learn how the upload ended.
struct ResumableRecord: Codable, Equatable, Sendable {
    var token: String
    var createdAt: Date
    var expiresAt: Date
    /// The creation request's `Content-Type` (multipart/form-data with its boundary).
    var boundary: String
    /// The representation's length once a request has said it.
    var length: Int64?
    var answer: StoredAnswer?
    /// Where in the stream a parser was last inside the file part with nothing held back: a
    /// request that completes the upload skips the bytes before it instead of reading them again.
    var checkpoint: Int64?
    /// Who created it, as `ResumableQuota` names clients.
    var client: String?
    /// `Repr-Digest` as a request claimed it for the whole upload (algorithm → base64), checked
    /// once the upload is complete.
    var representationDigest: [String: String]?
    /// The algorithm of `Want-Repr-Digest`: the final answer carries the upload's digest in it.
    var wantedDigest: String?

    /// The digest claims and wants kept with the upload.
    var digests: DigestCheck {
        var claims: [DigestFields.Algorithm: [UInt8]] = [:]
        for (name, value) in representationDigest ?? [:] {
            if let algorithm = DigestFields.Algorithm(rawValue: name), let bytes = Data(base64Encoded: value) { claims[algorithm] = Array(bytes) }
        }
        return DigestCheck(representation: claims, wanted: wantedDigest.flatMap(DigestFields.Algorithm.init(rawValue:)))
    }

    var complete: Bool { answer != nil }

    /// Whether a record read back from disk can be used: every number in it is one this
    /// receiver could have written (a damaged or planted file is removed, never trusted).
    var isPlausible: Bool {
        guard boundary.utf8.count <= 70, !boundary.isEmpty else { return false }
        if let length, !(0...BoundedNumber.maxBytes).contains(length) { return false }
        if let checkpoint, !(0...BoundedNumber.maxBytes).contains(checkpoint) { return false }
        if let answer, !(100...599).contains(answer.status) { return false }
        return createdAt.timeIntervalSince1970.isFinite && expiresAt.timeIntervalSince1970.isFinite
    }
}

/// The endpoint's answer to a completed upload.
struct StoredAnswer: Codable, Equatable, Sendable {
    var status: Int
    var body: String
    /// Fields the answer carries besides its own (`Repr-Digest`), kept for a client that asks again.
    var fields: [String: String]?
}
