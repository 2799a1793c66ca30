/// Parses sizes as people write them on command lines: `1048576`, `500k`, `20MB`, `1GiB`, `1.5G`.
/// `k/M/G/T/P` alone and `KiB/MiB/GiB/TiB/PiB` are powers of 1024; `kB/MB/GB/TB/PB` are powers of 1000.
public enum ByteSize {
    public static func parse(_ text: String) -> Int64? {
        guard let bytes = unbounded(text), bytes <= Double(BoundedNumber.maxBytes) else { return nil }
        return Int64(bytes.rounded())
    }

    /// Why `text` cannot be the value of `option` (a size of at least `minimum` bytes), said so
    /// a person can fix it; nil when it can. `examples`: sizes of the kind the option takes.
    public static func refusal(_ text: String, option: String, atLeast minimum: Int64, like examples: String, noun: String = "size") -> String? {
        guard let bytes = unbounded(text) else { return "\(option) '\(text)' is not a \(noun) like \(examples)" }
        // Beyond 8 PiB no size or rate means anything, and later arithmetic must not overflow.
        if bytes > Double(BoundedNumber.maxBytes) { return "\(option) '\(text)' is more than 8 PiB, the most a size can be here" }
        if bytes.rounded() < Double(minimum) {
            return "\(option) '\(text)' must be at least \(minimum == 1 ? "1 byte" : ByteFormat.bytes(minimum)), like \(examples)"
        }
        return nil
    }

    /// The number of bytes `text` says, however large; nil when it is not a size.
    static func unbounded(_ text: String) -> Double? {
        let trimmed = text.trimmingWhitespace()
        let numberPart = trimmed.prefix { $0.isNumber || $0 == "." }
        guard !numberPart.isEmpty, let value = Double(numberPart), value >= 0 else { return nil }
        let unit = trimmed.dropFirst(numberPart.count).trimmingWhitespaceSubstring().lowercased()
        let multipliers: [String: Double] = [
            "": 1, "b": 1,
            "k": 1024, "kib": 1024, "m": 1_048_576, "mib": 1_048_576, "g": 1_073_741_824, "gib": 1_073_741_824,
            "t": 1_099_511_627_776, "tib": 1_099_511_627_776, "p": 1_125_899_906_842_624, "pib": 1_125_899_906_842_624,
            "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15,
        ]
        guard let multiplier = multipliers[unit] else { return nil }
        let bytes = value * multiplier
        return bytes.isFinite ? bytes : nil
    }
}
