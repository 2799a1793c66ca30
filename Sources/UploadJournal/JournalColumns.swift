import Foundation
import GRDB
import Synchronization
import UploadCore

/// The JSON columns' text. Each column remembers the last value it encoded: uploads added
/// together share their settings, form fields and headers, and were encoding them (a JSON
/// encoder each time) once per upload.
enum JSONColumns {
    private static let last = Mutex<[String: (value: any Sendable, text: DatabaseValue)]>([:])

    static func text<T: Equatable & Sendable>(_ value: T, column: String, encode: (T) throws -> String) rethrows -> DatabaseValue {
        if let hit = last.withLock({ $0[column] }), let previous = hit.value as? T, previous == value { return hit.text }
        let text = try encode(value).databaseValue
        last.withLock { $0[column] = (value, text) }
        return text
    }

    private static let lastRead = Mutex<[String: (text: String, value: any Sendable)]>([:])

    /// `text` decoded, or the value the same text of `column` gave last time.
    static func value<T: Sendable>(_ type: T.Type, from text: String, column: String, decode: (String) throws -> T) throws -> T {
        if let hit = lastRead.withLock({ $0[column] }), hit.text == text, let value = hit.value as? T { return value }
        let value = try decode(text)
        lastRead.withLock { $0[column] = (text, value) }
        return value
    }

    /// Upload ids as a JSON array (`[1,2,3]`), for `json_each`.
    static func list(_ ids: [UploadID]) -> String {
        "[" + ids.map { String($0.rawValue) }.joined(separator: ",") + "]"
    }

    /// `[["a", "b"], …]` as JSON.
    static func text(_ arrays: [[String]]) -> String {
        var out = "["
        for (index, inner) in arrays.enumerated() {
            out += index == 0 ? "[" : ",["
            for (position, string) in inner.enumerated() {
                if position > 0 { out += "," }
                JSONLine.appendString(string, to: &out)
            }
            out += "]"
        }
        return out + "]"
    }
}

/// Dates as the journal writes them (GRDB's millisecond text, `yyyy-MM-dd HH:mm:ss.SSS` in UTC)
/// and as it reads them back. One event writes the same instant several times (the row's
/// `updatedAt`, a start or finish time, the log entry's time), and GRDB's date formatter was a
/// twentieth of the agent's work: the text is written here by arithmetic (the same text, to the
/// millisecond, for 1970 to 9999; GRDB's formatter for any other date), and the last conversion
/// each way is remembered.
enum JournalDates {
    private static let lastText = Mutex<(date: Date, text: DatabaseValue)?>(nil)
    private static let lastStored = Mutex<(date: Date, stored: Date)?>(nil)

    static func text(_ date: Date) -> DatabaseValue {
        if let last = lastText.withLock({ $0 }), last.date == date { return last.text }
        let text = storageText(date).map { $0.databaseValue } ?? date.databaseValue
        lastText.withLock { $0 = (date, text) }
        return text
    }

    /// `date` as a read of the journal gives it back.
    static func stored(_ date: Date) -> Date {
        if let last = lastStored.withLock({ $0 }), last.date == date { return last.stored }
        let stored = Date.fromDatabaseValue(text(date)) ?? date
        lastStored.withLock { $0 = (date, stored) }
        return stored
    }

    private static let lastRead = Mutex<(text: String, date: Date?)?>(nil)

    /// A date column's text as GRDB reads it; the last text read is remembered (the uploads
    /// of one window were mostly added, and last changed, at the same instant).
    static func date(fromText text: String) -> Date? {
        if let last = lastRead.withLock({ $0 }), last.text == text { return last.date }
        let date = Date.fromDatabaseValue(text.databaseValue)
        lastRead.withLock { $0 = (text, date) }
        return date
    }

    /// GRDB's text for `date` without its formatter, nil outside 1970–9999. The formatter
    /// (ICU through Foundation) takes the milliseconds since 1970 as `timeIntervalSince1970 ×
    /// 1000` rounded to the nearest; the calendar is the Gregorian one.
    static func storageText(_ date: Date) -> String? {
        let millis = (date.timeIntervalSince1970 * 1000).rounded()
        guard millis >= 0, millis < 253_402_300_800_000 else { return nil }
        let whole = Int64(millis)
        let days = whole / 86_400_000
        let inDay = whole % 86_400_000
        // Days since 1970 to a civil date (Howard Hinnant's `civil_from_days`).
        let z = days + 719_468
        let era = z / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        let fields: [(value: Int64, digits: Int, then: UInt8?)] = [
            (year, 4, UInt8(ascii: "-")), (month, 2, UInt8(ascii: "-")), (day, 2, UInt8(ascii: " ")),
            (inDay / 3_600_000, 2, UInt8(ascii: ":")), (inDay / 60_000 % 60, 2, UInt8(ascii: ":")),
            (inDay / 1000 % 60, 2, UInt8(ascii: ".")), (inDay % 1000, 3, nil),
        ]
        return String(unsafeUninitializedCapacity: 23) { buffer in
            var at = 0
            for field in fields {
                var value = field.value
                for position in stride(from: field.digits - 1, through: 0, by: -1) {
                    buffer[at + position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                at += field.digits
                if let then = field.then {
                    buffer[at] = then
                    at += 1
                }
            }
            return at
        }
    }
}
