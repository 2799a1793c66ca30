/// Header values trimmed as `trimmingCharacters(in: .whitespaces)` trims them, without a trip
/// through Foundation's NSString: the receiver trims a dozen header pieces per upload, and that
/// trip was a tenth of its CPU for small files.
extension StringProtocol {
    public func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !Self.isSpace($0) }),
            let last = scalars.lastIndex(where: { !Self.isSpace($0) })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// CoreFoundation's whitespace set, which `CharacterSet.whitespaces` is: tab, space, the
    /// space separators, and the zero-width space.
    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20, 0x09, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }
}
