/// Text pieces for progress displays: bars and the `sent / total  rate  ETA` column.
public enum ProgressText {
    /// A bar of exactly `width` cells: `#` done, `-` to go (plain ASCII so it survives any terminal).
    public static func bar(fraction: Double?, width: Int, filled: Character = "#", empty: Character = "-") -> String {
        guard width > 0 else { return "" }
        guard let fraction else { return String(repeating: empty, count: width) }
        let done = Int((min(max(fraction, 0), 1) * Double(width)).rounded(.down))
        return String(repeating: filled, count: done) + String(repeating: empty, count: width - done)
    }

    public static func percent(_ fraction: Double?) -> String {
        guard let fraction else { return "  ?%" }
        let p = Int((min(max(fraction, 0), 1) * 100).rounded(.down))
        let text = "\(p)%"
        return String(repeating: " ", count: max(0, 4 - text.count)) + text
    }

    /// `12.3 MB / 52.1 MB  4.1 MB/s  ETA 0:09` (no total or ETA for unknown lengths).
    public static func stats(_ state: TransferState) -> String {
        var text = ByteFormat.bytes(state.sentBytes)
        if let total = state.totalBytes { text += " / " + ByteFormat.bytes(total) }
        if let rate = state.meter.bytesPerSecond { text += "  " + ByteFormat.rate(rate) }
        if let eta = state.etaSeconds { text += "  ETA " + ByteFormat.eta(eta) }
        return text
    }

    /// Collapses whitespace so an answer's body fits on one line.
    public static func oneLine(_ text: String) -> String {
        // ASCII (a JSON answer, most often) by bytes: Character.isWhitespace there is exactly
        // tab, line feed, vertical tab, form feed, carriage return and space, and no grapheme
        // spans two of its bytes but CR LF, which is whitespace as a whole. Anything else the
        // Character way, which is many times slower.
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else {
            return text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        for byte in text.utf8 {
            if byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                pendingSpace = !out.isEmpty
            } else {
                if pendingSpace {
                    out.append(0x20)
                    pendingSpace = false
                }
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
