import Testing
import UploadCore
@testable import Receiver
import UploadProtocols

/// The resumable protocol's refusals against an upload's state, input by input: the gate and
/// the endpoint both decide with these.
@Suite struct ResumableRulesTests {
    static func append(offset: Int64, contentLength: Int64? = 10, version: Int? = 8) -> UploadAdmission.Append {
        UploadAdmission.Append(offset: offset, complete: false, length: nil, contentLength: contentLength, version: version)
    }

    @Test func anAppendAtTheUploadsOffsetMayGoOn() {
        #expect(ResumableRules.appendRefusal(Self.append(offset: 500), complete: false, offset: 500, fields: [:]) == nil)
    }

    @Test func anAppendElsewhereIsAConflictThatSaysTheOffset() throws {
        let fields = ResumableRules.fields(echoing: 8)
        let refusal = try #require(ResumableRules.appendRefusal(Self.append(offset: 400), complete: false, offset: 500, fields: fields))
        #expect(refusal.status == .conflict)
        #expect(refusal.problem == .mismatchingOffset)
        #expect(refusal.members == ["expected-offset": 500, "provided-offset": 400])
        #expect(refusal.fields == [ResumableFields.interopVersion: "8", ResumableFields.offset: "500", ResumableFields.complete: "?0"])
    }

    @Test func nothingMayBeAppendedToACompleteUpload() throws {
        let empty = try #require(ResumableRules.appendRefusal(Self.append(offset: 500, contentLength: 0), complete: true, offset: 500, fields: [:]))
        #expect(empty.status == .badRequest && empty.problem == .completedUpload)
        let more = try #require(ResumableRules.appendRefusal(Self.append(offset: 500), complete: true, offset: 500, fields: [:]))
        #expect(more.status == .badRequest && more.problem == .inconsistentLength)
    }

    @Test func anUnknownUploadIsNotFoundWithTheVersionEchoed() {
        let refusal = ResumableRules.noSuchUpload(ResumableRules.fields(echoing: 6))
        #expect(refusal.status == .notFound)
        #expect(refusal.fields == [ResumableFields.interopVersion: "6"])
        #expect(ResumableRules.fields(echoing: nil).isEmpty)
    }
}
