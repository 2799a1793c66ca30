@testable import UploadCore
import Foundation
import Testing
import UploadCore
import UploadProtocols

/// RFC 9530's fields read as RFC 9651 dictionaries.
@Suite struct DigestFieldsTests {
    // RFC 9530 appendix B's digest of `{"hello": "world"}`.
    let hello = Array(Data(base64Encoded: "X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=")!)

    @Test func knownAlgorithmsAreTakenAndOthersReadPast() throws {
        let read = try DigestFields.digests("unixsum=30637, sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:;p=1, md5=:AAAA:, x=(a \"b\" 1.5 ?1)")
        #expect(read == [.sha256: hello])
        #expect(try DigestFields.digests("") == [:])
        // A key given twice keeps its last value.
        let twice = try DigestFields.digests(
            "sha-256=:\(Data(repeating: 1, count: 32).base64EncodedString()):,sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:")
        #expect(twice[.sha256] == hello)
        #expect(
            DigestFields.value([.sha512: Array(repeating: 0, count: 64), .sha256: hello])
                == "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, sha-512=:\(Data(count: 64).base64EncodedString()):")
    }

    @Test func malformedFieldsAreRefusedSayingWhere() {
        for bad in [
            "sha-256=abc", "sha-256=:AAAA:", "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=", "Sha-256=:AA==:",
            "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:,", "a=1 b=2", "a=\"unterminated", "a=?2", "a=(1 2",
        ] {
            #expect(throws: DigestFields.Malformed.self, "\(bad)") { try DigestFields.digests(bad) }
        }
        #expect { try DigestFields.digests("sha-256=abc", field: "Content-Digest") } throws: {
            "\($0)" == "Content-Digest is not a valid structured-field dictionary (RFC 9651): sha-256 must be a byte sequence of 32 bytes (:base64:)"
        }
    }

    @Test func wantsAreRankedByPreferenceAndZeroMeansNo() throws {
        #expect(try DigestFields.wanted("sha-256=1, sha-512=3") == [.sha512, .sha256])
        #expect(try DigestFields.wanted("sha-512=0, sha-256=2, md5=10") == [.sha256])
        #expect(try DigestFields.wanted("sha-256=5, sha-512=5") == [.sha256, .sha512], "ties in the order given")
        #expect(throws: DigestFields.Malformed.self) { try DigestFields.wanted("sha-256=11") }
        #expect(throws: DigestFields.Malformed.self) { try DigestFields.wanted("sha-256=:AA==:") }
    }

    /// An answer shows its server looks at digests when it asks for one of ours (a preference
    /// above 0 for an algorithm known here); a zero, an unknown algorithm or a malformed field does not.
    @Test func anAnswerAskingForDigestsIsTold() {
        func answer(_ headers: [(String, String)]) -> UploadResponse {
            UploadResponse(status: 204, reason: "No Content", headers: headers, body: [], bodyBytesTotal: 0)
        }
        #expect(DigestFields.asksForDigests(answer([("Want-Content-Digest", "sha-256=10")])))
        #expect(DigestFields.asksForDigests(answer([("Want-Repr-Digest", "md5=3, sha-512=1")])))
        #expect(!DigestFields.asksForDigests(answer([])))
        #expect(!DigestFields.asksForDigests(answer([("Want-Content-Digest", "sha-256=0")])))
        #expect(!DigestFields.asksForDigests(answer([("Want-Content-Digest", "md5=10")])))
        #expect(!DigestFields.asksForDigests(answer([("Want-Content-Digest", "sha-256=:x:")])))
    }

    @Test func theDigesterIsSHA2() {
        var digester = Digester([.sha256, .sha512])
        digester.update(Array(#"{"hello": "world"}"#.utf8))
        let out = digester.finalize()
        #expect(out[.sha256] == hello)
        #expect(
            out[.sha512].map { Data($0).base64EncodedString() } == "WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==")
        #expect(Digester([]).isEmpty && DigestFields.mismatches(claimed: [.sha256: hello], computed: [:]).isEmpty)
    }
}

/// What an answer's `Repr-Digest` says of an upload.
@Suite struct DigestVerdictTests {
    let sent: [DigestFields.Algorithm: [UInt8]] = [.sha256: Array(repeating: 1, count: 32)]

