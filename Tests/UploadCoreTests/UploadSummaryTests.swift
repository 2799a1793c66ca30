import Foundation
import Testing
import UploadCore

@Suite struct UploadSummaryTests {
    @Test func aCancelledUploadIsSaidApartFromAFailedOne() throws {
        #expect(UploadSummary(succeeded: 2, failed: 1, cancelled: 1).finishedText(capitalized: true) == "All 4 uploads finished: 2 ok, 1 failed, 1 cancelled")
        #expect(UploadSummary(succeeded: 1, failed: 0).finishedText(capitalized: false) == "1 upload finished: 1 ok, 0 failed")
        // An agent of an earlier version says no cancelled count.
        let old = try JSONDecoder().decode(UploadSummary.self, from: Data(#"{"succeeded":3,"failed":2}"#.utf8))
        #expect(old == UploadSummary(succeeded: 3, failed: 2, cancelled: 0))
        let now = try JSONDecoder().decode(UploadSummary.self, from: JSONEncoder().encode(UploadSummary(succeeded: 1, failed: 2, cancelled: 3)))
        #expect(now.cancelled == 3 && now.adding(old) == UploadSummary(succeeded: 4, failed: 4, cancelled: 3))
    }
}
