import Foundation

/// `yyyy-MM-dd HH:mm:ss.SSS` in local time, as the receiver's log lines begin. Written with
/// `localtime_r` because a `DateFormatter` per line was a seventh of the receiver's CPU for
/// small files.
public enum LogTimestamp {
    public static func format(_ date: Date = Date()) -> String {
        // The nearest whole millisecond, as Foundation hands a date to ICU (it adds half a
        // millisecond before ICU drops the fraction); a fraction taken after the seconds would
        // fall a hair short (12.345 - 12 is 0.34499…).
        let totalMillis = (date.timeIntervalSince1970 * 1000 + 0.5).rounded(.down)
        let wholeSeconds = (totalMillis / 1000).rounded(.down)
        var seconds = time_t(wholeSeconds)
        let millis = min(999, max(0, Int(totalMillis - wholeSeconds * 1000)))
        var parts = tm()
        localtime_r(&seconds, &parts)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(23)
        func digits(_ value: Int, _ count: Int) {
            let text = String(value).utf8
            if text.count < count { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count - text.count)) }
            bytes.append(contentsOf: text)
        }
        digits(Int(parts.tm_year) + 1900, 4); bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mon) + 1, 2); bytes.append(UInt8(ascii: "-"))
        digits(Int(parts.tm_mday), 2); bytes.append(UInt8(ascii: " "))
        digits(Int(parts.tm_hour), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2); bytes.append(UInt8(ascii: "."))
        digits(millis, 3)
        return String(decoding: bytes, as: UTF8.self)
    }
}
