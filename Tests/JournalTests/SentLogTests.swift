import Foundation
import Glibc
import Testing
@testable import UploadJournal
import UploadTesting

/// What foreground sends remember goes to the journal's log first and into the journal when it
/// is opened: nothing lost, nothing twice, odd names kept whole, a half-written line skipped.
@Suite struct SentLogTests {
    let root = TestFiles.makeTemporaryDirectory("sentlog")

    static let at = Date(timeIntervalSince1970: 1_790_000_000.25)

    static func pending(_ path: String, name: String = "a.jpg") -> PendingSent {
        PendingSent(
            endpoint: "http://127.0.0.1:9/photo", path: path, size: 123, mtimeNs: 1_700_000_000_123_456_789,
            ctimeNs: 1_700_000_001_000_000_001, stripped: true, name: name, sentAt: at)
    }

    @Test func recordsComeBackAsTheyWent() throws {
        let log = SentLog(journal: root + "/journal.sqlite")
        let odd = "/photos/tab\there/line\nbreak/100%25/cr\r.jpg"
        let sent = SentContent(endpoint: "http://127.0.0.1:9/photo", sha256: String(repeating: "ab", count: 32), size: 9, name: "n%09\tx.jpg", sentAt: Self.at)
        #expect(try log.append(sent: [sent], pending: [Self.pending(odd, name: "é\t.jpg")]) == false)
        #expect(try log.append(sent: [], pending: [Self.pending("/b.jpg")]) == false)
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: log.path)))
        #expect(data.filter { $0 == UInt8(ascii: "\n") }.count == 3, "one line a record")
        var st = stat()
        #expect(stat(log.path, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let records = SentLog.records(in: data)
        #expect(records.sent == [sent])
        #expect(records.pending == [Self.pending(odd, name: "é\t.jpg"), Self.pending("/b.jpg")])
    }

    /// Also a time that is not one (NaN, past 9999) or a negative size: read from disk, checked.
    @Test func aLineNotFinishedOrNotReadIsSkipped() {
        let good = Array(SentLog.line(Self.pending("/a.jpg")).utf8)
        let torn = Array(SentLog.line(Self.pending("/b.jpg")).utf8.dropLast(5))
        let nan = Array(SentLog.line(Self.pending("/n.jpg")).replacingOccurrences(of: "1790000000.25", with: "nan").utf8)
        let future = Array(SentLog.line(Self.pending("/f.jpg")).replacingOccurrences(of: "1790000000.25", with: "1e300").utf8)
        let negative = Array(SentLog.line(Self.pending("/m.jpg")).replacingOccurrences(of: "\t123\t", with: "\t-5\t").utf8)
        let records = SentLog.records(in: good + Array("p\tonly\tthree\n".utf8) + Array("x\t1\n".utf8) + nan + future + negative + good + torn)
        #expect(records.pending == [Self.pending("/a.jpg"), Self.pending("/a.jpg")])
        #expect(records.sent.isEmpty)
    }

    @Test func theJournalTakesTheLogInWhenOpenedAndEmptiesIt() throws {
        let path = root + "/journal.sqlite"
        let log = SentLog(journal: path)
        try log.append(sent: [], pending: [Self.pending("/a.jpg"), Self.pending("/b.jpg")])
        let journal = try Journal(path: path)
        #expect(try journal.pendingSent(to: "http://127.0.0.1:9/photo").map(\.path).sorted() == ["/a.jpg", "/b.jpg"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: log.path)).isEmpty)
        // While it is open, what is appended is taken in when asked for.
        try log.append(sent: [], pending: [Self.pending("/c.jpg")])
        try journal.drainSentLog()
        #expect(try journal.pendingSent(to: "http://127.0.0.1:9/photo").map(\.path).sorted() == ["/a.jpg", "/b.jpg", "/c.jpg"])
        try journal.drainSentLog()  // nothing left: nothing changes
        #expect(try journal.pendingSent(to: "http://127.0.0.1:9/photo").count == 3)
    }

    @Test func aLogPastItsLimitSaysSo() throws {
        let log = SentLog(journal: root + "/journal.sqlite")
        let one = Self.pending("/photos/0.jpg")
        let many = (0..<4_000).map {
            var copy = one
            copy.path = "/photos/\($0).jpg"
            return copy
        }
        #expect(try log.append(sent: [], pending: many), "\(many.count) records are past \(SentLog.drainAbove) bytes")
    }

    @Test func aLogThatIsNotAFileIsAnError() throws {
        let path = root + "/journal.sqlite"
        #expect(symlink(root + "/elsewhere", SentLog(journal: path).path) == 0)
        #expect(throws: SentLogError.self) { try SentLog(journal: path).append(sent: [], pending: [Self.pending("/a.jpg")]) }
        #expect(!FileManager.default.fileExists(atPath: root + "/elsewhere"), "a link is never followed")
    }
}
