/// The eight colours every colour terminal has; richer palettes are not needed and these
/// survive 8-colour terminals, SSH and tmux unchanged.
public enum TerminalColor: Int, Sendable, Hashable, CaseIterable {
    case black, red, green, yellow, blue, magenta, cyan, white
}

/// How a cell is drawn. `nil` colours mean the terminal's own default.
public struct CellStyle: Sendable, Hashable {
    public var foreground: TerminalColor?
    public var background: TerminalColor?
    public var bold = false
    public var dim = false
    public var reverse = false
    public var underline = false

    public init(
        foreground: TerminalColor? = nil, background: TerminalColor? = nil,
        bold: Bool = false, dim: Bool = false, reverse: Bool = false, underline: Bool = false
    ) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.dim = dim
        self.reverse = reverse
        self.underline = underline
    }

    public static let plain = CellStyle()

    public func with(foreground: TerminalColor?) -> CellStyle {
        var copy = self
        copy.foreground = foreground
        return copy
    }

    public var bolded: CellStyle {
        var copy = self
        copy.bold = true
        return copy
    }

    public var reversed: CellStyle {
        var copy = self
        copy.reverse = true
        return copy
    }
}
