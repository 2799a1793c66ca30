import Foundation
import GRDB
import Testing
@testable import UploadJournal
import UploadCore

/// The journal writes dates itself, as GRDB's formatter writes them: the same text to the
/// millisecond, whatever the date (GRDB's formatter outside the years written by arithmetic).
@Suite struct JournalDatesTests {
    static func grdb(_ date: Date) -> String? { String.fromDatabaseValue(date.databaseValue) }

    @Test func theTextIsGRDBsForDatesThatAreHardToGetRight() {
        let dates: [Double] = [
            0, 0.0005, 0.000_999_9, 0.001, 59.999_9, 86_399.999, 86_400,
            951_782_400, 951_868_799.999, 951_868_800,  // 2000-02-29 and the day after
            4_107_542_400, 4_107_628_800,  // 2100-02-28, -03-01 (no 29th)
            1_795_000_000.123_456, 1_795_000_000.999_5, 1_795_000_000.000_4,
            253_402_300_799.999, 253_402_300_800,  // the last millisecond of 9999, then past it
            -0.001, -86_400.5, -1_000_000_000,  // before 1970: GRDB's formatter
        ]
        for seconds in dates {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(String.fromDatabaseValue(JournalDates.text(date)) == Self.grdb(date), "\(seconds)")
        }
        #expect(JournalDates.storageText(Date(timeIntervalSince1970: -0.001)) == nil)
        #expect(JournalDates.storageText(Date(timeIntervalSince1970: 253_402_300_800)) == nil)
        #expect(JournalDates.storageText(Date(timeIntervalSince1970: 951_782_400.25)) == "2000-02-29 00:00:00.250")
    }

    @Test func theTextIsGRDBsForManyDates() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            // Whole milliseconds and halves, their neighbours in the last bits, and anything between.
            let millis = Double(Int64.random(in: 0..<4_102_444_800_000, using: &generator))
            let seconds: Double
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: seconds = millis / 1000
            case 1: seconds = (millis / 1000).nextDown
            case 2: seconds = (millis + 0.5) / 1000  // half a millisecond: which way
            case 3: seconds = ((millis + 0.5) / 1000).nextDown
            default: seconds = millis / 1000 + Double.random(in: 0..<0.001, using: &generator)
            }
            let date = Date(timeIntervalSince1970: seconds)
            let ours = JournalDates.storageText(date)
            #expect(ours == Self.grdb(date), "\(seconds)")
            if ours != Self.grdb(date) { return }
        }
    }

    @Test func aStoredDateIsWhatReadingTheTextGivesBack() {
        let date = Date(timeIntervalSince1970: 1_795_000_000.123_456)
        #expect(JournalDates.stored(date) == Date.fromDatabaseValue(date.databaseValue))
        #expect(JournalDates.stored(date).timeIntervalSince1970 != date.timeIntervalSince1970)
    }
}

/// The event log's column for an upload's end, written directly, is what the record's own
/// encoding writes (GRDB's JSON encoder for that column).
struct EventColumnTests {
    @Test func anEndWithAnAnswerIsWrittenAsTheEncoderWritesIt() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE event (seq INTEGER PRIMARY KEY, uploadID INTEGER, kind TEXT, event TEXT, at TEXT)")
            for (id, status) in [(1, 200), (42, 201), (9_007_199_254_740_991, 503)] {
                let event = UploadEvent.finished(UploadID(id), .answered(status: status))
                var row = EventRow(seq: nil, uploadID: Int64(id), kind: "finished", event: event, at: Date(timeIntervalSince1970: 0))
                try row.insert(db)
                let viaEncoder = try String.fetchOne(db, sql: "SELECT event FROM event WHERE seq = ?", arguments: [row.seq])
                #expect(EventRow.directJSON(event) == viaEncoder)
            }
        }
        // Anything else goes through the encoder.
        #expect(EventRow.directJSON(.finished(UploadID(1), .failed(UploadFailure(.cancelled, "stopped")))) == nil)
        #expect(EventRow.directJSON(.started(UploadID(1), attempt: 1, url: "http://h/p", totalBytes: 3)) == nil)
    }
}
