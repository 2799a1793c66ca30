/// Human formatting of sizes, rates and durations, the same everywhere uploadmon prints them.
public enum ByteFormat {
    /// Decimal units as `ls -h --si` and most transfer tools print them: `0 B`, `999 B`, `2.1 MB`, `1.07 GB`.
    public static func bytes(_ count: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB", "PB"]
        var value = Double(count)
        var unit = 0
        while abs(value) >= 1000 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(count) B" }
        return "\(fixed(value, digits: value < 10 ? 2 : value < 100 ? 1 : 0)) \(units[unit])"
    }

    public static func rate(_ bytesPerSecond: Double) -> String {
        guard let whole = BoundedNumber.integer(bytesPerSecond.rounded()) else { return "? B/s" }
        return bytes(whole) + "/s"
    }

    /// `0.4 s`, `12 s`, `3m05s`, `2h04m`.
    public static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) < 1e12 else { return seconds.isNaN ? "? s" : (seconds > 0 ? "forever" : "0.0 s") }
        if seconds < 10 { return "\(fixed(seconds, digits: 1)) s" }
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total) s" }
        if total < 3600 { return "\(total / 60)m\(pad2(total % 60))s" }
        return "\(total / 3600)h\(pad2(total % 3600 / 60))m"
    }

    /// ETA in clock style: `0:07`, `12:30`, `1:02:03`.
    public static func eta(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 1e9 else { return "--:--" }
        let total = Int(seconds.rounded(.up))
        if total >= 3600 { return "\(total / 3600):\(pad2(total % 3600 / 60)):\(pad2(total % 60))" }
        return "\(total / 60):\(pad2(total % 60))"
    }

    static func pad2(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// Fixed-point formatting without Foundation's locale-dependent formatters.
    public static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let sign = value < 0 && scaled > 0 ? "-" : ""
        let whole = Int64(scaled / scale)
        guard digits > 0 else { return sign + String(whole) }
        let frac = Int64(scaled) - whole * Int64(scale)
        var fracText = String(frac)
        while fracText.count < digits { fracText = "0" + fracText }
        return "\(sign)\(whole).\(fracText)"
    }
}
