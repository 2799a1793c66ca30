import UploadTesting
import PreviewModel
import Monitor
import TerminalCanvas
import Testing
import UploadCore

/// The preview pane's decisions: what to decode, what to show, what to forget.
@Suite struct PreviewReducerTests {
    func loads(_ effects: [MonitorEffect]) -> [PreviewRequest] {
        effects.compactMap { if case .loadPreview(let request) = $0 { request } else { nil } }
    }

    func picture(_ width: Int, _ height: Int) -> Preview {
        let image = RGBImage(width: width, height: height, rgb: [UInt8](repeating: 200, count: width * height * 3))
        return Preview(image: image, info: PreviewInfo(format: .jpeg, width: 4000, height: 3000, fileSize: 2_100_000))
    }

    @Test func movingTheCursorAsksForTheNewPhotoAndAStaleResultIsNotShown() throws {
        var state = Fixtures.state()
        #expect(state.preview.wanted == nil, "the cursor starts on a folder")
        let cat = try #require(loads(Fixtures.press(&state, .down)).first)
        #expect(cat.path == "/photos/cat.jpg" && cat.size == 2_100_000 && cat.columns > 10 && cat.rows > 5)
        let dog = try #require(loads(Fixtures.press(&state, .down)).first)
        #expect(dog.path == "/photos/dog.png")
        // The cat's picture arrives after the cursor moved on: kept, not shown.
        _ = MonitorReducer.reduce(&state, .previewLoaded(cat, .success(picture(10, 8))))
        #expect(state.preview.shown == nil)
        let canvas = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor))
        #expect(canvas.picture == nil && canvas.text.contains("decoding…"))
        // Back on the cat: shown at once from what was kept, nothing decoded again.
        #expect(loads(Fixtures.press(&state, .up)).isEmpty)
        let shown = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor))
        #expect(shown.picture?.columns == 10 && shown.picture?.rows == 4)
        #expect(shown.text.contains("4000×3000 · 2.10 MB"))
    }

    /// With a conversion chosen (`F`), the photo under the cursor is written off the loop and
    /// the pane tells its exact size; the cursor moving on or another choice asks anew, and a
    /// size measured for other settings is never shown.
    @Test func thePaneTellsTheBytesAPhotoLeavesWith() throws {
        func measures(_ effects: [MonitorEffect]) -> [ConversionMeasure] {
            effects.compactMap { if case .measureConversion(let request) = $0 { request } else { nil } }
        }
        var state = Fixtures.state()
        let cat = try #require(loads(Fixtures.press(&state, .down)).first)
        // The picture says HEIC (as a phone's photo): JPEG means writing it anew.
        let heic = Preview(image: picture(10, 8).image, info: PreviewInfo(format: .heic, width: 4000, height: 3000, fileSize: 2_100_000))
        #expect(measures(MonitorReducer.reduce(&state, .previewLoaded(cat, .success(heic)))).isEmpty, "as it is: nothing to write")
        let jpeg = PhotoConversion(format: .jpeg)
        let asked = measures(Fixtures.press(&state, .character("F")))
        #expect(asked == [ConversionMeasure(path: "/photos/cat.jpg", size: 2_100_000, conversion: jpeg, stripLocation: false)])
        let theme = Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor)
        #expect(MonitorView.render(state, theme: theme).text.contains("sends JPEG q85 4000×3000 · 4000×3000"))
        _ = MonitorReducer.reduce(&state, .conversionMeasured(asked[0], .bytes(812_345)))
        #expect(MonitorView.render(state, theme: theme).text.contains("sends JPEG q85 4000×3000, 812 kB"))
        // Another way: asked anew, the old size not shown for it.
        let smaller = measures(Fixtures.press(&state, .character("F")))
        #expect(smaller.map(\.conversion) == [PhotoConversion(format: .jpeg, maxDimension: 2048)])
        #expect(!MonitorView.render(state, theme: theme).text.contains("812 kB"))
        // Back to the first way: known, shown without writing it again.
        Fixtures.press(&state, .character("F"), .character("F"))
        #expect(measures(Fixtures.press(&state, .character("F"))).isEmpty)
        #expect(state.sendsAs == jpeg && MonitorView.render(state, theme: theme).text.contains("812 kB"))
        // What only writing it finds (an animation's frames) is said instead of a size.
        Fixtures.press(&state, .character("F"))
        _ = MonitorReducer.reduce(&state, .conversionMeasured(smaller[0], .refused("an animated GIF (2 frames) is not converted")))
        #expect(MonitorView.render(state, theme: theme).text.contains("not sent: an animated GIF (2 frames)"))
    }

    /// A first picture (the photo's EXIF thumbnail) is shown at once and replaced by the photo;
    /// it is never kept as the answer: moving away and back decodes the photo again, and a
    /// first picture arriving after the photo does not take its place.
    @Test func aFirstPictureIsShownUntilThePhotoReplacesItAndIsNeverKeptAsTheAnswer() throws {
        var state = Fixtures.state()
        let cat = try #require(loads(Fixtures.press(&state, .down)).first)
        var first = picture(4, 3)
        first.provisional = true
        _ = MonitorReducer.reduce(&state, .previewLoaded(cat, .success(first)))
        #expect(state.preview.shown == .success(first))
        // Away and back before the photo arrived: asked for again.
        _ = Fixtures.press(&state, .down)
        #expect(loads(Fixtures.press(&state, .up)) == [cat])
        #expect(state.preview.shown == .success(first), "the first picture shows meanwhile")
        let photo = picture(10, 8)
        _ = MonitorReducer.reduce(&state, .previewLoaded(cat, .success(photo)))
        #expect(state.preview.shown == .success(photo))
        _ = MonitorReducer.reduce(&state, .previewLoaded(cat, .success(first)))
        #expect(state.preview.shown == .success(photo), "a late first picture does not replace the photo")
        _ = Fixtures.press(&state, .down)
        #expect(loads(Fixtures.press(&state, .up)).isEmpty, "the photo is kept")
    }

    /// A photo that says where it was taken says so on the info line: a pin, or "GPS" in ASCII.
    @Test func theInfoLineSaysWhereAPhotoWasTaken() throws {
        var state = Fixtures.state()
        let cat = try #require(loads(Fixtures.press(&state, .down)).first)
        var info = PreviewInfo(format: .jpeg, width: 4000, height: 3000, fileSize: 2_100_000)
        info.location = GeoPoint(latitude: 48.8582, longitude: 2.2945)
        let image = RGBImage(width: 10, height: 8, rgb: [UInt8](repeating: 200, count: 10 * 8 * 3))
        _ = MonitorReducer.reduce(&state, .previewLoaded(cat, .success(Preview(image: image, info: info))))
        let unicode = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor))
        #expect(unicode.text.contains("📍 48.86, 2.29"), "\(unicode.text)")
        let ascii = MonitorView.render(state, theme: Theme(colors: false, glyphs: .ascii))
        #expect(ascii.text.contains("GPS 48.86, 2.29"))
    }

    @Test func pTurnsThePaneOffAndOnAndSmallTerminalsHaveNone() throws {
        var state = Fixtures.state()
        Fixtures.press(&state, .down)
        Fixtures.press(&state, .character("p"))
        #expect(state.preview.wanted == nil && state.message?.text == "preview off")
        #expect(!MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode)).text.contains("Preview"))
        #expect(loads(Fixtures.press(&state, .character("p"))).count == 1)
        // 80x24 keeps the browser, queue, response and log; the preview goes first.
        var small = Fixtures.state(width: 80, height: 24)
        #expect(loads(Fixtures.press(&small, .down)).isEmpty)
        #expect(MonitorLayout(width: 80, height: 24, preview: true).preview.isEmpty)
    }

    @Test func whatCannotBeShownIsSaidAndADialogHidesThePicture() throws {
        var state = Fixtures.state()
        let cat = try #require(loads(Fixtures.press(&state, .down)).first)
        _ = MonitorReducer.reduce(&state, .previewLoaded(cat, .failure(.cannotPreview("Premature end of JPEG file", PreviewInfo(format: .jpeg, fileSize: 9)))))
        let broken = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor))
        #expect(broken.text.contains("cannot preview: Premature end of JPEG file") && broken.picture == nil)
        _ = MonitorReducer.reduce(&state, .previewLoaded(cat, .success(picture(6, 6))))
        Fixtures.press(&state, .character("?"))
        let help = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor))
        #expect(help.picture == nil, "a picture drawn over the help would hide it")
    }

    /// The queue's events name an upload, not its file: the monitor remembers which file it
    /// queued under which name, and previews the selected row's.
    @Test func theSelectedQueueRowIsPreviewedWhenTheQueueHasTheFocus() throws {
        var state = Fixtures.state()
        Fixtures.press(&state, .down, .character(" "), .character(" "))  // space marks and moves on
        let queued = Fixtures.press(&state, .character("u"))
        #expect(
            queued.contains(.enqueue([QueueItem(path: "/photos/cat.jpg", uploadName: "cat.jpg"), QueueItem(path: "/photos/dog.png", uploadName: "dog.png")])))
        let items = Fixtures.enqueued(queued)
        Fixtures.upload(&state, Fixtures.queued(UploadID(1), items[0], totalBytes: 2_100_000))
        Fixtures.upload(&state, Fixtures.queued(UploadID(2), items[1], totalBytes: 512_000))
        let first = try #require(loads(Fixtures.press(&state, .tab)).first)
        #expect(first.path == "/photos/cat.jpg")
        #expect(loads(Fixtures.press(&state, .down)).first?.path == "/photos/dog.png")
    }

    /// With kitty graphics or sixel the picture is decoded to the pane's pixels (at most
    /// `PixelGraphics.maxPixels`) and covers the cells those pixels need, centred.
    @Test func aTerminalWithRealPixelsGetsThePaneInPixels() throws {
        var state = Fixtures.state()
        state.pixelGraphics = PixelGraphics(kind: .kitty, cellWidth: 10, cellHeight: 20)
        let cat = try #require(loads(Fixtures.press(&state, .down)).first)
        #expect(cat.inPixels && cat.cellWidth == 10 && cat.cellHeight == 20)
        let box = cat.pixelBox
        #expect(box.width <= cat.columns * 10 && box.height <= cat.rows * 20 && box.width * box.height <= PixelGraphics.maxPixels)
        let theme = Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor, pixels: state.pixelGraphics)
        var photo = picture(95, 41)
        photo.cells = photo.image.fitted(cat.columns, cat.rows * 2)
        _ = MonitorReducer.reduce(&state, .previewLoaded(cat, .success(photo)))
        // Until the cursor rests there, half blocks: no megabyte of pixels per photo passed.
        let moving = MonitorView.render(state, theme: theme)
        #expect(moving.pixels == nil && moving.picture?.columns == photo.cells?.width)
        _ = MonitorReducer.reduce(&state, .previewRested(cat))
        let canvas = MonitorView.render(state, theme: theme)
        let pixels = try #require(canvas.pixels)
        #expect(canvas.picture == nil)
        #expect(pixels.columns == 10 && pixels.rows == 3 && pixels.width == 95 && pixels.height == 41)
        let pane = MonitorLayout(width: state.width, height: state.height, preview: true).preview
        #expect(pixels.bounds.x > pane.x && pixels.bounds.maxX < pane.maxX && pixels.bounds.y > pane.y && pixels.bounds.maxY < pane.maxY - 1)
        #expect(canvas.text.contains("4000×3000"))
        Fixtures.press(&state, .character("?"))
        #expect(MonitorView.render(state, theme: theme).pixels == nil, "kitty would draw over the help")
    }

    @Test func aPictureInPixelsWaitsForTheCursorToRestAndAStaleRestIsIgnored() throws {
        var state = Fixtures.state()
        state.pixelGraphics = PixelGraphics(kind: .sixel, cellWidth: 8, cellHeight: 16)
        let effects = Fixtures.press(&state, .down)
        let cat = try #require(loads(effects).first)
        #expect(effects.contains(.awaitPreviewRest(cat)))
        let dogEffects = Fixtures.press(&state, .down)
        let dog = try #require(loads(dogEffects).first)
        #expect(dogEffects.contains(.awaitPreviewRest(dog)))
        _ = MonitorReducer.reduce(&state, .previewRested(cat))
        #expect(!state.preview.rested, "the cursor has left the cat")
        _ = MonitorReducer.reduce(&state, .previewRested(dog))
        #expect(state.preview.rested)
        Fixtures.press(&state, .up)
        #expect(!state.preview.rested, "moving on starts the wait again")
        // Half blocks need no wait.
        var cells = Fixtures.state()
        #expect(!Fixtures.press(&cells, .down).contains { if case .awaitPreviewRest = $0 { true } else { false } })
    }

    @Test func aLargePaneInPixelsIsScaledToTheCap() {
        let request = PreviewRequest(path: "/a.jpg", size: 1, columns: 200, rows: 60, cellWidth: 12, cellHeight: 24)
        let box = request.pixelBox
        #expect(box.width * box.height <= PixelGraphics.maxPixels && box.width * box.height > PixelGraphics.maxPixels * 9 / 10)
        #expect(abs(Double(box.width) / Double(box.height) - 2400.0 / 1440.0) < 0.01)
        let cells = PreviewRequest(path: "/a.jpg", size: 1, columns: 200, rows: 60)
        #expect(cells.pixelBox.width == 200 && cells.pixelBox.height == 120 && !cells.inPixels)
    }
}
