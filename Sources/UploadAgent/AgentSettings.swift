import Foundation
import Glibc
import UploadCore
import UploadJournal

/// What the agent runs with, kept next to the journal (`agent-settings.json`) and set with
/// `uploadmon agent config`: every start reads it, a running agent applies a change at once.
public struct AgentSettings: Codable, Sendable, Hashable {
    public static let defaultConcurrency = 2
    public static let maxConcurrency = 64
    /// The lowest total rate accepted: below it, uploads would look stalled to servers.
    public static let minRate: Int64 = 1024

    /// How many uploads run at once, over all clients.
    public var concurrency: Int
    /// Bytes per second for all the agent's uploads together, or nil for full speed.
    public var rateLimit: Int64?
    /// When (local time) the limit applies; nil: all day.
    public var limitWindow: DailyWindow?

    public init(concurrency: Int = AgentSettings.defaultConcurrency, rateLimit: Int64? = nil, limitWindow: DailyWindow? = nil) {
        self.concurrency = concurrency
        self.rateLimit = rateLimit
        self.limitWindow = limitWindow
    }

    /// Why these settings cannot be used, or nil.
    public var refusal: String? { refusedField?.reason }

    /// The first field that makes these settings unusable (its key in the file) and why.
    var refusedField: (key: String, reason: String)? {
        if !(1...Self.maxConcurrency).contains(concurrency) {
            return ("concurrency", "concurrency \(concurrency) is out of range: from 1 to \(Self.maxConcurrency) uploads at once")
        }
        if let rateLimit, rateLimit < Self.minRate {
            return ("rateLimit", "a total rate of \(rateLimit) bytes/s is too low: at least 1k (1024 bytes/s), like 500k or 2MB")
        }
        if let rateLimit, rateLimit > BoundedNumber.maxBytes {
            return ("rateLimit", "a total rate of \(rateLimit) bytes/s is out of range: at most \(BoundedNumber.maxBytes) (8 PiB/s); use none for full speed")
        }
        if limitWindow != nil, rateLimit == nil {
            return ("limitWindow", "a time window (--between) needs a rate to apply in it (--limit-rate)")
        }
        return nil
    }

    /// The total rate in force at `date`: the limit inside its window (or all day), nil outside.
    public func rate(at date: Date, calendar: Calendar = .current) -> Int64? {
        guard let rateLimit else { return nil }
        guard let limitWindow else { return rateLimit }
        return limitWindow.contains(date, calendar: calendar) ? rateLimit : nil
    }

    /// When the rate in force next changes after `date`, or nil if it never does.
    public func nextChange(after date: Date, calendar: Calendar = .current) -> Date? {
        guard rateLimit != nil, let limitWindow else { return nil }
        return limitWindow.nextBoundary(after: date, calendar: calendar)
    }

    /// "2 uploads at once, full speed"; "4 uploads at once, at most 2.00 MB/s in total from
    /// 09:00 to 18:00 (full speed otherwise)".
    public var summary: String {
        let uploads = "\(concurrency) upload\(concurrency == 1 ? "" : "s") at once"
        guard let rateLimit else { return uploads + ", full speed" }
        let rate = "at most \(ByteFormat.rate(Double(rateLimit))) in total"
        guard let limitWindow else { return "\(uploads), \(rate)" }
        return "\(uploads), \(rate) from \(limitWindow) (full speed otherwise)"
    }

    /// What is in force at `date` in words: "limited to 2.00 MB/s until 18:00" or "full speed
    /// until 09:00"; nil without a window (the summary says it all).
    public func nowText(at date: Date, calendar: Calendar = .current) -> String? {
        guard limitWindow != nil, let change = nextChange(after: date, calendar: calendar) else { return nil }
        let until = DailyWindow.clockText(change, calendar: calendar)
        if let rate = rate(at: date, calendar: calendar) { return "now limited to \(ByteFormat.rate(Double(rate))) until \(until)" }
        return "now at full speed until \(until)"
    }

    /// The summary and, with a window, what is in force now: the one line that `status` and
    /// the agent's log give.
    public func inForce(at date: Date, calendar: Calendar = .current) -> String {
        summary + (nowText(at: date, calendar: calendar).map { "; \($0)" } ?? "")
    }

    // MARK: The file

