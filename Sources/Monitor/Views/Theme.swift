import TerminalCanvas

/// Colours and glyphs for the monitor. Without colour (NO_COLOR, a monochrome terminal) the
/// same views still read differently in text: `OK 200` vs `FAILED 404`, ✓ vs ✗.
public struct Theme: Sendable {
    public var colors: Bool
    public var glyphs: Glyphs
    /// How pictures are drawn: in 24-bit or 256 colours, or as shading without colour.
    public var pictureDepth: ColorDepth
    /// Real pixels (kitty graphics or sixel) where the terminal said it shows them.
    public var pixels: PixelGraphics?

    public init(colors: Bool, glyphs: Glyphs, pictureDepth: ColorDepth = .none, pixels: PixelGraphics? = nil) {
        self.colors = colors
        self.glyphs = glyphs
        self.pictureDepth = colors ? pictureDepth : .none
        self.pixels = colors ? pixels : nil
    }

    func color(_ color: TerminalColor, bold: Bool = false) -> CellStyle {
        CellStyle(foreground: colors ? color : nil, bold: bold)
    }

    var ok: CellStyle { color(.green) }
    var okBold: CellStyle { color(.green, bold: true) }
    var failed: CellStyle { color(.red) }
    var failedBold: CellStyle { color(.red, bold: true) }
    var accent: CellStyle { color(.cyan) }
    /// Waiting before a retry: not failed yet, not moving either.
    var warning: CellStyle { color(.yellow) }
    var directory: CellStyle { color(.blue, bold: true) }
    var marked: CellStyle { color(.yellow, bold: true) }
    var muted: CellStyle { CellStyle(dim: true) }
    var frame: CellStyle { .plain }
    var focusedFrame: CellStyle { color(.cyan, bold: true) }
    var titleBar: CellStyle { CellStyle(reverse: true) }
    var selection: CellStyle { CellStyle(reverse: true) }
    var barTrack: CellStyle { CellStyle(dim: true) }

    /// Queue state glyphs: queued, sending, waiting to retry, done, failed, cancelled.
    func stateGlyph(_ row: RowState) -> String {
        let unicode = glyphs == .unicode
        switch row {
        case .queued: return unicode ? "·" : "."
        case .sending: return unicode ? "↑" : ">"
        case .waitingToRetry: return unicode ? "↻" : "~"
        case .done: return unicode ? "✓" : "+"
        case .failed: return unicode ? "✗" : "x"
        case .cancelled: return unicode ? "⊘" : "-"
        }
    }
}

/// The states a queue row shows.
enum RowState {
    case queued, sending, waitingToRetry, done, failed, cancelled
}
