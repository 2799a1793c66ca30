/// Parses sizes as people write them on command lines: `1048576`, `500k`, `20MB`, `1GiB`, `1.5G`.
/// `k/M/G/T` alone and `KiB/MiB/GiB/TiB` are powers of 1024; `kB/MB/GB/TB` are powers of 1000.
public enum ByteSize {
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingWhitespace()
        let numberPart = trimmed.prefix { $0.isNumber || $0 == "." }
        guard !numberPart.isEmpty, let value = Double(numberPart), value >= 0 else { return nil }
        let unit = trimmed.dropFirst(numberPart.count).trimmingWhitespaceSubstring().lowercased()
        let multipliers: [String: Double] = [
            "": 1, "b": 1,
            "k": 1024, "kib": 1024, "m": 1_048_576, "mib": 1_048_576, "g": 1_073_741_824, "gib": 1_073_741_824,
            "t": 1_099_511_627_776, "tib": 1_099_511_627_776,
            "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
        ]
        guard let multiplier = multipliers[unit] else { return nil }
        let bytes = value * multiplier
        // Beyond 8 PiB no size or rate means anything, and later arithmetic must not overflow.
        guard bytes <= Double(BoundedNumber.maxBytes) else { return nil }
        return Int64(bytes.rounded())
    }
}
