import Foundation
import Glibc
import UploadCore

/// A stretch of every day in local time, `09:00-18:00`; one that ends before it starts runs
/// over midnight (`22:00-06:00`).
public struct DailyWindow: Codable, Sendable, Hashable, CustomStringConvertible {
    /// Minutes after midnight, 0..<1440.
    public let start: Int
    public let end: Int

    public init(start: Int, end: Int) throws(RangeError) {
        guard (0..<1440).contains(start), (0..<1440).contains(end) else {
            throw RangeError(message: "a time of day is from 00:00 to 23:59")
        }
        guard start != end else {
            throw RangeError(message: "the window \(Self.clock(start))-\(Self.clock(end)) is empty; leave --between out to limit all day")
        }
        self.start = start
        self.end = end
    }

    /// Read from a file or the socket by the same rules as from the command line.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let start = try container.decode(Int.self, forKey: .start)
        let end = try container.decode(Int.self, forKey: .end)
        do throws(RangeError) {
            try self.init(start: start, end: end)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .start, in: container, debugDescription: error.message)
        }
    }

    /// Parses `HH:MM-HH:MM` (24-hour clock; `9:00` and `0900` are not guessed at).
    public init(parsing text: String) throws(RangeError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        func minutes(_ part: Substring) -> Int? {
            let pieces = part.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
            guard pieces.count == 2, pieces.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0 >= "0" && $0 <= "9" } }),
                let hour = Int(pieces[0]), let minute = Int(pieces[1]), hour < 24, minute < 60
            else { return nil }
            return hour * 60 + minute
        }
        guard parts.count == 2, let start = minutes(parts[0]), let end = minutes(parts[1]) else {
            throw RangeError(message: "--between '\(text)' must be two times of day as HH:MM-HH:MM, like 09:00-18:00 (22:00-06:00 runs over midnight)")
        }
        try self.init(start: start, end: end)
    }

    public var description: String { "\(Self.clock(start)) to \(Self.clock(end))" }
    /// The form `--between` takes.
    public var argument: String { "\(Self.clock(start))-\(Self.clock(end))" }

    static func clock(_ minutes: Int) -> String {
        let hour = minutes / 60
        let minute = minutes % 60
        return (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }

    static func clockText(_ date: Date, calendar: Calendar) -> String {
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return clock((parts.hour ?? 0) * 60 + (parts.minute ?? 0))
    }

    /// Whether the local clock at `date` reads inside the window (its start included, its end not).
    public func contains(_ date: Date, calendar: Calendar = .current) -> Bool {
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let now = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        return start < end ? (start <= now && now < end) : (now >= start || now < end)
    }

    /// The next moment after `date` at which the local clock reads the window's start or end.
    public func nextBoundary(after date: Date, calendar: Calendar = .current) -> Date {
        let candidates = [start, end].compactMap { minutes in
            calendar.nextDate(
                after: date, matching: DateComponents(hour: minutes / 60, minute: minutes % 60, second: 0),
                matchingPolicy: .nextTime)
        }
        // Both exist on every calendar day; a day without one (a DST gap) moves to the next time.
        return candidates.min() ?? date.addingTimeInterval(3600)
    }
}
