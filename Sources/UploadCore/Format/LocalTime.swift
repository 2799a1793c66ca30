import Foundation

/// Every date a person reads, in local time (or the zone given), the same on every machine
/// whatever its locale: with `gmtime_r` on the zone's offset, because a `DateFormatter` per
/// line was a seventh of the receiver's CPU for small files.
public enum LocalTime {
    /// How much of the time is written.
    public enum Style: Sendable {
        /// `2026-11-25 14:02:07.123`: log lines.
        case log
        /// `2026-11-25 14:02:07`: tables (status, jobs).
        case seconds
        /// `2026-11-25 14:02`: "already sent … on".
        case minutes
        /// `14:02:07`: the monitor's log.
        case clock
        /// `25 Nov 14:02`: until when a server keeps an upload.
        case dayMonth
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func format(_ date: Date, _ style: Style, timeZone: TimeZone = .current) -> String {
        // The nearest whole millisecond, as Foundation hands a date to ICU (it adds half a
        // millisecond before ICU drops the fraction); a fraction taken after the seconds would
        // fall a hair short (12.345 - 12 is 0.34499…).
        let totalMillis = (date.timeIntervalSince1970 * 1000 + 0.5).rounded(.down)
        let wholeSeconds = (totalMillis / 1000).rounded(.down)
        let millis = min(999, max(0, Int(totalMillis - wholeSeconds * 1000)))
        var seconds = time_t(wholeSeconds) + time_t(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: wholeSeconds)))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(23)
        func digits(_ value: Int, _ count: Int) {
            let text = String(value).utf8
            if text.count < count { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count - text.count)) }
            bytes.append(contentsOf: text)
        }
        func character(_ c: Unicode.Scalar) { bytes.append(UInt8(ascii: c)) }
        func day() {
            digits(Int(parts.tm_year) + 1900, 4)
            character("-")
            digits(Int(parts.tm_mon) + 1, 2)
            character("-")
            digits(Int(parts.tm_mday), 2)
        }
        func time(seconds: Bool) {
            digits(Int(parts.tm_hour), 2)
            character(":")
            digits(Int(parts.tm_min), 2)
            if seconds {
                character(":")
                digits(Int(parts.tm_sec), 2)
            }
        }
        switch style {
        case .log:
            day()
            character(" ")
            time(seconds: true)
            character(".")
            digits(millis, 3)
        case .seconds:
            day()
            character(" ")
            time(seconds: true)
        case .minutes:
            day()
            character(" ")
            time(seconds: false)
        case .clock:
            time(seconds: true)
        case .dayMonth:
            digits(Int(parts.tm_mday), 1)
            character(" ")
            bytes.append(contentsOf: months[Int(parts.tm_mon)].utf8)
            character(" ")
            time(seconds: false)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
