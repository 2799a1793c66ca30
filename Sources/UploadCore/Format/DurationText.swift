/// Durations as people type them on a command line: `90`, `90s`, `5m`, `1h30m`, `7d`, `1.5h`.
public enum DurationText {
    /// Seconds, or `nil` when the text is not a duration. A bare number is seconds.
    public static func parse(_ text: String) -> Double? {
        let trimmed = text.trimmingWhitespace().lowercased()
        guard !trimmed.isEmpty else { return nil }
        if let plain = Double(trimmed), plain >= 0, plain.isFinite { return plain }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        var total = 0.0
        var number = ""
        for character in trimmed {
            if character.isNumber || character == "." {
                number.append(character)
            } else if let unit = units[character], let value = Double(number), value >= 0 {
                total += value * unit
                number = ""
            } else {
                return nil
            }
        }
        return number.isEmpty ? total : nil
    }

    /// The short form `parse` reads back: `45s`, `5m`, `1h30m`, `1d`, `2d12h`. Fractions of a
    /// second are rounded.
    public static func format(_ seconds: Double) -> String {
        // Values past a century are not durations anyone asked for; never trap on them.
        guard seconds.isFinite, seconds < 36_500 * 86_400 else { return seconds.isNaN ? "?" : "forever" }
        guard seconds > 0 else { return "0s" }
        var rest = Int(seconds.rounded())
        guard rest > 0 else { return "0s" }
        var text = ""
        for (unit, size) in [("d", 86400), ("h", 3600), ("m", 60), ("s", 1)] where rest >= size {
            text += "\(rest / size)\(unit)"
            rest %= size
        }
        return text
    }

    /// A wait until something happens, as `format` writes it: at least a second, and past an
    /// hour rounded to the minute (seconds are noise there).
    public static func countdown(_ seconds: Double) -> String {
        format(seconds >= 3600 ? (seconds / 60).rounded() * 60 : max(1, seconds))
    }

    /// Reads a duration given to `option` and checks it lies in `allowed` (seconds): the one rule
    /// for every duration the program accepts, so none can overflow a clock or spin a loop.
    public static func parse(_ text: String, option: String, allowed: ClosedRange<Double>) throws(RangeError) -> Double {
        guard let seconds = parse(text) else {
            throw RangeError(message: "\(option) '\(text)' is not a duration like 30s, 5m, 1h30m or 2d")
        }
        guard allowed.contains(seconds) else {
            throw RangeError(message: "\(option) '\(text)' is out of range: allowed \(describe(allowed.lowerBound)) to \(describe(allowed.upperBound))")
        }
        return seconds
    }

    /// `format`, but keeps fractions under a second (`0.5s`).
    public static func describe(_ seconds: Double) -> String {
        seconds > 0 && seconds < 1 ? "\(seconds)s" : format(seconds)
    }
}

/// A value that is not what its option takes, or out of the range it allows; says which and why.
public struct RangeError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
