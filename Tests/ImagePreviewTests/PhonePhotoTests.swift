import CImageDecode
import Foundation
import ImagePreview
import Testing
import UploadTesting

/// The formats phones and the web save in, made by Debian's own encoders (cwebp, img2webp,
/// heif-enc, avifenc) with metadata written by exiftool, and read back by the preview.
enum PhoneEncoders {
    static func has(_ tool: String) -> Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/" + tool) }
    static let webp = has("cwebp") && has("img2webp")
    static let heif = has("heif-enc") && um_heif_available(nil, 0) != 0
    static let avif = has("avifenc") && um_heif_available(nil, 0) != 0

    /// Runs an encoder; throws with what it said when it fails.
    static func run(_ tool: String, _ arguments: [String]) throws {
        let result = try ToolRun.run("/usr/bin/" + tool, arguments)
        guard result.status == 0 else { throw Failed(tool: tool, status: result.status, output: result.output) }
    }

    struct Failed: Error { let tool: String, status: Int32, output: String }

    /// Camera, date and place, and a quarter turn in the EXIF orientation.
    static func tag(_ path: String) throws {
        try run(
            "exiftool",
            [
                "-q", "-overwrite_original", "-Make=Apple", "-Model=iPhone 15", "-DateTimeOriginal=2024:05:01 10:22:03",
                "-GPSLatitude=48.8584", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945", "-GPSLongitudeRef=E",
                "-Orientation#=6", path,
            ])
    }
}

@Suite struct PhonePhotoTests {
    let directory = TestFiles.makeTemporaryDirectory("phone-photos")

    /// Red on the left half, blue on the right, as a PNG for the encoders to read.
    func halvesPNG(width: Int = 640, height: Int = 480) throws -> String {
        var rgb: [UInt8] = []
        rgb.reserveCapacity(width * height * 3)
        for _ in 0..<height { for x in 0..<width { rgb += x < width / 2 ? [230, 20, 20] : [20, 20, 230] } }
        let path = directory + "/halves-\(width)x\(height).png"
        try PictureWriter.png(RGBImage(width: width, height: height, rgb: rgb), to: path)
        return path
    }

    /// 64x64: the left half opaque red, the right half fully transparent (green beneath).
    func halfTransparentPNG() throws -> String {
        var rgba: [UInt8] = []
        for _ in 0..<64 { for x in 0..<64 { rgba += x < 32 ? [230, 20, 20, 255] : [20, 200, 20, 0] } }
        let png = directory + "/half-transparent.png"
        try PictureWriter.pngRGBA(width: 64, height: 64, rgba: rgba, to: png)
        return png
    }

