import Foundation

/// HTTP's date format (RFC 9110 §5.6.7, IMF-fixdate: `Wed, 25 Nov 2026 21:00:00 GMT`), as
/// `Retry-After` and tus's `Upload-Expires` carry it.
public enum HTTPDate {
    public static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
