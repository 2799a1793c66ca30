import Crypto
import Foundation

/// Integrity digests as RFC 9530 (Digest Fields) carries them: `Content-Digest` (the content of
/// one message), `Repr-Digest` (the whole representation: for an upload, every byte of it, over
/// however many requests), and `Want-Content-Digest` / `Want-Repr-Digest` (which algorithms a
/// peer would like to be given). The values are RFC 9651 structured-field dictionaries:
/// `sha-256=:base64:, sha-512=:base64:`; the wants are dictionaries of preferences 0..10.
/// Only the two algorithms RFC 9530 calls secure are used: SHA-256 and SHA-512; others are
/// read past, never trusted.
public enum DigestFields {
    public static let content = "Content-Digest"
    public static let representation = "Repr-Digest"
    public static let wantContent = "Want-Content-Digest"
    public static let wantRepresentation = "Want-Repr-Digest"

    /// The digest algorithms spoken (RFC 9530), by their registered keys.
    public enum Algorithm: String, Sendable, Hashable, CaseIterable, Comparable {
        case sha256 = "sha-256"
        case sha512 = "sha-512"

        public static func < (a: Algorithm, b: Algorithm) -> Bool { a.rawValue < b.rawValue }
    }

    /// A field that cannot be read as RFC 9651 requires.
    public typealias Malformed = StructuredFields.Malformed

    /// The digests of a `Content-Digest` or `Repr-Digest` value, for the algorithms known here.
    /// Members of other algorithms (`md5`, `unixsum`, …) are read past; a known algorithm whose
    /// value is not a byte sequence of its length is malformed.
    public static func digests(_ value: String, field: String = representation) throws(Malformed) -> [Algorithm: [UInt8]] {
        var found: [Algorithm: [UInt8]] = [:]
        for (key, item) in try StructuredFields.dictionary(value, field: field) {
            guard let algorithm = Algorithm(rawValue: key) else { continue }
            guard case .bytes(let bytes) = item, bytes.count == Digester.length(algorithm) else {
                throw Malformed(field: field, reason: "\(key) must be a byte sequence of \(Digester.length(algorithm)) bytes (:base64:)")
            }
            found[algorithm] = bytes
        }
        return found
    }

    /// The algorithms a `Want-…-Digest` value asks for, most preferred first (0 means "not this
    /// one"; ties in the order given).
    public static func wanted(_ value: String, field: String = wantRepresentation) throws(Malformed) -> [Algorithm] {
        var ranked: [(Algorithm, Int)] = []
        for (key, item) in try StructuredFields.dictionary(value, field: field) {
            guard case .integer(let preference) = item, (0...10).contains(preference) else {
                throw Malformed(field: field, reason: "\(key)'s preference must be an integer from 0 to 10")
            }
            if let algorithm = Algorithm(rawValue: key), preference > 0 { ranked.append((algorithm, preference)) }
        }
        return ranked.enumerated().sorted { ($0.element.1, -$0.offset) > ($1.element.1, -$1.offset) }.map(\.element.0)
    }

    /// A field value for `digests`, in a fixed order (`sha-256` first).
    public static func value(_ digests: [Algorithm: [UInt8]]) -> String {
        digests.keys.sorted().map { "\($0.rawValue)=:\(Data(digests[$0]!).base64EncodedString()):" }.joined(separator: ", ")
    }

    /// A want value preferring SHA-256.
    public static let wantSHA256 = "sha-256=10"

    /// Which of `claimed` disagree with `computed` (algorithms computed on one side only are not
    /// compared).
    public static func mismatches(claimed: [Algorithm: [UInt8]], computed: [Algorithm: [UInt8]]) -> [Algorithm] {
        claimed.keys.sorted().filter { algorithm in computed[algorithm].map { $0 != claimed[algorithm] } ?? false }
    }

    /// What a server's answer says of the bytes it received, against what was sent.
    public enum Verdict: Sendable, Equatable {
        /// The answer says nothing usable about digests (none, unreadable, or not a success).
        case none
        case verified(Algorithm)
        case mismatch(Algorithm)
    }

    /// What an answer's `Repr-Digest` (`field`) says of an upload whose digests as sent are
    /// `sent`: a success whose digest of an algorithm both know is equal verifies it, one that
    /// differs is a mismatch. An unreadable field makes no claim either way.
    /// Whether an answer shows its server looks at digests: it asks to be given them
    /// (`Want-Content-Digest` or `Want-Repr-Digest` preferring an algorithm known here).
    public static func asksForDigests(_ response: UploadResponse) -> Bool {
        [wantContent, wantRepresentation].contains { field in
            response.header(field).flatMap { try? wanted($0, field: field) }?.isEmpty == false
        }
    }

    /// What the answer's `Repr-Digest` (`field`) says of the digests computed of what was `sent`; nothing for an answer that is not a success.
    public static func verdict(_ field: String?, sent: [Algorithm: [UInt8]], success: Bool) -> Verdict {
        guard success, let field, let claimed = try? digests(field, field: representation) else { return .none }
        if let wrong = mismatches(claimed: claimed, computed: sent).first { return .mismatch(wrong) }
        if let algorithm = claimed.keys.sorted().first(where: { sent[$0] != nil }) { return .verified(algorithm) }
        return .none
    }
}

/// SHA-256 or SHA-512 over bytes given in pieces.
public struct Digester: Sendable {
    private var sha256: SHA256?
    private var sha512: SHA512?

    public init(_ algorithms: Set<DigestFields.Algorithm>) {
        sha256 = algorithms.contains(.sha256) ? SHA256() : nil
        sha512 = algorithms.contains(.sha512) ? SHA512() : nil
    }

    public var isEmpty: Bool { sha256 == nil && sha512 == nil }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        sha256?.update(bufferPointer: bytes)
        sha512?.update(bufferPointer: bytes)
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    public func finalize() -> [DigestFields.Algorithm: [UInt8]] {
        var out: [DigestFields.Algorithm: [UInt8]] = [:]
        if let sha256 { out[.sha256] = Array(sha256.finalize()) }
        if let sha512 { out[.sha512] = Array(sha512.finalize()) }
        return out
    }

    /// A digest as lowercase hex (the form "already sent" keeps and `--json` shows).
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func length(_ algorithm: DigestFields.Algorithm) -> Int {
        switch algorithm {
        case .sha256: 32
        case .sha512: 64
        }
    }
}
