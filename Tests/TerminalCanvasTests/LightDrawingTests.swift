import Testing
import TerminalCanvas

/// What goes lighter on a slow link, decided without a terminal.
struct LightDrawingTests {
    @Test func onASlowLinkPicturesInCellsLoseColoursAndPicturesInPixelsLosePixels() {
        #expect(LightDrawing.depth(.trueColor, lightly: true) == .palette256)
        #expect(LightDrawing.depth(.trueColor, lightly: false) == .trueColor)
        #expect(LightDrawing.depth(.palette256, lightly: true) == .palette256)
        #expect(LightDrawing.depth(.none, lightly: true) == .none)
        #expect(LightDrawing.halvings(.sixel, lightly: true) == 1)
        #expect(LightDrawing.halvings(.kitty, lightly: true) == 2)
        #expect(LightDrawing.halvings(.kitty, lightly: false) == 0)
        #expect(LightDrawing.wholeCost(halvings: 1) == 4)
        #expect(LightDrawing.wholeCost(halvings: 2) == 16)
        #expect(LightDrawing.wholeCost(halvings: 0) == 1)
    }

    @Test func onlyWhatWentLighterIsDrawnAgainWhenTheLinkRecovers() {
        #expect(LightDrawing.redrawOnRecovery(cellPictureShown: true, depth: .trueColor, pixelsShownLight: false))
        #expect(!LightDrawing.redrawOnRecovery(cellPictureShown: true, depth: .palette256, pixelsShownLight: false))
        #expect(!LightDrawing.redrawOnRecovery(cellPictureShown: false, depth: .trueColor, pixelsShownLight: false))
        #expect(LightDrawing.redrawOnRecovery(cellPictureShown: false, depth: .none, pixelsShownLight: true))
    }
}