    /// The settings stored at `path`; the defaults when there is no file yet. A file that
    /// cannot be read or makes no sense is an error that names it (never silently ignored).
    public static func load(_ path: String) throws(AgentSettingsError) -> AgentSettings {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return AgentSettings()
        } catch {
            throw AgentSettingsError(path: path, reason: "cannot read it: \(error.localizedDescription)")
        }
        let settings: AgentSettings
        let advice = "; fix it or remove it and set them again with `uploadmon agent config`"
        do {
            settings = try JSONDecoder().decode(AgentSettings.self, from: data)
        } catch let error as DecodingError {
            let (line, detail) = Self.diagnose(error, in: data)
            throw AgentSettingsError(path: path, line: line, reason: "it is not valid agent settings (\(detail))" + advice)
        } catch {
            throw AgentSettingsError(path: path, reason: "it is not valid agent settings (\(error))" + advice)
        }
        if let (key, reason) = settings.refusedField {
            throw AgentSettingsError(path: path, line: Self.line(of: key, in: data), reason: reason + advice)
        }
        return settings
    }

    /// Writes the settings to `path` (mode 0600) by replacing the file whole, so a reader
    /// never sees half of it.
    public func save(_ path: String) throws(AgentSettingsError) {
        let data: Data
        do {
            data = try JSONWriter.data(self, .indented) + Data("\n".utf8)
        } catch {
            throw AgentSettingsError(path: path, reason: "cannot write it: \(error)")
        }
        do {
            try FileReplacement.write(data, to: path, mode: 0o600)
        } catch {
            throw AgentSettingsError(path: path, reason: error.reason)
        }
    }
}

extension AgentSettings {
    /// Where in the file a decoding error is and what is wrong, in words. The decoder says only
    /// "not valid JSON" for a number that does not fit its field, so the file is read again as
    /// plain JSON to find the field (or, when it is not JSON at all, the character) at fault.
    static func diagnose(_ error: DecodingError, in data: Data) -> (line: Int?, detail: String) {
        let (key, detail) = explain(error)
        if let key { return (line(of: key, in: data), detail) }
        do {
            guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                return (nil, "the file is not a JSON object")
            }
            for key in ["concurrency", "rateLimit"] {
                guard let value = object[key], !(value is NSNull) else { continue }
                if let number = value as? NSNumber, String(cString: number.objCType) != "d", number as? Int64 != nil { continue }
                return (line(of: key, in: data), "\(key) is \(value), not a whole number that fits")
            }
            return (nil, detail)
        } catch {
            let description = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            let words = description.split(separator: " ")
            if let index = words.lastIndex(of: "character"), index + 1 < words.count,
                let offset = Int(words[index + 1].trimmingCharacters(in: .punctuationCharacters)), offset <= data.count
            {
                return (data.prefix(offset).filter { $0 == 0x0A }.count + 1, "the file is not JSON: \(description)")
            }
            return (nil, "the file is not JSON: \(description)")
        }
    }

    /// The key a decoding error is about, and what went wrong, in words.
    static func explain(_ error: DecodingError) -> (key: String?, detail: String) {
        func key(_ path: [any CodingKey]) -> String? { path.last(where: { $0.intValue == nil })?.stringValue }
        switch error {
        case .typeMismatch(let type, let context):
            return (
                key(context.codingPath),
                "\(key(context.codingPath) ?? "a value") is not \(type == Int.self || type == Int64.self ? "a whole number that fits" : "of type \(type)")"
            )
        case .valueNotFound(_, let context):
            return (key(context.codingPath), "\(key(context.codingPath) ?? "a value") is missing")
        case .keyNotFound(let missing, _):
            return (nil, "\(missing.stringValue) is missing")
        case .dataCorrupted(let context):
            let path = key(context.codingPath)
            return (path, (path.map { "\($0): " } ?? "") + context.debugDescription)
        @unknown default:
            return (nil, "\(error)")
        }
    }

    /// The 1-based line of the file on which `"key"` first appears as a key, if it does.
    static func line(of key: String, in data: Data) -> Int? {
        let needle = Array("\"\(key)\"".utf8)
        let bytes = Array(data)
        guard bytes.count >= needle.count else { return nil }
        var line = 1
        for index in 0...(bytes.count - needle.count) {
            if bytes[index] == 0x0A { line += 1 }
            if bytes[index] == needle[0], Array(bytes[index..<index + needle.count]) == needle { return line }
        }
        return nil
    }
}

/// Why the settings file cannot be used, with its path and, when known, the line.
public struct AgentSettingsError: Error, Sendable, CustomStringConvertible {
    public let path: String
    /// The line of the file the problem is on, when it can be told.
    public let line: Int?
    public let reason: String

    public init(path: String, line: Int? = nil, reason: String) {
        self.path = path
        self.line = line
        self.reason = reason
    }

    public var description: String { "agent settings \(path)\(line.map { ", line \($0)" } ?? ""): \(reason)" }
}

extension StatePaths {
    /// The agent's settings (`uploadmon agent config`), next to the journal.
    public var agentSettings: String { stateDirectory + "/agent-settings.json" }
}
