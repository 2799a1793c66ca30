/// File names on Linux are bytes, not text: a name that is not valid UTF-8 (from an old camera,
/// a Windows archive, a Latin-1 system) cannot be a Swift `String` as it is, and decoding it with
/// replacement characters names a file that does not exist. Paths cross this program as
/// `String`s in a reversible form instead: valid UTF-8 as itself, and each byte of an invalid
/// sequence as one scalar of the private-use range U+10FF80…U+10FFFF (the byte's value plus
/// U+10FF00). A name that really holds such a scalar (all four of its bytes start F4 8F BE or
/// F4 8F BF) has its bytes escaped the same way, so every byte sequence has exactly one form and
/// comes back unchanged. Every system call takes a path through `withCString`; every display
/// shows an escaped byte as `<0xFF>`.
public enum PathText {
    static let base: UInt32 = 0x10FF00

    /// The text form of a name or path read from the system.
    public static func decode(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        // The common case: valid UTF-8 with no scalar of the escape range.
        if let text = String(validating: bytes, as: UTF8.self),
            !text.unicodeScalars.contains(where: { $0.value >= base + 0x80 })
        {
            return text
        }
        var scalars = String.UnicodeScalarView()
        var i = 0
        while i < bytes.count {
            let (scalar, length) = Self.scalar(in: bytes, at: i)
            if let scalar, scalar.value < base + 0x80 {
                scalars.append(scalar)
                i += length
            } else {
                // An invalid sequence's first byte, or a byte of a scalar that would read as an escape.
                for byte in bytes[i..<i + max(1, length)] {
                    scalars.append(byte < 0x80 ? Unicode.Scalar(byte) : Unicode.Scalar(base + UInt32(byte))!)
                }
                i += max(1, length)
            }
        }
        return String(scalars)
    }

    /// The bytes `text` stands for.
    public static func bytes(_ text: String) -> [UInt8] {
        guard text.unicodeScalars.contains(where: { $0.value >= base + 0x80 }) else { return Array(text.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar.value >= base + 0x80 {
                out.append(UInt8(scalar.value - base))
            } else {
                out.append(contentsOf: String(scalar).utf8)
            }
        }
        return out
    }

    /// Runs `body` with the path as the system needs it: its bytes, NUL-terminated.
    public static func withCString<T>(_ path: String, _ body: (UnsafePointer<CChar>) throws -> T) rethrows -> T {
        guard path.unicodeScalars.contains(where: { $0.value >= base + 0x80 }) else { return try path.withCString(body) }
        var bytes = Self.bytes(path)
        bytes.append(0)
        return try bytes.withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }

    /// Whether `scalar` stands for one byte of a name that is not UTF-8, and which.
    public static func escapedByte(_ scalar: Unicode.Scalar) -> UInt8? {
        scalar.value >= base + 0x80 ? UInt8(scalar.value - base) : nil
    }

    /// A valid scalar at `index` and its length in bytes, or nil and the length of the invalid
    /// sequence there (1).
    private static func scalar(in bytes: [UInt8], at index: Int) -> (Unicode.Scalar?, Int) {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0x00...0x7F: return (Unicode.Scalar(lead), 1)
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return (nil, 1)
        }
        guard index + length <= bytes.count,
            let text = String(validating: bytes[index..<index + length], as: UTF8.self),
            let scalar = text.unicodeScalars.first, text.unicodeScalars.count == 1
        else { return (nil, 1) }
        return (scalar, length)
    }
}
