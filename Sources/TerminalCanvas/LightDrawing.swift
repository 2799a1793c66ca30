/// How pictures are drawn while the link is slow (the monitor's frame pacer says when), decided
/// here rather than in the terminal's shell: pictures in cells go in the 256-colour palette
/// (about half the bytes of 24-bit colour); pictures in pixels go smaller — sixel halved once (a
/// quarter of the bytes, shown 1:1 in the middle of the picture's cells), kitty halved twice (a
/// sixteenth: its compressed RGB in base64 still costs about eight times sixel's bytes a pixel
/// on a photo) and stretched over the cells. Drawn whole again once the link recovers.
public enum LightDrawing {
    /// The depth a picture in cells is drawn in.
    public static func depth(_ depth: ColorDepth, lightly: Bool) -> ColorDepth {
        lightly && depth == .trueColor ? .palette256 : depth
    }

    /// How many times a picture in pixels is halved (each a quarter of the pixels).
    public static func halvings(_ kind: PixelProtocol, lightly: Bool) -> Int {
        guard lightly else { return 0 }
        switch kind {
        case .sixel: return 1
        case .kitty: return 2
        }
    }

    /// How many times more bytes the whole picture in pixels costs than one halved `halvings` times.
    public static func wholeCost(halvings: Int) -> Int { 1 << (2 * halvings) }

    /// Whether what is on screen must be drawn again now that the link recovered: a picture in
    /// cells drawn in fewer colours than the terminal has, or a picture in pixels sent smaller.
    public static func redrawOnRecovery(cellPictureShown: Bool, depth: ColorDepth, pixelsShownLight: Bool) -> Bool {
        (cellPictureShown && depth == .trueColor) || pixelsShownLight
    }
}
