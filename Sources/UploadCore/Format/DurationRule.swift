/// Every kind of duration the program accepts, from a flag, a socket request or the journal, with
/// the range it allows. One rule per kind, applied where the value enters: nothing out of range
/// reaches a clock (a second count past `Int64` nanoseconds traps), a schedule (a next run past
/// year 9999 cannot be written as a date that reads back) or a loop (a negative interval runs it
/// without pause).
public enum DurationRule: Sendable, CaseIterable {
    /// Connect, stall and answer timeouts of an upload; the receiver's header, idle and body timeouts.
    case timeout
    /// How often a watched folder is looked at.
    case watchInterval
    /// How often maintenance runs.
    case maintenanceInterval
    /// How long finished uploads are kept.
    case history
    /// How long the agent waits, idle, before it exits (0: never).
    case idleExit
    /// How long uploads may go on after the receiver is told to stop.
    case shutdownGrace
    /// How long the receiver keeps a resumable upload from its creation.
    case resumableAge

    static let day = 86_400.0

    /// Seconds allowed, both ends included.
    public var range: ClosedRange<Double> {
        switch self {
        case .timeout: 0.1...Self.day
        case .watchInterval: 1...365 * Self.day
        case .maintenanceInterval: 60...365 * Self.day
        case .history: 60...3650 * Self.day
        case .idleExit: 0...365 * Self.day
        case .shutdownGrace: 0...3600
        case .resumableAge: 1...30 * Self.day
        }
    }

    /// `seconds` if this rule allows it; NaN and infinities never pass.
    public func check(_ seconds: Double, option: String) throws(RangeError) -> Double {
        guard seconds.isFinite, range.contains(seconds) else {
            let shown = seconds.isFinite && seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : "\(seconds)"
            throw RangeError(
                message: "\(option) \(shown) is out of range: allowed \(DurationText.describe(range.lowerBound)) to \(DurationText.describe(range.upperBound))")
        }
        return seconds
    }

    /// Reads `text` as a duration (`30s`, `5m`, `1h30m`, a bare number of seconds) this rule allows.
    public func parse(_ text: String, option: String) throws(RangeError) -> Double {
        try DurationText.parse(text, option: option, allowed: range)
    }

    /// Whole nanoseconds for a clock, for a value that has passed a rule; still saturates rather
    /// than trapping, whatever it is given (NaN and negatives give 0).
    public static func nanoseconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        let nanos = seconds * 1e9
        return nanos >= Double(Int64.max) ? Int64.max : Int64(nanos)
    }
}
