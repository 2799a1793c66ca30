import HTTPTypes
import UploadCore

/// What a request says and asks about integrity digests (RFC 9530), and the check of what
/// arrived against it. `Content-Digest` covers this request's content; `Repr-Digest` the whole
/// upload (one request's content for a plain POST, every byte of a resumable upload, as the
/// resumable-upload draft says). A mismatch refuses the request and nothing of it is kept.
/// `Want-Repr-Digest` asks for the digest of what was received in the answer, so the client
/// can compare it with what it sent.
struct DigestCheck: Sendable, Equatable {
    static let contentField = HTTPField.Name(DigestFields.content)!
    static let representationField = HTTPField.Name(DigestFields.representation)!
    static let wantRepresentationField = HTTPField.Name(DigestFields.wantRepresentation)!

    /// `Content-Digest` as claimed, for the algorithms known here.
    var content: [DigestFields.Algorithm: [UInt8]] = [:]
    /// `Repr-Digest` as claimed.
    var representation: [DigestFields.Algorithm: [UInt8]] = [:]
    /// The algorithm the answer's `Repr-Digest` is to use, if one was asked for.
    var wanted: DigestFields.Algorithm?

    init(content: [DigestFields.Algorithm: [UInt8]] = [:], representation: [DigestFields.Algorithm: [UInt8]] = [:], wanted: DigestFields.Algorithm? = nil) {
        self.content = content
        self.representation = representation
        self.wanted = wanted
    }

    /// Read from a request's fields; a field that is not a valid dictionary is refused (400).
    init(_ fields: HTTPFields) throws(Refusal) {
        do {
            if let value = fields[values: Self.contentField].joinedIfAny {
                content = try DigestFields.digests(value, field: DigestFields.content)
            }
            if let value = fields[values: Self.representationField].joinedIfAny {
                representation = try DigestFields.digests(value, field: DigestFields.representation)
            }
            if let value = fields[values: Self.wantRepresentationField].joinedIfAny {
                wanted = try DigestFields.wanted(value, field: DigestFields.wantRepresentation).first
            }
        } catch {
            throw Refusal(.badRequest, error.description)
        }
    }

    /// What to compute over this request's content.
    var contentAlgorithms: Set<DigestFields.Algorithm> { Set(content.keys) }

    /// What to compute over the whole upload: what was claimed for it and what was asked for.
    var representationAlgorithms: Set<DigestFields.Algorithm> {
        Set(representation.keys).union(wanted.map { [$0] } ?? [])
    }

    /// The refusal when this request's content is not what `Content-Digest` says.
    func contentRefusal(_ computed: [DigestFields.Algorithm: [UInt8]]) -> Refusal? {
        Self.refusal(DigestFields.content, DigestFields.mismatches(claimed: content, computed: computed), what: "this request's content")
    }

    /// The refusal when the whole upload is not what `Repr-Digest` says.
    func representationRefusal(_ computed: [DigestFields.Algorithm: [UInt8]]) -> Refusal? {
        Self.refusal(DigestFields.representation, DigestFields.mismatches(claimed: representation, computed: computed), what: "the upload received")
    }

    private static func refusal(_ field: String, _ mismatched: [DigestFields.Algorithm], what: String) -> Refusal? {
        guard !mismatched.isEmpty else { return nil }
        let names = mismatched.map(\.rawValue).joined(separator: ", ")
        return Refusal(.badRequest, "integrity mismatch: \(field) (\(names)) does not match \(what); nothing of it was kept")
    }

    /// The answer's fields: `Repr-Digest` of what was received, in the algorithm asked for,
    /// or confirming the ones claimed (they matched, or the request was refused).
    func answerFields(_ computed: [DigestFields.Algorithm: [UInt8]]) -> [String: String] {
        let given = computed.filter { representation[$0.key] != nil || $0.key == wanted }
        return given.isEmpty ? [:] : [DigestFields.representation: DigestFields.value(given)]
    }
}

extension Array where Element == String {
    /// Repeated fields as one list value (RFC 9110 section 5.3), or nil when absent.
    fileprivate var joinedIfAny: String? { isEmpty ? nil : joined(separator: ", ") }
}
