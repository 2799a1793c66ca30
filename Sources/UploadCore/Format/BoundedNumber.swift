/// Numbers that come from outside the process (a request head, an answer, a record on disk, the
/// agent's socket, a settings file) are read here before any arithmetic touches them: decimal
/// digits only, no sign, a bounded count of digits and a bounded value, so that every sum or
/// product of two of them fits an `Int64` with room to spare. One header whose value was added to
/// another before either was checked once stopped the receiver ("arithmetic overflow").
public enum BoundedNumber {
    /// The largest byte count any number from outside may name: 2^53 bytes (8 PiB), exactly
    /// representable as a `Double`; the sum of a few such numbers still fits an `Int64`.
    public static let maxBytes: Int64 = 1 << 53

    /// What a length field (`Content-Length`, `Upload-Length`, …) says.
    public enum Length: Equatable, Sendable {
        /// The field is absent.
        case none
        case bytes(Int64)
        /// Digits, but more than `maxBytes`: no upload can be that long.
        case beyondLimit
        /// Not a non-negative decimal integer.
        case malformed

        /// The number of bytes, when the field names one an upload can have.
        public var bytes: Int64? {
            if case .bytes(let value) = self { return value }
            return nil
        }
    }

    /// A non-negative decimal integer of at most `maxDigits` digits and at most `max`; nil for
    /// anything else (a sign, a space inside, a fraction, no digits, too many digits, too big).
    /// Leading and trailing spaces and tabs are allowed (a field value's optional whitespace).
    public static func decimal(_ text: some StringProtocol, max: Int64 = maxBytes, maxDigits: Int = 20) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        var sawTrailingSpace = false
        for byte in text.utf8 {
            switch byte {
            case 0x30...0x39:
                guard !sawTrailingSpace else { return nil }
                digits += 1
                guard digits <= maxDigits else { return nil }
                let (tens, overflowed) = value.multipliedReportingOverflow(by: 10)
                guard !overflowed, let next = sum(tens, Int64(byte - 0x30)), next <= max else { return nil }
                value = next
            case 0x20, 0x09:
                if digits > 0 { sawTrailingSpace = true }
            default:
                return nil
            }
        }
        return digits > 0 ? value : nil
    }

    /// A length field's value, told apart: absent, a number of bytes, one too large for any
    /// upload, or not a number at all.
    public static func length(_ text: String?) -> Length {
        guard let text else { return .none }
        if let value = decimal(text, max: maxBytes) { return .bytes(value) }
        let trimmed = text.utf8.drop { $0 == 0x20 || $0 == 0x09 }
        if !trimmed.isEmpty, trimmed.allSatisfy({ (0x30...0x39).contains($0) || $0 == 0x20 || $0 == 0x09 }),
            trimmed.contains(where: { (0x30...0x39).contains($0) })
        {
            return .beyondLimit
        }
        return .malformed
    }

    /// `a + b`, or nil when it would overflow.
    public static func sum(_ a: Int64, _ b: Int64) -> Int64? {
        let (result, overflow) = a.addingReportingOverflow(b)
        return overflow ? nil : result
    }

    /// A `Double` from outside turned into an `Int64` without trapping: nil when it is not finite
    /// or does not fit.
    public static func integer(_ value: Double) -> Int64? {
        guard value.isFinite, value > -9.2e18, value < 9.2e18 else { return nil }
        return Int64(value)
    }
}
