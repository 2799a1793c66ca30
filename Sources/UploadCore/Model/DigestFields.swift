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

    public enum Algorithm: String, Sendable, Hashable, CaseIterable, Comparable {
        case sha256 = "sha-256"
        case sha512 = "sha-512"

        public static func < (a: Algorithm, b: Algorithm) -> Bool { a.rawValue < b.rawValue }
    }

    /// A field that cannot be read as RFC 9651 requires, said with where it went wrong.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public let field: String
        public let reason: String
        public var description: String { "\(field) is not a valid structured-field dictionary (RFC 9651): \(reason)" }
    }

    /// The digests of a `Content-Digest` or `Repr-Digest` value, for the algorithms known here.
    /// Members of other algorithms (`md5`, `unixsum`, …) are read past; a known algorithm whose
    /// value is not a byte sequence of its length is malformed.
    public static func digests(_ value: String, field: String = representation) throws(Malformed) -> [Algorithm: [UInt8]] {
        var found: [Algorithm: [UInt8]] = [:]
        for (key, item) in try dictionary(value, field: field) {
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
        for (key, item) in try dictionary(value, field: field) {
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

    public enum Verdict: Sendable, Equatable {
        /// The answer says nothing usable about digests (none, unreadable, or not a success).
        case none
        case verified(Algorithm)
        case mismatch(Algorithm)
    }

    /// What an answer's `Repr-Digest` (`field`) says of an upload whose digests as sent are
    /// `sent`: a success whose digest of an algorithm both know is equal verifies it, one that
    /// differs is a mismatch. An unreadable field makes no claim either way.
    public static func verdict(_ field: String?, sent: [Algorithm: [UInt8]], success: Bool) -> Verdict {
        guard success, let field, let claimed = try? digests(field, field: representation) else { return .none }
        if let wrong = mismatches(claimed: claimed, computed: sent).first { return .mismatch(wrong) }
        if let algorithm = claimed.keys.sorted().first(where: { sent[$0] != nil }) { return .verified(algorithm) }
        return .none
    }

    // MARK: RFC 9651 dictionaries

    enum Item: Equatable {
        case integer(Int)
        case decimal
        case string
        case token
        case bytes([UInt8])
        case boolean(Bool)
        case innerList
    }

    /// RFC 9651 section 4.2.2: members `key[=value][;parameters]`, separated by commas with
    /// optional whitespace; a key given twice keeps its last value.
    static func dictionary(_ text: String, field: String) throws(Malformed) -> [(String, Item)] {
        var parser = Parser(bytes: Array(text.utf8), field: field)
        return try parser.dictionary()
    }

    struct Parser {
        let bytes: [UInt8]
        let field: String
        var at = 0

        init(bytes: [UInt8], field: String) {
            self.bytes = bytes
            self.field = field
        }

        func fail(_ reason: String) -> Malformed { Malformed(field: field, reason: reason + " at byte \(at)") }

        var current: UInt8? { at < bytes.count ? bytes[at] : nil }

        mutating func skip(_ set: (UInt8) -> Bool) { while let byte = current, set(byte) { at += 1 } }

        mutating func dictionary() throws(Malformed) -> [(String, Item)] {
            var members: [(String, Item)] = []
            skip { $0 == 0x20 }
            while current != nil {
                let key = try self.key()
                let item: Item
                if current == UInt8(ascii: "=") {
                    at += 1
                    item = current == UInt8(ascii: "(") ? try innerList() : try bareItem()
                } else {
                    item = .boolean(true)
                }
                try parameters()
                members.removeAll { $0.0 == key }
                members.append((key, item))
                skip { $0 == 0x20 || $0 == 0x09 }
                guard current != nil else { break }
                guard current == UInt8(ascii: ",") else { throw fail("expected a comma") }
                at += 1
                skip { $0 == 0x20 || $0 == 0x09 }
                guard current != nil else { throw fail("a trailing comma") }
            }
            return members
        }

        mutating func key() throws(Malformed) -> String {
            guard let first = current, (first >= 0x61 && first <= 0x7A) || first == UInt8(ascii: "*") else { throw fail("expected a key") }
            let start = at
            skip { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || "_-.*".utf8.contains($0) }
            return String(decoding: bytes[start..<at], as: UTF8.self)
        }

        mutating func parameters() throws(Malformed) {
            while current == UInt8(ascii: ";") {
                at += 1
                skip { $0 == 0x20 }
                _ = try key()
                if current == UInt8(ascii: "=") {
                    at += 1
                    _ = try bareItem()
                }
            }
        }

        mutating func innerList() throws(Malformed) -> Item {
            at += 1
            while true {
                skip { $0 == 0x20 }
                guard let byte = current else { throw fail("an inner list without its end") }
                if byte == UInt8(ascii: ")") {
                    at += 1
                    try parameters()
                    return .innerList
                }
                _ = try bareItem()
                try parameters()
                guard current == 0x20 || current == UInt8(ascii: ")") else { throw fail("expected a space or ) in an inner list") }
            }
        }

        mutating func bareItem() throws(Malformed) -> Item {
            guard let byte = current else { throw fail("expected a value") }
            switch byte {
            case UInt8(ascii: "-"), 0x30...0x39:
                return try number()
            case UInt8(ascii: "\""):
                at += 1
                while let c = current {
                    at += 1
                    if c == UInt8(ascii: "\\") {
                        guard let escaped = current, escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else { throw fail("a bad escape in a string") }
                        at += 1
                    } else if c == UInt8(ascii: "\"") {
                        return .string
                    } else if c < 0x20 || c > 0x7E {
                        throw fail("a control or non-ASCII byte in a string")
                    }
                }
                throw fail("a string without its closing quote")
            case UInt8(ascii: ":"):
                at += 1
                let start = at
                skip { $0 != UInt8(ascii: ":") }
                guard current == UInt8(ascii: ":") else { throw fail("a byte sequence without its closing colon") }
                let text = String(decoding: bytes[start..<at], as: UTF8.self)
                at += 1
                guard text.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || "+/=".utf8.contains($0) }),
                      let data = Data(base64Encoded: text) else { throw fail("a byte sequence that is not base64") }
                return .bytes(Array(data))
            case UInt8(ascii: "?"):
                at += 1
                guard let value = current, value == UInt8(ascii: "0") || value == UInt8(ascii: "1") else { throw fail("a boolean that is not ?0 or ?1") }
                at += 1
                return .boolean(value == UInt8(ascii: "1"))
            case UInt8(ascii: "*"), 0x41...0x5A, 0x61...0x7A:
                skip { ($0 >= 0x21 && $0 <= 0x7E) && !"\"(),;<=>?@[\\]{}".utf8.contains($0) }
                return .token
            default:
                throw fail("an unexpected byte")
            }
        }

        mutating func number() throws(Malformed) -> Item {
            var negative = false
            if current == UInt8(ascii: "-") { negative = true; at += 1 }
            let start = at
            skip { $0 >= 0x30 && $0 <= 0x39 }
            let integerDigits = at - start
            guard integerDigits > 0 else { throw fail("a number without digits") }
            if current == UInt8(ascii: ".") {
                guard integerDigits <= 12 else { throw fail("a decimal too long") }
                at += 1
                let fraction = at
                skip { $0 >= 0x30 && $0 <= 0x39 }
                guard (1...3).contains(at - fraction) else { throw fail("a decimal's fraction must have 1 to 3 digits") }
                return .decimal
            }
            guard integerDigits <= 15, let value = Int(String(decoding: bytes[start..<at], as: UTF8.self)) else { throw fail("an integer too long") }
            return .integer(negative ? -value : value)
        }
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