    /// `path`, made from `halfTransparentPNG`, previewed: red left, the transparent half dark grey.
    func expectTransparentHalfOnGrey(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let preview = try PreviewDecoder.decode(path: path, fitting: 32, 32).get()
        let left = preview.image.pixel(2, 16)
        let right = preview.image.pixel(29, 16)
        #expect(
            same(left, (230, 20, 20), within: 30) && same(right, (48, 48, 48), within: 12), "\(left) \(right)",
            sourceLocation: sourceLocation)
    }

    func expectRedLeftBlueRight(_ image: RGBImage, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let left = image.pixel(1, image.height / 2)
        let right = image.pixel(image.width - 2, image.height / 2)
        #expect(
            same(left, (230, 20, 20), within: 40) && same(right, (20, 20, 230), within: 40), "\(what): \(left) \(right)",
            sourceLocation: sourceLocation)
    }

    @Test(.enabled(if: PhoneEncoders.webp), arguments: [["-q", "90"], ["-lossless"]])
    func aWebPIsDecodedScaledToFitItsBox(options: [String]) throws {
        let webp = directory + "/halves\(options.count == 1 ? "-lossless" : "").webp"
        try PhoneEncoders.run("cwebp", ["-quiet"] + options + [try halvesPNG(), "-o", webp])
        let preview = try PreviewDecoder.decode(path: webp, fitting: 40, 40).get()
        #expect(preview.image.width == 40 && preview.image.height == 30)
        expectRedLeftBlueRight(preview.image, "WebP \(options)")
        #expect(preview.info == PreviewInfo(format: .webp, width: 640, height: 480, fileSize: TestFiles.size(of: webp)))
    }

    @Test(.enabled(if: PhoneEncoders.webp))
    func aWebPsEXIFTurnsItAndNamesCameraDateAndPlace() throws {
        let webp = directory + "/tagged.webp"
        try PhoneEncoders.run("cwebp", ["-quiet", "-q", "90", try halvesPNG(), "-o", webp])
        try PhoneEncoders.tag(webp)
        let preview = try PreviewDecoder.decode(path: webp, fitting: 40, 40).get()
        // A quarter turn clockwise: the left (red) half is now on top.
        #expect(preview.image.width == 30 && preview.image.height == 40)
        let top = preview.image.pixel(preview.image.width / 2, 1)
        let bottom = preview.image.pixel(preview.image.width / 2, preview.image.height - 2)
        #expect(same(top, (230, 20, 20), within: 40) && same(bottom, (20, 20, 230), within: 40), "\(top) \(bottom)")
        #expect(preview.info.width == 480 && preview.info.height == 640)
        #expect(preview.info.camera == "Apple iPhone 15" && preview.info.dateTaken == "2024:05:01 10:22:03")
        #expect(preview.info.location.map { abs($0.latitude - 48.8584) < 0.001 && abs($0.longitude - 2.2945) < 0.001 } == true)
    }

    @Test(.enabled(if: PhoneEncoders.webp))
    func aTransparentWebPLiesOnDarkGreyAndAnAnimationShowsItsFirstFrame() throws {
        let webp = directory + "/alpha.webp"
        try PhoneEncoders.run("cwebp", ["-quiet", "-q", "90", "-exact", try halfTransparentPNG(), "-o", webp])
        try expectTransparentHalfOnGrey(webp)

        // Two frames: the halves, then all green. The first is what a still preview shows.
        var green: [UInt8] = []
        for _ in 0..<(480 * 640) { green += [20, 200, 20] }
        let second = directory + "/green.png"
        try PictureWriter.png(RGBImage(width: 640, height: 480, rgb: green), to: second)
        let animated = directory + "/animated.webp"
        try PhoneEncoders.run("img2webp", ["-loop", "0", "-lossy", "-d", "500", try halvesPNG(), second, "-o", animated])
        let first = try PreviewDecoder.decode(path: animated, fitting: 40, 40).get()
        expectRedLeftBlueRight(first.image, "animated WebP")
        #expect(first.info.format == .webp && first.info.width == 640 && first.info.height == 480)
    }

    @Test(.enabled(if: PhoneEncoders.heif))
    func aHEICIsDecodedWithItsCameraDateAndPlaceAndNotTurnedTwice() throws {
        let heic = directory + "/photo.heic"
        try PhoneEncoders.run("heif-enc", ["-q", "90", try halvesPNG(), "-o", heic])
        let plain = try PreviewDecoder.decode(path: heic, fitting: 40, 40).get()
        #expect(plain.image.width == 40 && plain.image.height == 30)
        expectRedLeftBlueRight(plain.image, "HEIC")
        #expect(plain.info == PreviewInfo(format: .heic, width: 640, height: 480, fileSize: TestFiles.size(of: heic)))

        // HEIF turns its pictures with its own properties (irot/imir), which libheif applies; an
        // EXIF orientation inside is informative only and must not turn the picture again.
        try PhoneEncoders.tag(heic)
        let tagged = try PreviewDecoder.decode(path: heic, fitting: 40, 40).get()
        #expect(tagged.image.width == 40 && tagged.image.height == 30)
        expectRedLeftBlueRight(tagged.image, "HEIC with an EXIF orientation")
        #expect(tagged.info.width == 640 && tagged.info.height == 480)
        #expect(tagged.info.camera == "Apple iPhone 15" && tagged.info.dateTaken == "2024:05:01 10:22:03")
        #expect(tagged.info.location.map { abs($0.latitude - 48.8584) < 0.001 && abs($0.longitude - 2.2945) < 0.001 } == true)
    }

    @Test(.enabled(if: PhoneEncoders.heif))
    func aHEICsThumbnailServesASmallBoxAndTheFullPictureALargeOne() throws {
        let heic = directory + "/thumbnailed.heic"
        try PhoneEncoders.run("heif-enc", ["-q", "90", "-t", "160", try halvesPNG(width: 1280, height: 960), "-o", heic])
        let small = try PreviewDecoder.decode(path: heic, fitting: 80, 80).get()
        #expect(small.image.width == 80 && small.image.height == 60)
        expectRedLeftBlueRight(small.image, "from the thumbnail")
        // The size said is the photo's, not the thumbnail's.
        #expect(small.info.width == 1280 && small.info.height == 960)
        let large = try PreviewDecoder.decode(path: heic, fitting: 400, 400).get()
        #expect(large.image.width == 400 && large.image.height == 300)
        expectRedLeftBlueRight(large.image, "from the full picture")
        // For the large box the thumbnail is the first picture, shown while the photo decodes;
        // for the small one there is none (the decode takes the thumbnail itself).
        let first = try #require(PreviewDecoder.firstPicture(path: heic, fitting: 400, 400))
        #expect(first.provisional && first.image.width == 160 && first.image.height == 120)
        expectRedLeftBlueRight(first.image, "the first picture")
        #expect(first.info.width == 1280 && first.info.height == 960)
        #expect(PreviewDecoder.firstPicture(path: heic, fitting: 80, 80) == nil)
    }

    @Test(.enabled(if: PhoneEncoders.avif))
    func anAVIFIsDecoded() throws {
        let avif = directory + "/photo.avif"
        try PhoneEncoders.run("avifenc", ["-s", "10", try halvesPNG(), avif])
        try PhoneEncoders.tag(avif)
        let preview = try PreviewDecoder.decode(path: avif, fitting: 40, 40).get()
        #expect(preview.image.width == 40 && preview.image.height == 30)
        expectRedLeftBlueRight(preview.image, "AVIF")
        #expect(preview.info.format == .avif && preview.info.width == 640 && preview.info.height == 480)
        #expect(preview.info.camera == "Apple iPhone 15")
    }

    /// An AVIF goes through libavif where it is installed (libheif otherwise): its transparent
    /// half on dark grey, and its size checked before a pixel is decoded.
    @Test(.enabled(if: PhoneEncoders.avif && um_avif_available() != 0))
    func anAVIFThroughLibavifLiesOnDarkGreyAndIsRefusedBeyondTheLimit() throws {
        let avif = directory + "/alpha.avif"
        try PhoneEncoders.run("avifenc", ["-s", "10", "-l", try halfTransparentPNG(), avif])
        try expectTransparentHalfOnGrey(avif)

        let photo = directory + "/limit.avif"
        try PhoneEncoders.run("avifenc", ["-s", "10", try halvesPNG(), photo])
        var image = um_image()
        defer { um_image_free(&image) }
        #expect(um_decode_avif(photo, 40, 40, 1000, nil, &image) != 0)
        let why = withUnsafeBytes(of: image.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #expect(why == "an AVIF picture of 640 x 480 is too large to preview")
        let flag = CancelFlag()
        flag.cancel()
        #expect(PreviewDecoder.decode(path: photo, fitting: 40, 40, cancel: flag) == .failure(.cancelled))
    }

    /// HEIF's own transforms stand the picture as it is meant to be seen: `irot` (a quarter turn
    /// anticlockwise), `imir` (mirrored left to right) and `clap` (the clean aperture, a crop),
    /// each written by avifenc into a picture red on its left half and blue on its right.
    @Test(.enabled(if: PhoneEncoders.avif))
    func anAVIFsRotationMirrorAndCropAreApplied() throws {
        let png = try halvesPNG()
        func decoded(_ options: [String], _ name: String) throws -> RGBImage {
            let avif = directory + "/\(name).avif"
            try PhoneEncoders.run("avifenc", ["-s", "10"] + options + [png, avif])
            return try PreviewDecoder.decode(path: avif, fitting: 64, 64).get().image
        }
        let turned = try decoded(["--irot", "1"], "irot")
        #expect(turned.width == 48 && turned.height == 64, "a quarter turn stands it upright: \(turned.width)x\(turned.height)")
        let top = turned.pixel(turned.width / 2, 1)
        let bottom = turned.pixel(turned.width / 2, turned.height - 2)
        #expect(
            same(top, (20, 20, 230), within: 40) && same(bottom, (230, 20, 20), within: 40),
            "turned anticlockwise, the right (blue) half is on top: \(top) \(bottom)")
        let mirrored = try decoded(["--imir", "1"], "imir")
        let left = mirrored.pixel(1, mirrored.height / 2)
        let right = mirrored.pixel(mirrored.width - 2, mirrored.height / 2)
        #expect(same(left, (20, 20, 230), within: 40) && same(right, (230, 20, 20), within: 40), "mirrored: \(left) \(right)")
        // Top and bottom exchanged (mode 0), on a picture red above and blue below.
        var rows: [UInt8] = []
        for y in 0..<480 { for _ in 0..<640 { rows += y < 240 ? [230, 20, 20] : [20, 20, 230] } }
        let stacked = directory + "/stacked.png"
        let flipped = directory + "/flip.avif"
        try PictureWriter.png(RGBImage(width: 640, height: 480, rgb: rows), to: stacked)
        try PhoneEncoders.run("avifenc", ["-s", "10", "--imir", "0", stacked, flipped])
        let upsideDown = try PreviewDecoder.decode(path: flipped, fitting: 64, 64).get().image
        let above = upsideDown.pixel(upsideDown.width / 2, 1)
        let below = upsideDown.pixel(upsideDown.width / 2, upsideDown.height - 2)
        #expect(same(above, (20, 20, 230), within: 40) && same(below, (230, 20, 20), within: 40), "flipped: \(above) \(below)")
        let cropped = try decoded(["--crop", "0,0,320,480"], "clap")
        #expect(cropped.width == 43 && cropped.height == 64, "the clean aperture, 320x480: \(cropped.width)x\(cropped.height)")
        let inside = cropped.pixel(cropped.width - 2, cropped.height / 2)
        #expect(same(inside, (230, 20, 20), within: 40), "only the red half is inside it: \(inside)")
    }

    /// Cut short, damaged, or of a kind the decoder will not hold whole: a reason, no picture,
    /// no crash.
    @Test(.enabled(if: PhoneEncoders.webp && PhoneEncoders.heif && PhoneEncoders.avif))
    func cutAndDamagedPhonePhotosSayWhy() throws {
        let png = try halvesPNG()
        var files: [String] = []
        let webp = directory + "/whole.webp"
        let heic = directory + "/whole.heic"
        let avif = directory + "/whole.avif"
        try PhoneEncoders.run("cwebp", ["-quiet", "-q", "90", png, "-o", webp])
        try PhoneEncoders.run("heif-enc", ["-q", "90", png, "-o", heic])
        try PhoneEncoders.run("avifenc", ["-s", "10", png, avif])
        for source in [webp, heic, avif] {
            let bytes = try #require(FileManager.default.contents(atPath: source))
            for (name, cut) in [("half", bytes.count / 2), ("head", 40), ("most", bytes.count - 20)] {
                let path = source + "-\(name)"
                _ = FileManager.default.createFile(atPath: path, contents: bytes.prefix(cut))
                files.append(path)
            }
            var damaged = bytes
            for i in stride(from: 64, to: damaged.count, by: 7) { damaged[i] ^= 0xA5 }
            let path = source + "-damaged"
            _ = FileManager.default.createFile(atPath: path, contents: damaged)
            files.append(path)
        }
        for path in files {
            switch PreviewDecoder.decode(path: path, fitting: 40, 40) {
            case .failure(.cannotPreview(let why, _)):
                #expect(!why.isEmpty)
            case .failure(.noPreview):
                break  // too little left to tell the format: an honest "no preview"
            case .success(let preview):
                // A decoder may conceal damage in the picture's data; it must still be a picture.
                #expect(preview.image.width > 0 && preview.image.rgb.count == preview.image.width * preview.image.height * 3, "\(path)")
            case .failure(let other):
                Issue.record("\(path): \(other)")
            }
        }
        // Held whole while decoding (lossless): refused beyond the limit given, with the size.
        let lossless = directory + "/lossless.webp"
        try PhoneEncoders.run("cwebp", ["-quiet", "-lossless", png, "-o", lossless])
        var image = um_image()
        defer { um_image_free(&image) }
        #expect(um_decode_webp(lossless, 40, 40, 1000, nil, &image) != 0)
        let why = withUnsafeBytes(of: image.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #expect(why == "a lossless WebP of 640 x 480 is too large to preview")
    }

    @Test(.enabled(if: PhoneEncoders.webp))
    func aCancelledWebPStopsWithoutAPicture() throws {
        let webp = directory + "/cancelled.webp"
        try PhoneEncoders.run("cwebp", ["-quiet", "-q", "90", try halvesPNG(), "-o", webp])
        let flag = CancelFlag()
        flag.cancel()
        #expect(PreviewDecoder.decode(path: webp, fitting: 40, 40, cancel: flag) == .failure(.cancelled))
    }

    /// A phone JPEG's EXIF thumbnail: the first picture, at once and upright, marked as such;
    /// the photo itself is what `decode` gives.
    @Test func aJPEGsEXIFThumbnailIsTheFirstPictureAndThePhotoReplacesIt() throws {
        let thumbnailPath = directory + "/thumbnail.jpg"
        var green: [UInt8] = []
        for _ in 0..<(160 * 120) { green += [20, 200, 20] }
        try PictureWriter.jpeg(RGBImage(width: 160, height: 120, rgb: green), to: thumbnailPath, quality: 80)
        let thumbnail = Array(try Data(contentsOf: URL(fileURLWithPath: thumbnailPath)))
        let exif = PictureWriter.exif(thumbnail: thumbnail, make: "Apple", model: "iPhone 8", orientation: 6)
        var rgb: [UInt8] = []
        for _ in 0..<480 { for x in 0..<640 { rgb += x < 320 ? [230, 20, 20] : [20, 20, 230] } }
        let path = directory + "/phone.jpg"
        try PictureWriter.jpeg(RGBImage(width: 640, height: 480, rgb: rgb), to: path, exif: exif)

        #expect(ExifSummary.jpegThumbnail(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).map(Array.init) == thumbnail)
        let first = try #require(PreviewDecoder.firstPicture(path: path, fitting: 40, 40))
        #expect(first.provisional)
        // Turned a quarter (orientation 6) as the photo is: 30 wide, 40 high.
        #expect(first.image.width == 30 && first.image.height == 40)
        #expect(same(first.image.pixel(15, 20), (20, 200, 20), within: 30))
        #expect(first.info.width == 480 && first.info.height == 640 && first.info.camera == "Apple iPhone 8")
        // The decode hands the same first picture over before the photo, from its one read.
        var handed: [Preview] = []
        let photo = try PreviewDecoder.decode(path: path, fitting: 40, 40) { handed.append($0) }.get()
        #expect(handed == [first])
        #expect(!photo.provisional && photo.image.width == 30 && photo.image.height == 40)
        // Red (the left half) is on top once turned.
        #expect(same(photo.image.pixel(15, 2), (230, 20, 20), within: 40))
        // No thumbnail, no first picture; a thumbnail that is not a JPEG, none either.
        let plain = directory + "/plain.jpg"
        try PictureWriter.jpeg(RGBImage(width: 64, height: 48, rgb: [UInt8](repeating: 90, count: 64 * 48 * 3)), to: plain)
        #expect(PreviewDecoder.firstPicture(path: plain, fitting: 40, 40) == nil)
        let bogus = directory + "/bogus.jpg"
        let notJPEG = [UInt8](repeating: 7, count: 200)
        try PictureWriter.jpeg(
            RGBImage(width: 64, height: 48, rgb: [UInt8](repeating: 90, count: 64 * 48 * 3)), to: bogus,
            exif: PictureWriter.exif(thumbnail: notJPEG, bigEndian: true))
        #expect(PreviewDecoder.firstPicture(path: bogus, fitting: 40, 40) == nil)
    }

    /// A place said only in XMP (as exiftool writes it into a WebP chunk and a HEIF item) is on
    /// the info line too.
    @Test(.enabled(if: PhoneEncoders.webp && PhoneEncoders.heif && PhoneEncoders.has("exiftool")))
    func aPlaceInXMPAloneIsSaid() throws {
        let png = try halvesPNG()
        let webp = directory + "/xmp-only.webp"
        let heic = directory + "/xmp-only.heic"
        try PhoneEncoders.run("cwebp", ["-quiet", "-q", "80", png, "-o", webp])
        try PhoneEncoders.run("heif-enc", ["-q", "80", png, "-o", heic])
        for path in [webp, heic] {
            try PhoneEncoders.run(
                "exiftool",
                [
                    "-q", "-overwrite_original", "-XMP:GPSLatitude=48.8584", "-XMP:GPSLongitude=2.2945",
                    "-XMP:GPSLatitudeRef=N", "-XMP:GPSLongitudeRef=E", path,
                ])
            let info = try PreviewDecoder.decode(path: path, fitting: 40, 40).get().info
            #expect(info.location.map { abs($0.latitude - 48.8584) < 0.001 && abs($0.longitude - 2.2945) < 0.001 } == true, "\(path): \(info)")
        }
    }

    /// A GIF shows its first frame on its canvas: interlaced or not, transparent colour and
    /// what the frame does not cover on dark grey; an animation's later frames are not read.
    @Test(arguments: [false, true])
    func aGIFShowsItsFirstFrame(interlaced: Bool) throws {
        let palette: [(UInt8, UInt8, UInt8)] = [(230, 20, 20), (20, 20, 230), (20, 200, 20), (0, 0, 0)]
        var halves: [UInt8] = []
        for _ in 0..<60 { for x in 0..<80 { halves.append(x < 40 ? 0 : 1) } }
        let green = [UInt8](repeating: 2, count: 80 * 60)
        let bytes = GIFWriter.gif(
            width: 80, height: 60, palette: palette,
            frames: [
                GIFWriter.Frame(width: 80, height: 60, indexes: halves, interlaced: interlaced),
                GIFWriter.Frame(width: 80, height: 60, indexes: green),
            ])
        let path = directory + "/animated-\(interlaced).gif"
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let preview = try PreviewDecoder.decode(path: path, fitting: 40, 40).get()
        #expect(preview.image.width == 40 && preview.image.height == 30)
        expectRedLeftBlueRight(preview.image, "GIF")
        #expect(preview.info.format == .gif && preview.info.width == 80 && preview.info.height == 60)

        // A frame smaller than its canvas, with a transparent colour (3) on its right half.
        var part: [UInt8] = []
        for _ in 0..<30 { for x in 0..<40 { part.append(x < 20 ? 0 : 3) } }
        let placed = directory + "/placed-\(interlaced).gif"
        _ = FileManager.default.createFile(
            atPath: placed,
            contents: Data(
                GIFWriter.gif(
                    width: 80, height: 60, palette: palette,
                    frames: [
                        GIFWriter.Frame(width: 40, height: 30, indexes: part, left: 20, top: 15, interlaced: interlaced, transparent: 3)
                    ])))
        let image = try PreviewDecoder.decode(path: placed, fitting: 80, 60).get().image
        #expect(same(image.pixel(30, 30), (230, 20, 20)), "inside the frame: \(image.pixel(30, 30))")
        #expect(same(image.pixel(50, 30), (48, 48, 48)), "transparent: \(image.pixel(50, 30))")
        #expect(same(image.pixel(5, 5), (48, 48, 48)), "outside the frame: \(image.pixel(5, 5))")
        // Cut in its picture data: a reason.
        let cut = directory + "/cut-\(interlaced).gif"
        _ = FileManager.default.createFile(atPath: cut, contents: Data(bytes.prefix(900)))
        guard case .failure(.cannotPreview(let why, _)) = PreviewDecoder.decode(path: cut, fitting: 40, 40) else {
            Issue.record("a cut GIF was shown")
            return
        }
        #expect(why.contains("cut short") || why.contains("damaged"), "\(why)")
    }
}

