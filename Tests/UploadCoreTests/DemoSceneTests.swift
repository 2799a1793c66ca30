import Testing
import UploadCore

/// The demo's pictures are scenes, so its preview shows something recognisable.
@Suite struct DemoSceneTests {
    @Test func theSunriseHasASunInASkyOverGreenGround() {
        let pixel = DemoScene.sunrise.pixels(width: 640, height: 480)
        #expect(pixel(320, 280) == (255, 214, 90), "the sun above the horizon, in the middle")
        let sky = pixel(10, 5)
        let ground = pixel(10, 470)
        #expect(sky.2 > sky.0, "blue at the top: \(sky)")
        #expect(ground.1 > ground.0 && ground.1 > ground.2, "green at the bottom: \(ground)")
    }

    @Test func everySceneFillsItsFrameWithMoreThanOneColour() {
        for scene in DemoScene.allCases {
            let pixel = scene.pixels(width: 200, height: 100)
            var colours = Set<[UInt8]>()
            for y in stride(from: 0, to: 100, by: 7) {
                for x in stride(from: 0, to: 200, by: 7) {
                    let c = pixel(x, y)
                    colours.insert([c.0, c.1, c.2])
                }
            }
            #expect(colours.count >= 3, "\(scene): \(colours.count) colours")
        }
    }
}