    @Test func anEqualDigestVerifiesADifferentOneIsAMismatchAndSilenceIsNothing() {
        let same = DigestFields.value(sent)
        let other = DigestFields.value([.sha256: Array(repeating: 2, count: 32)])
        #expect(DigestFields.verdict(same, sent: sent, success: true) == .verified(.sha256))
        #expect(DigestFields.verdict(other, sent: sent, success: true) == .mismatch(.sha256))
        #expect(DigestFields.verdict(nil, sent: sent, success: true) == DigestFields.Verdict.none)
        #expect(DigestFields.verdict("sha-256=oops", sent: sent, success: true) == DigestFields.Verdict.none, "unreadable: no claim")
        #expect(
            DigestFields.verdict(DigestFields.value([.sha512: Array(repeating: 0, count: 64)]), sent: sent, success: true) == DigestFields.Verdict.none,
            "an algorithm not sent proves nothing")
        #expect(DigestFields.verdict(same, sent: sent, success: false) == DigestFields.Verdict.none, "a refusal verifies nothing")
    }
}

/// `Upload-Limit` read as the RFC 9651 dictionary it is.
@Suite struct UploadLimitParsingTests {
    @Test func knownKeysAreReadUnknownOnesPassedOver() {
        #expect(
            UploadLimit(parsing: "max-size=1073741824, max-age=86400, foo=\"bar\", baz")
                == UploadLimit(maxSize: 1_073_741_824, maxAge: 86_400))
        #expect(UploadLimit(parsing: "min-size=0") == UploadLimit(minSize: 0))
        #expect(UploadLimit(parsing: "max-append-size=5242880;unit=b,min-append-size=1") == UploadLimit(maxAppendSize: 5_242_880, minAppendSize: 1))
        #expect(UploadLimit(parsing: "expires=60") == UploadLimit(maxAge: 60), "interop version 5's name")
        #expect(UploadLimit(parsing: "max-size=1, max-size=2") == UploadLimit(maxSize: 2), "the last of a key given twice")
    }

    @Test func aKnownKeyOfTheWrongTypeOrABrokenDictionaryIgnoresTheField() {
        for bad in [
            "max-size", "max-size=?1", "max-size=1.5", "max-size=-1", "max-size=\"1\"", "max-size=1,", "max-size=1,,min-size=0",
            "MAX-SIZE=1", "max-size=(1 2)", "max-size=1 min-size=2",
        ] {
            #expect(UploadLimit(parsing: bad) == nil, "\(bad)")
        }
        #expect(UploadLimit(parsing: nil) == nil)
    }
}

/// A dictionary field from outside costs work in proportion to its length: members are kept
/// through a table, never found by walking the ones before (17,000 keys once cost 0.5 s).
@Suite struct StructuredFieldsWorkTests {
    static func field(keys: Int, repeating: Bool = false) -> String {
        (0..<keys).map { repeating ? "sha-256=:\($0 % 2 == 0 ? "AAAA" : "BBBB"):" : "k\($0)=:AAAA:" }.joined(separator: ", ")
    }

    @Test func workGrowsWithTheMembersNotTheirSquare() throws {
        let small = try StructuredFields.dictionaryCountingWork(Self.field(keys: 1_700), field: "Content-Digest")
        let large = try StructuredFields.dictionaryCountingWork(Self.field(keys: 17_000), field: "Content-Digest")
        #expect(small.members.count == 1_700 && large.members.count == 17_000)
        #expect(small.work == 1_700, "one look per member")
        #expect(large.work == 17_000, "ten times the members, ten times the work")
    }

    @Test func aKeyGivenAgainKeepsItsLastValueInItsFirstPlace() throws {
        let parsed = try StructuredFields.dictionary("a=1, b=2, a=3", field: "Upload-Limit")
        #expect(parsed.map(\.0) == ["a", "b"])
        #expect(parsed.first?.1 == .integer(3))
        let repeated = try StructuredFields.dictionaryCountingWork(Self.field(keys: 17_001, repeating: true), field: "Content-Digest")
        #expect(repeated.members.count == 1 && repeated.members[0].1 == .bytes([0, 0, 0]))
        #expect(repeated.work == 17_001)
    }
}
