/// Characters that change how the text around them is shown without being seen themselves:
/// C0 and C1 controls, and format characters — bidi embeddings, overrides and isolates
/// (U+202A–U+202E, U+2066–U+2069), direction marks (U+200E/F, U+061C), zero-width spaces, the BOM —
/// apart from the joiners (U+200C/D) that scripts and emoji sequences need. A file named
/// `\u{202E}gnp.exe` displays as `exe.png`; with these rules it is stored as `gnp.exe` and shown
/// as `<U+202E>gnp.exe`.
public enum InvisibleCharacters {
    public static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if v < 0x20 || (0x7F...0x9F).contains(v) { return true }
        // The first format character is U+00AD: below it, asking the Unicode tables is waste.
        if v < 0xAD { return false }
        // A byte of a file name that is not UTF-8 (`PathText`).
        if PathText.escapedByte(scalar) != nil { return true }
        return scalar.properties.generalCategory == .format && v != 0x200C && v != 0x200D
    }

    /// How a hidden character is shown: `<U+202E>`; a byte of a name that is not UTF-8, `<0xE9>`.
    public static func escape(_ scalar: Unicode.Scalar) -> String {
        if let byte = PathText.escapedByte(scalar) {
            let hex = String(byte, radix: 16, uppercase: true)
            return "<0x" + (hex.count < 2 ? "0" : "") + hex + ">"
        }
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "<U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + ">"
    }

    /// `text` with every hidden character shown as its escape, for names put in front of a person.
    public static func escaped(_ text: String) -> String {
        escaped(text, keepingLineFeeds: false)
    }

    /// A JSON text with every hidden character written as a JSON escape (line feeds, which a
    /// JSON writer puts only between tokens, stay): the same data, safe to show.
    public static func jsonEscaped(_ json: String) -> String {
        let hidden = { (scalar: Unicode.Scalar) in isHidden(scalar) && scalar != "\n" }
        guard json.unicodeScalars.contains(where: hidden) else { return json }
        var out = ""
        for scalar in json.unicodeScalars {
            guard hidden(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }

    /// The one rule for everything written to a terminal that did not come from this program: a
    /// name, a URL, a server's answer, an error. Hidden characters (an ESC that would start a
    /// control sequence, a BEL, a bidi override) are shown as escapes; with `keepingLineFeeds`,
    /// the line feeds that separate lines of a message stay.
    public static func escaped(_ text: String, keepingLineFeeds: Bool) -> String {
        // Printable ASCII is the common case and needs no scalar decoding.
        if text.utf8.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || ($0 == 0x0A && keepingLineFeeds) }) { return text }
        let hidden = { (scalar: Unicode.Scalar) in isHidden(scalar) && !(keepingLineFeeds && scalar == "\n") }
        guard text.unicodeScalars.contains(where: hidden) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if hidden(scalar) { out += escape(scalar) } else { out.unicodeScalars.append(scalar) }
        }
        return out
    }
}
