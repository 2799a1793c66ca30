import Foundation
import Testing
import UploadAgent
import UploadClient
import UploadJournal
import UploadTesting

/// "Already sent" by content, in process: what went to an endpoint is found again under any
/// name, and only for that endpoint.
@Suite struct SentLedgerTests {
    @Test func aCopyUnderAnotherNameIsFoundAndSaidBothWays() throws {
        let folder = TestFiles.makeTemporaryDirectory("ledger")
        let ledger = SentLedger(journal: try Journal(path: folder + "/journal.sqlite"))
        let sent = try TestFiles.writeImage(at: folder + "/a.jpg", size: 20_000)
        let copy = folder + "/holiday.jpg"
        try FileManager.default.copyItem(atPath: sent, toPath: copy)
        let other = try TestFiles.writeImage(at: folder + "/b.jpg", size: 20_001)
        #expect(ledger.alreadySent([sent, copy, other], to: "http://h/photo", stripLocation: false).isEmpty, "nothing sent yet")

        let content = try ContentIdentity.sha256(of: sent).hex
        try ledger.journal.rememberSent(
            SentContent(
                endpoint: "http://h/photo", sha256: content, size: 20_000, name: "a.jpg",
                sentAt: Date(timeIntervalSince1970: 1_800_000_000)))
        let skips = ledger.alreadySent([copy, other, folder + "/missing.jpg"], to: "http://h/photo", stripLocation: false)
        #expect(Array(skips.keys) == [copy], "the copy only; another file and an unreadable one are not skipped")
        let skip = try #require(skips[copy])
        #expect(skip.text.hasPrefix("\(copy): skipped, already sent to http://h/photo on ") && skip.text.hasSuffix(" as a.jpg (same content)"))
        #expect(skip.jsonLine.contains(#""event":"skipped""#) && skip.jsonLine.contains(#""sha256":"\#(content)""#))
        #expect(skip.jsonLine.contains(#""sentAt":"2027-01-15T08:00:00Z""#), "\(skip.jsonLine)")
        #expect(ledger.alreadySent([copy], to: "http://h/other", stripLocation: false).isEmpty, "another endpoint")
    }

    /// A path or earlier name with escapes or a bidi override is shown, not obeyed: in the
    /// line and in the JSON object alike.
    @Test func namesAreShownEscaped() throws {
        let folder = TestFiles.makeTemporaryDirectory("ledger-escape")
        let ledger = SentLedger(journal: try Journal(path: folder + "/journal.sqlite"))
        let path = folder + "/\u{202E}gpj.exe\u{1B}[31m.jpg"
        _ = try TestFiles.writeImage(at: path, size: 5_000)
        let content = try ContentIdentity.sha256(of: path).hex
        try ledger.journal.rememberSent(
            SentContent(
                endpoint: "http://h/photo", sha256: content, size: 5_000, name: "\u{202E}old\u{7}.jpg",
                sentAt: Date(timeIntervalSince1970: 1_800_000_000)))
        let skip = try #require(ledger.alreadySent([path], to: "http://h/photo", stripLocation: false)[path])
        for text in [skip.text, skip.jsonLine] {
            #expect(!text.unicodeScalars.contains { $0 == "\u{202E}" || $0 == "\u{1B}" || $0 == "\u{7}" }, "\(text.debugDescription)")
        }
        #expect(skip.text.contains("<U+202E>gpj.exe<U+001B>[31m.jpg") && skip.text.contains("as <U+202E>old<U+0007>.jpg"), "\(skip.text)")
    }
}
