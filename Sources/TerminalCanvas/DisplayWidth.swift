/// How many terminal columns text takes, the way terminals lay it out: East Asian wide and
/// fullwidth characters and emoji take two, combining marks and zero-width joiners none.
///
/// This does not ask the C library (`wcwidth` depends on the process locale and on how old its
/// tables are); the ranges follow Unicode 15's East Asian Width `W`/`F` and emoji presentation.
public enum DisplayWidth {
    /// Columns of one grapheme cluster: 0, 1 or 2.
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x7F { return first.value < 0x20 ? 0 : 1 }
        if scalars.count > 1 {
            // An emoji sequence (flags, ZWJ families, keycaps, VS16) shows as one wide glyph.
            if scalars.contains(where: { $0.value == 0xFE0F }) && first.properties.isEmoji { return 2 }
            if scalars.contains(where: { $0.value == 0x200D }) && first.properties.isEmoji { return 2 }
            if (0x1F1E6...0x1F1FF).contains(first.value) { return 2 }
        }
        return of(first)
    }

    /// Columns of one scalar on its own.
    public static func of(_ scalar: Unicode.Scalar) -> Int {
        let v = scalar.value
        if v < 0x7F { return v < 0x20 ? 0 : 1 }
        if v < 0xA0 { return 0 }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        if v == 0x200B { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        return isWide(v) ? 2 : 1
    }

    /// Columns of a whole string.
    public static func of(_ text: some StringProtocol) -> Int {
        var total = 0
        for character in text { total += of(character) }
        return total
    }

    private static func isWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF,
            0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
            0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF,
            0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
