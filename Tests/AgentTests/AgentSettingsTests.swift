import Foundation
import Testing
@testable import UploadAgent
import UploadCore
import UploadJournal
import UploadTesting

/// The agent's persistent settings: the daily window, the rate in force at a given time, the
/// file they live in, and what is refused.
@Suite struct AgentSettingsTests {
    /// A fixed zone, so the tests mean the same on every machine.
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        return calendar
    }()

    func at(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = Self.calendar.timeZone
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate, .withTimeZone]
        return formatter.date(from: text + "+01:00")!
    }

    @Test func windowsParseAsTheyAreWrittenAndNothingElse() throws {
        let day = try DailyWindow(parsing: "09:00-18:00")
        #expect(day.start == 540 && day.end == 1080)
        #expect(day.argument == "09:00-18:00")
        #expect(day.description == "09:00 to 18:00")
        let night = try DailyWindow(parsing: " 22:30 - 06:00 ")
        #expect(night.start == 1350 && night.end == 360)
        for bad in ["9-18", "9:00-18:00", "09:00", "09:00-24:00", "09:60-10:00", "0900-1800", "09:00-18:00-19:00", "", "aa:bb-cc:dd", "٠٩:٠٠-١٨:٠٠"] {
            #expect(throws: RangeError.self, "\(bad)") { try DailyWindow(parsing: bad) }
        }
        #expect { try DailyWindow(parsing: "10:00-10:00") } throws: { ($0 as? RangeError)?.message.contains("empty") == true }
    }

    @Test func aDaytimeWindowHoldsItsStartAndNotItsEnd() throws {
        let window = try DailyWindow(parsing: "09:00-18:00")
        #expect(!window.contains(at("2026-11-23T08:59:59"), calendar: Self.calendar))
        #expect(window.contains(at("2026-11-23T09:00:00"), calendar: Self.calendar))
        #expect(window.contains(at("2026-11-23T17:59:00"), calendar: Self.calendar))
        #expect(!window.contains(at("2026-11-23T18:00:00"), calendar: Self.calendar))
        #expect(window.nextBoundary(after: at("2026-11-23T07:00:00"), calendar: Self.calendar) == at("2026-11-23T09:00:00"))
        #expect(window.nextBoundary(after: at("2026-11-23T12:00:00"), calendar: Self.calendar) == at("2026-11-23T18:00:00"))
        #expect(window.nextBoundary(after: at("2026-11-23T19:00:00"), calendar: Self.calendar) == at("2026-11-24T09:00:00"))
    }

    @Test func aWindowOverMidnightHoldsTheLateAndTheEarlyHours() throws {
        let window = try DailyWindow(parsing: "22:00-06:00")
        #expect(window.contains(at("2026-11-23T23:30:00"), calendar: Self.calendar))
        #expect(window.contains(at("2026-11-24T05:59:00"), calendar: Self.calendar))
        #expect(!window.contains(at("2026-11-24T06:00:00"), calendar: Self.calendar))
        #expect(!window.contains(at("2026-11-24T12:00:00"), calendar: Self.calendar))
        #expect(window.nextBoundary(after: at("2026-11-23T23:00:00"), calendar: Self.calendar) == at("2026-11-24T06:00:00"))
    }

    @Test func theRateInForceFollowsTheWindowAndSaysUntilWhen() throws {
        let settings = AgentSettings(concurrency: 4, rateLimit: 2_000_000, limitWindow: try DailyWindow(parsing: "09:00-18:00"))
        #expect(settings.rate(at: at("2026-11-23T10:00:00"), calendar: Self.calendar) == 2_000_000)
        #expect(settings.rate(at: at("2026-11-23T20:00:00"), calendar: Self.calendar) == nil)
        #expect(settings.nextChange(after: at("2026-11-23T20:00:00"), calendar: Self.calendar) == at("2026-11-24T09:00:00"))
        #expect(settings.summary == "4 uploads at once, at most 2.00 MB/s in total from 09:00 to 18:00 (full speed otherwise)")
        #expect(settings.nowText(at: at("2026-11-23T10:00:00"), calendar: Self.calendar) == "now limited to 2.00 MB/s until 18:00")
        #expect(settings.nowText(at: at("2026-11-23T20:00:00"), calendar: Self.calendar) == "now at full speed until 09:00")

        let allDay = AgentSettings(concurrency: 1, rateLimit: 500_000)
        #expect(allDay.rate(at: at("2026-11-23T03:00:00"), calendar: Self.calendar) == 500_000)
        #expect(allDay.nextChange(after: Date()) == nil)
        #expect(allDay.nowText(at: Date()) == nil)
        #expect(allDay.summary == "1 upload at once, at most 500 kB/s in total")
        #expect(AgentSettings().summary == "2 uploads at once, full speed")
    }

    /// The agent's rate through the day, stepped by hand: the rate in force, a line when the
    /// limit starts or lifts, and when to look again (the boundary, or within a minute).
    @Test func theRateWindowSaysTheRateWhatChangedAndWhenToLookAgain() throws {
        let settings = AgentSettings(concurrency: 4, rateLimit: 2_000_000, limitWindow: try DailyWindow(parsing: "09:00-18:00"))
        var window = RateWindow(settings, limited: false, calendar: Self.calendar)
        let night = window.step(at: at("2026-11-23T08:59:00"))
        #expect(night == .init(rate: nil, log: nil, wakeAt: at("2026-11-23T09:00:00")))
        let morning = window.step(at: at("2026-11-23T09:00:00"))
        #expect(morning == .init(rate: 2_000_000, log: "now limited to 2.00 MB/s until 18:00", wakeAt: at("2026-11-23T09:01:00")))
        // Still limited: nothing to say again.
        #expect(window.step(at: at("2026-11-23T17:59:30")) == .init(rate: 2_000_000, log: nil, wakeAt: at("2026-11-23T18:00:00")))
        #expect(window.step(at: at("2026-11-23T18:00:00")).log == "now at full speed until 09:00")
        // Past a boundary it missed (a suspended laptop): the rate as of now, at once.
        #expect(
            window.step(at: at("2026-11-24T12:00:00")) == .init(rate: 2_000_000, log: "now limited to 2.00 MB/s until 18:00", wakeAt: at("2026-11-24T12:01:00"))
        )
    }

    @Test func settingsThatCannotWorkAreRefusedWithTheReason() throws {
        #expect(AgentSettings(concurrency: 0).refusal?.contains("from 1 to 64") == true)
        #expect(AgentSettings(concurrency: 65).refusal != nil)
        #expect(AgentSettings(rateLimit: 10).refusal?.contains("too low") == true)
        #expect(AgentSettings(limitWindow: try DailyWindow(parsing: "09:00-18:00")).refusal?.contains("needs a rate") == true)
        #expect(AgentSettings(concurrency: 3, rateLimit: 1024).refusal == nil)
        #expect(AgentRequest.configure(AgentSettings(concurrency: 0)).refusal != nil, "the socket is held to the same rules")
    }

    /// A rate of 2^63 - 1 once crashed the agent on the socket and every start from the file.
    @Test func aHugeRateIsRefusedAtEveryDoorAndNeverFormatted() throws {
        let huge = AgentSettings(rateLimit: .max)
        #expect(huge.refusal?.contains("out of range") == true)
        #expect(AgentRequest.configure(huge).refusal?.contains("out of range") == true)
        #expect(AgentSettings(rateLimit: BoundedNumber.maxBytes).refusal == nil)
        #expect(!huge.summary.isEmpty, "formatting a value that got past the door does not trap either")
        #expect(ByteFormat.rate(Double(Int64.max)) == "? B/s")
        #expect(ByteFormat.rate(.infinity) == "? B/s")
        #expect(ByteSize.parse("9223372036854775807") == nil)
        #expect(ByteSize.parse("9PiB") == nil && ByteSize.parse("8PiB") == BoundedNumber.maxBytes && ByteSize.parse("1T") == 1 << 40)
        var transport = TransportSettings()
        transport.rateLimit = .max
        #expect(throws: RangeError.self) { try transport.validate() }

        let root = TestFiles.makeTemporaryDirectory("agent-settings-huge")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let path = root + "/agent-settings.json"
        for (text, line, words) in [
            ("{\n  \"concurrency\" : 2,\n  \"rateLimit\" : 9223372036854775807\n}\n", 3, "out of range"),
            ("{\n  \"concurrency\" : 2,\n\n  \"rateLimit\" : 99999999999999999999\n}\n", 4, "rateLimit"),
            ("{\n  \"concurrency\" : 99999999999999999999\n}\n", 2, "concurrency"),
            ("{\n  \"concurrency\" : 1.5\n}\n", 2, "concurrency"),
            ("{\n  \"concurrency\" : 2,\n  oops\n}\n", 3, "not JSON"),
        ] {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            #expect { try AgentSettings.load(path) } throws: { error in
                let error = error as? AgentSettingsError
                return error?.line == line && error?.description.contains(path + ", line \(line)") == true && error?.reason.contains(words) == true
            }
        }
    }

    @Test func theFileKeepsThemAndABrokenOneIsNamedNotIgnored() throws {
        let root = TestFiles.makeTemporaryDirectory("agent-settings")
        let paths = StatePaths(stateDirectory: root, runtimeDirectory: root)
        #expect(try AgentSettings.load(paths.agentSettings) == AgentSettings(), "no file: the defaults")

        let settings = AgentSettings(concurrency: 5, rateLimit: 2_000_000, limitWindow: try DailyWindow(parsing: "22:00-06:00"))
        try settings.save(paths.agentSettings)
        #expect(try AgentSettings.load(paths.agentSettings) == settings)
        var st = stat()
        #expect(stat(paths.agentSettings, &st) == 0 && st.st_mode & 0o777 == 0o600)

        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: paths.agentSettings))
        #expect { try AgentSettings.load(paths.agentSettings) } throws: { error in
            "\(error)".contains(paths.agentSettings) && "\(error)".contains("not valid agent settings")
        }
        try Data(#"{"concurrency": 0}"#.utf8).write(to: URL(fileURLWithPath: paths.agentSettings))
        #expect { try AgentSettings.load(paths.agentSettings) } throws: { "\($0)".contains("out of range") }
        let emptyWindow = #"{"concurrency": 2, "rateLimit": 100000, "limitWindow": {"start": 600, "end": 600}}"#
        try Data(emptyWindow.utf8).write(to: URL(fileURLWithPath: paths.agentSettings))
        #expect { try AgentSettings.load(paths.agentSettings) } throws: { "\($0)".contains("is empty") }
        let pastMidnight = #"{"concurrency": 2, "rateLimit": 100000, "limitWindow": {"start": 1440, "end": 60}}"#
        try Data(pastMidnight.utf8).write(to: URL(fileURLWithPath: paths.agentSettings))
        #expect { try AgentSettings.load(paths.agentSettings) } throws: { "\($0)".contains("00:00 to 23:59") }
    }
}