/// A HEIC's picture is decoded on every core (libde265's worker threads, through a decoder this
/// process registers with libheif) and comes out pixel for pixel as libheif's own decoder gives
/// it in another process (heif-convert, one thread).
@Suite(.enabled(if: PhoneEncoders.heif && PhoneEncoders.has("heif-convert"), "needs heif-enc and heif-convert (libheif-examples)"))
struct HEVCThreadsTests {
    let directory = TestFiles.makeTemporaryDirectory("hevc-threads")

    @Test func everyCoreDecodesTheSamePixelsAsLibheifItself() throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(Int(um_heif_decode_threads()) == (cores < 2 ? 1 : min(cores, 8)))
        // Detail everywhere (so a row decoded out of turn would show), wavefront-coded by x265.
        let (width, height) = (1280, 960)
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        var seed: UInt32 = 7
        for i in rgb.indices {
            seed = seed &* 1_103_515_245 &+ 12345
            rgb[i] = UInt8(truncatingIfNeeded: (i / 3 % width) / 5 + Int(seed >> 27))
        }
        let png = directory + "/detail.png"
        let heic = directory + "/detail.heic"
        let back = directory + "/back.png"
        try PictureWriter.png(RGBImage(width: width, height: height, rgb: rgb), to: png)
        try PhoneEncoders.run("heif-enc", ["-q", "70", "-o", heic, png])
        try PhoneEncoders.run("heif-convert", [heic, back])
        func decoded(_ decode: (UnsafeMutablePointer<um_image>) -> Int32) -> [UInt8]? {
            var image = um_image()
            image.fine = 1
            defer { um_image_free(&image) }
            guard decode(&image) == 0, let pixels = image.rgb, image.width == Int32(width), image.height == Int32(height) else { return nil }
            return Array(UnsafeBufferPointer(start: pixels, count: width * height * 3))
        }
        let ours = try #require(decoded { um_decode_heif(heic, Int32(width), Int32(height), 1 << 30, nil, $0) })
        let theirs = try #require(decoded { um_decode_png(back, Int32(width), Int32(height), 1 << 30, nil, $0) })
        #expect(ours == theirs, "\(zip(ours, theirs).filter { $0 != $1 }.count) of \(ours.count) samples differ")
    }
}
