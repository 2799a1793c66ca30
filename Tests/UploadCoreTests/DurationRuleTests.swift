import Testing
import UploadCore

/// Every duration the program accepts passes one rule: extreme and random values end in a clear
/// refusal or a value inside the rule's range, never a trap.
struct DurationRuleTests {
    static let extremes: [Double] = [
        -1e308, -5, -0.0, 0, 0.05, 0.1, 1, 59, 60, 86_400, 86_401, 3.1536e7, 3.1537e7, 3.1536e8, 3.1537e8,
        9.3e10, 1e300, 1e308, Double(Int64.max), Double(UInt64.max), .nan, .infinity, -.infinity,
        .greatestFiniteMagnitude, .leastNonzeroMagnitude,
    ]

    @Test(arguments: DurationRule.allCases)
    func extremeAndRandomValuesAreRefusedOrInRange(rule: DurationRule) {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<2000).map { _ in
            Double(
                sign: Bool.random(using: &generator) ? .plus : .minus,
                exponent: Int.random(in: -20...1023, using: &generator),
                significand: Double.random(in: 1..<2, using: &generator))
        }
        for value in Self.extremes + random {
            do {
                let accepted = try rule.check(value, option: "--x")
                #expect(rule.range.contains(accepted))
                #expect(DurationRule.nanoseconds(accepted) >= 0)
            } catch {
                #expect(!(value.isFinite && rule.range.contains(value)), "\(value) refused: \(error)")
                #expect(error.message.hasPrefix("--x "))
                #expect(error.message.contains("out of range: allowed"))
            }
            // Whatever reaches them, the formatters and the clock conversion never trap.
            _ = DurationText.format(value)
            _ = ByteFormat.duration(value)
            _ = ByteFormat.eta(value)
            _ = DurationRule.nanoseconds(value)
        }
    }

    @Test(arguments: ["1e300", "-5", "nan", "inf", "9223372036854775807", "3000000d", "0.00001", "", "5x", "1e308s"])
    func textThatIsNoDurationInRangeIsRefusedNamingTheOption(text: String) {
        for rule in DurationRule.allCases {
            do {
                let seconds = try rule.parse(text, option: "--every")
                #expect(rule.range.contains(seconds))
            } catch {
                #expect(error.message.hasPrefix("--every '\(text)' "), "\(error.message)")
            }
        }
    }

    @Test func theMessagesSayTheAllowedRange() {
        #expect(throws: RangeError(message: "--every '3000000d' is out of range: allowed 1s to 365d")) {
            try DurationRule.watchInterval.parse("3000000d", option: "--every")
        }
        #expect(throws: RangeError(message: "everySeconds -5 is out of range: allowed 1m to 365d")) {
            try DurationRule.maintenanceInterval.check(-5, option: "everySeconds")
        }
        #expect(DurationRule.nanoseconds(1e300) == Int64.max)
        #expect(DurationRule.nanoseconds(-3) == 0)
        #expect(DurationRule.nanoseconds(.nan) == 0)
        #expect(DurationRule.nanoseconds(1.5) == 1_500_000_000)
    }
}
