/// The drawing characters for frames, bars and states: Unicode line drawing when the terminal
/// speaks UTF-8, plain ASCII otherwise (a `LANG=C` SSH session still gets a readable screen).
public struct Glyphs: Sendable, Hashable {
    public let horizontal: Character
    public let vertical: Character
    public let topLeft: Character
    public let topRight: Character
    public let bottomLeft: Character
    public let bottomRight: Character
    public let barFull: Character
    public let barEmpty: Character
    /// Eighths for the bar's partial cell, from one eighth to seven; empty for ASCII.
    public let barEighths: [Character]
    public let ellipsis: String

    public static let unicode = Glyphs(
        horizontal: "─", vertical: "│", topLeft: "┌", topRight: "┐", bottomLeft: "└", bottomRight: "┘",
        barFull: "█", barEmpty: "░", barEighths: ["▏", "▎", "▍", "▌", "▋", "▊", "▉"], ellipsis: "…"
    )

    public static let ascii = Glyphs(
        horizontal: "-", vertical: "|", topLeft: "+", topRight: "+", bottomLeft: "+", bottomRight: "+",
        barFull: "#", barEmpty: ".", barEighths: [], ellipsis: "~"
    )
}
