import CImageDecode
import Foundation
import ImagePreview
import Testing
import TerminalCanvas
import UploadCore
import UploadTesting

let red: (UInt8, UInt8, UInt8) = (255, 0, 0)
let green: (UInt8, UInt8, UInt8) = (0, 255, 0)
let blue: (UInt8, UInt8, UInt8) = (0, 0, 255)
let white: (UInt8, UInt8, UInt8) = (255, 255, 255)

/// A picture whose corners have distinct colours: red, green / blue, white.
func corners(width: Int = 3, height: Int = 2) -> RGBImage {
    var rgb: [UInt8] = []
    for y in 0..<height {
        for x in 0..<width {
            let c = x < width / 2 ? (y < height / 2 ? red : blue) : (y < height / 2 ? green : white)
            rgb += [c.0, c.1, c.2]
        }
    }
    return RGBImage(width: width, height: height, rgb: rgb)
}

func same(_ a: (UInt8, UInt8, UInt8), _ b: (UInt8, UInt8, UInt8), within tolerance: Int = 0) -> Bool {
    abs(Int(a.0) - Int(b.0)) <= tolerance && abs(Int(a.1) - Int(b.1)) <= tolerance && abs(Int(a.2) - Int(b.2)) <= tolerance
}

@Suite struct OrientationTests {
    /// Where the stored picture's corners end up once turned upright, for each EXIF value:
    /// top-left, top-right, bottom-left, bottom-right.
    @Test(
        arguments: [
            (1, [red, green, blue, white]), (2, [green, red, white, blue]), (3, [white, blue, green, red]),
            (4, [blue, white, red, green]), (5, [red, blue, green, white]), (6, [blue, red, white, green]),
            (7, [white, green, blue, red]), (8, [green, white, red, blue]),
        ] as [(Int, [(UInt8, UInt8, UInt8)])])
    func eachOrientationTurnsThePictureUpright(value: Int, expected: [(UInt8, UInt8, UInt8)]) throws {
        let orientation = try #require(Orientation(rawValue: value))
        let upright = corners().upright(orientation)
        #expect(upright.width == (orientation.swapsSides ? 2 : 3) && upright.height == (orientation.swapsSides ? 3 : 2))
        let found = [
            upright.pixel(0, 0), upright.pixel(upright.width - 1, 0),
            upright.pixel(0, upright.height - 1), upright.pixel(upright.width - 1, upright.height - 1),
        ]
        for (corner, (got, want)) in zip(["top-left", "top-right", "bottom-left", "bottom-right"], zip(found, expected)) {
            #expect(same(got, want), "orientation \(value), \(corner): \(got) instead of \(want)")
        }
    }
}

@Suite struct ExifTests {
    func jpegHead(app1 exif: [UInt8], jfifFirst: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        if jfifFirst { bytes += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0] }
        bytes += [0xFF, 0xE1, UInt8((exif.count + 2) >> 8), UInt8((exif.count + 2) & 0xFF)] + exif
        return bytes + [0xFF, 0xDA, 0x00, 0x02]
    }

    @Test(arguments: [false, true])
    func readsOrientationCameraAndDateInEitherByteOrder(bigEndian: Bool) throws {
        let exif = PictureWriter.exif(orientation: 6, bigEndian: bigEndian, make: "Canon", model: "Canon EOS R5", dateTaken: "2024:05:01 10:22:03")
        let summary = try #require(ExifSummary.fromJPEG(jpegHead(app1: exif)))
        #expect(summary == ExifSummary(orientation: .right, dateTaken: "2024:05:01 10:22:03", camera: "Canon EOS R5"))
    }

    @Test func aMakeThatTheModelDoesNotRepeatIsKept() throws {
        let exif = PictureWriter.exif(orientation: 1, bigEndian: false, make: "FUJIFILM", model: "X-T4")
        #expect(ExifSummary.fromJPEG(jpegHead(app1: exif, jfifFirst: false))?.camera == "FUJIFILM X-T4")
    }

    /// Damaged segments give what could be read, or nothing; never a crash.
    @Test func malformedSegmentsAreSurvived() {
        let good = PictureWriter.exif(orientation: 8, bigEndian: true, make: "Make", model: "Model", dateTaken: "2020:01:01 00:00:00")
        // Cut anywhere: no crash, and never an orientation that was not there.
        for cut in 0..<good.count {
            let summary = ExifSummary.fromJPEG(jpegHead(app1: Array(good[0..<cut])))
            #expect(summary == nil || summary?.orientation == .left || summary?.orientation == .up)
        }
        // A segment length past the end, a wrong byte-order mark, an IFD offset out of range,
        // a huge entry count, an ASCII value pointing outside.
        #expect(ExifSummary.fromJPEG([0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF] + Array("Exif\0\0".utf8)) == nil)
        #expect(ExifSummary.fromTIFF(Array("XX\0*\0\0\0\u{8}".utf8)) == nil)
        #expect(ExifSummary.fromTIFF([0x49, 0x49, 42, 0, 0xFF, 0xFF, 0xFF, 0x7F]) == ExifSummary())
        #expect(ExifSummary.fromTIFF([0x49, 0x49, 42, 0, 8, 0, 0, 0, 0xFF, 0xFF]) == ExifSummary())
        var pointingOut = [UInt8]([0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x10, 0x01, 2, 0, 20, 0, 0, 0, 0xF0, 0xFF, 0, 0, 0, 0, 0, 0])
        #expect(ExifSummary.fromTIFF(pointingOut)?.camera == nil)
        pointingOut[14] = 0xFF
        pointingOut[15] = 0xFF
        pointingOut[16] = 0xFF
        pointingOut[17] = 0xFF
        #expect(ExifSummary.fromTIFF(pointingOut)?.camera == nil)
        // Not a JPEG; a JPEG without EXIF.
        #expect(ExifSummary.fromJPEG(Array("GIF89a".utf8)) == nil)
        #expect(ExifSummary.fromJPEG([0xFF, 0xD8, 0xFF, 0xDA, 0, 2]) == nil)
    }

    /// A PNG's eXIf chunk, written by libpng (`png_set_eXIf_1`), in both byte orders; cut
    /// anywhere it is survived; a chunk length past the end, or none before IEND, is no EXIF.
    @Test(arguments: [false, true])
    func aPNGCarriesItsEXIFInAnEXIfChunk(bigEndian: Bool) throws {
        let path = TestFiles.makeTemporaryDirectory("png-exif") + "/exif.png"
        try PictureWriter.png(
            corners(), to: path,
            exif: PictureWriter.exif(
                orientation: 8, bigEndian: bigEndian, make: "Apple", model: "iPhone 15 Pro", dateTaken: "2025:02:03 04:05:06"))
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(String(decoding: bytes[33 + 4..<33 + 8], as: UTF8.self) == "eXIf", "libpng puts it after IHDR")
        let summary = try #require(ExifSummary.fromPNG(bytes))
        #expect(summary == ExifSummary(orientation: .left, dateTaken: "2025:02:03 04:05:06", camera: "Apple iPhone 15 Pro"))
        for cut in 0..<bytes.count {
            let partial = ExifSummary.fromPNG(Array(bytes[0..<cut]))
            #expect(partial == nil || partial?.orientation == .left || partial?.orientation == .up)
        }
        var huge = bytes
        huge.replaceSubrange(33..<37, with: [0x7F, 0xFF, 0xFF, 0xFF])
        #expect(ExifSummary.fromPNG(huge) == nil)
        try PictureWriter.png(corners(), to: path)
        #expect(ExifSummary.fromPNG(Array(try Data(contentsOf: URL(fileURLWithPath: path)))) == nil)
    }
}

@Suite struct DecodeTests {
    let directory = TestFiles.makeTemporaryDirectory("preview")

    /// Red on the left half, blue on the right.
    func halves(width: Int, height: Int) -> RGBImage {
        var rgb: [UInt8] = []
        rgb.reserveCapacity(width * height * 3)
        for _ in 0..<height { for x in 0..<width { rgb += x < width / 2 ? [230, 20, 20] : [20, 20, 230] } }
        return RGBImage(width: width, height: height, rgb: rgb)
    }

    func leftAndRight(_ image: RGBImage) -> ((UInt8, UInt8, UInt8), (UInt8, UInt8, UInt8)) {
        (image.pixel(1, image.height / 2), image.pixel(image.width - 2, image.height / 2))
    }

    @Test func aJPEGIsDecodedScaledToFitItsBox() throws {
        let path = directory + "/halves.jpg"
        try PictureWriter.jpeg(
            halves(width: 640, height: 480), to: path,
            exif: PictureWriter.exif(
                orientation: 1, bigEndian: false, make: "Nikon", model: "Z 6", dateTaken: "2023:08:09 18:00:00"))
        let preview = try PreviewDecoder.decode(path: path, fitting: 40, 40).get()
        #expect(preview.image.width == 40 && preview.image.height == 30)
        let (left, right) = leftAndRight(preview.image)
        #expect(same(left, (230, 20, 20), within: 24) && same(right, (20, 20, 230), within: 24), "\(left) \(right)")
        #expect(
            preview.info
                == PreviewInfo(
                    format: .jpeg, width: 640, height: 480, dateTaken: "2023:08:09 18:00:00",
                    camera: "Nikon Z 6", fileSize: TestFiles.size(of: path)))
    }

    @Test func aSidewaysJPEGIsShownUpright() throws {
        let path = directory + "/sideways.jpg"
        // Stored 640 x 480 with orientation 6: shown 480 x 640, the stored left half on top.
        try PictureWriter.jpeg(halves(width: 640, height: 480), to: path, exif: PictureWriter.exif(orientation: 6, bigEndian: true))
        let preview = try PreviewDecoder.decode(path: path, fitting: 40, 40).get()
        #expect(preview.image.width == 30 && preview.image.height == 40)
        #expect(preview.info.width == 480 && preview.info.height == 640)
        #expect(same(preview.image.pixel(15, 2), (230, 20, 20), within: 24) && same(preview.image.pixel(15, 37), (20, 20, 230), within: 24))
    }

    @Test func aPictureIsFittedByAveraging() {
        // 6x2: red, red, red | blue, blue, blue; into 2x2 → 2x1 (aspect kept), one colour a side.
        let image = halves(width: 6, height: 2)
        let small = image.fitted(2, 2)
        #expect(small.width == 2 && small.height == 1)
        #expect(same(small.pixel(0, 0), (230, 20, 20)) && same(small.pixel(1, 0), (20, 20, 230)))
        // Averages: a 2x1 of black and white is one grey pixel.
        #expect(RGBImage(width: 2, height: 1, rgb: [0, 0, 0, 255, 255, 255]).fitted(1, 1).pixel(0, 0) == (127, 127, 127))
        #expect(image.fitted(10, 10) == image, "a picture that fits stays as it is")
    }

    @Test func aSidewaysPNGIsShownUpright() throws {
        let path = directory + "/sideways.png"
        // Stored 300 x 100 with orientation 6 in its eXIf chunk: shown 100 x 300, left half on top.
        try PictureWriter.png(halves(width: 300, height: 100), to: path, exif: PictureWriter.exif(orientation: 6, bigEndian: false, model: "Pixel 8"))
        let preview = try PreviewDecoder.decode(path: path, fitting: 60, 60).get()
        #expect(preview.image.width == 20 && preview.image.height == 60)
        #expect(preview.info.width == 100 && preview.info.height == 300 && preview.info.camera == "Pixel 8")
        #expect(same(preview.image.pixel(10, 2), (230, 20, 20)) && same(preview.image.pixel(10, 57), (20, 20, 230)))
    }

    @Test(arguments: [false, true])
    func aPNGIsDecodedScaledToFitItsBox(interlaced: Bool) throws {
        let path = directory + "/halves.png"
        try PictureWriter.png(halves(width: 300, height: 100), to: path, interlaced: interlaced)
        let preview = try PreviewDecoder.decode(path: path, fitting: 60, 60).get()
        #expect(preview.image.width == 60 && preview.image.height == 20)
        let (left, right) = leftAndRight(preview.image)
        #expect(same(left, (230, 20, 20)) && same(right, (20, 20, 230)), "\(left) \(right)")
        #expect(preview.info.format == .png && preview.info.width == 300 && preview.info.height == 100)
    }

    /// uploadmon's one PNG writer, read back by libpng pixel for pixel: every filter (the
    /// picture varies in both directions), interlaced or not, compressed or stored.
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func thePNGWriterIsReadBackExactly(interlaced: Bool, compressed: Bool) throws {
        let (width, height) = (37, 23)
        var rgb: [UInt8] = []
        var noise: UInt32 = 12345
        for y in 0..<height {
            for x in 0..<width {
                noise = noise &* 1_103_515_245 &+ 12345
                rgb += [UInt8(truncatingIfNeeded: x * 7 + y), UInt8(truncatingIfNeeded: y * 11), UInt8(truncatingIfNeeded: noise >> 16)]
            }
        }
        let path = directory + "/exact-\(interlaced)-\(compressed).png"
        if compressed {
            try PictureWriter.png(RGBImage(width: width, height: height, rgb: rgb), to: path, interlaced: interlaced)
        } else {
            let bytes = PNGEncoder.encode(rgb: rgb, width: width, height: height, options: .init(interlaced: interlaced))
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        }
        let preview = try PreviewDecoder.decode(path: path, fitting: width, height).get()
        #expect(preview.image.width == width && preview.image.height == height)
        #expect(preview.image.rgb == rgb)
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        #expect(compressed ? size < rgb.count : size > rgb.count, "\(size) bytes for \(rgb.count) of pixels")
    }

    @Test func truncatedAndCorruptFilesSayWhyWithoutAPicture() throws {
        let jpeg = directory + "/whole.jpg"
        try PictureWriter.jpeg(halves(width: 320, height: 240), to: jpeg)
        let bytes = try #require(FileManager.default.contents(atPath: jpeg))
        let cut = directory + "/cut.jpg"
        _ = FileManager.default.createFile(atPath: cut, contents: bytes.prefix(bytes.count / 2))
        guard case .failure(.cannotPreview(let why, _)) = PreviewDecoder.decode(path: cut, fitting: 40, 40) else {
            Issue.record("a truncated JPEG was shown")
            return
        }
        #expect(why.lowercased().contains("premature end"), "\(why)")

        let png = directory + "/broken.png"
        try PictureWriter.png(halves(width: 64, height: 64), to: png)
        var damaged = try #require(FileManager.default.contents(atPath: png))
        for i in 60..<min(damaged.count, 120) { damaged[i] ^= 0x5A }
        _ = FileManager.default.createFile(atPath: png, contents: damaged)
        guard case .failure(.cannotPreview(let pngWhy, _)) = PreviewDecoder.decode(path: png, fitting: 40, 40) else {
            Issue.record("a corrupt PNG was shown")
            return
        }
        #expect(!pngWhy.isEmpty)

        let text = directory + "/notes.txt"
        _ = FileManager.default.createFile(atPath: text, contents: Data("hello".utf8))
        #expect(PreviewDecoder.decode(path: text, fitting: 40, 40) == .failure(.cannotPreview("not a picture format known here", PreviewInfo(fileSize: 5))))
    }

    @Test func otherFormatsGetTheirSizeAndAnHonestNoPreview() throws {
        let bmp = directory + "/a.bmp"
        let header = Array("BM".utf8) + [UInt8](repeating: 0, count: 16) + [0x40, 0x01, 0, 0, 0xF0, 0, 0, 0] + [UInt8](repeating: 0, count: 28)
        _ = FileManager.default.createFile(atPath: bmp, contents: Data(header))
        guard case .failure(.noPreview(let info)) = PreviewDecoder.decode(path: bmp, fitting: 40, 40) else {
            Issue.record("a BMP was not refused honestly")
            return
        }
        #expect(info.format == .bmp && info.width == 320 && info.height == 240)
        // A GIF is decoded; one with nothing after its header says why, with its size.
        let gif = directory + "/a.gif"
        _ = FileManager.default.createFile(atPath: gif, contents: Data(Array("GIF89a".utf8) + [0x40, 0x01, 0xF0, 0x00] + [UInt8](repeating: 0, count: 20)))
        guard case .failure(.cannotPreview(let why, let gifInfo)) = PreviewDecoder.decode(path: gif, fitting: 40, 40) else {
            Issue.record("a GIF without a picture was shown")
            return
        }
        #expect(!why.isEmpty && gifInfo?.format == .gif && gifInfo?.width == 320, "\(why)")
    }

    @Test func probesReadSizesFromHeaders() {
        let webp = Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8X".utf8) + [10, 0, 0, 0, 0, 0, 0, 0] + [0x7F, 0x07, 0x00, 0x37, 0x04, 0x00]
        #expect(ImageProbe.probe(webp) == ImageProbe(format: .webp, width: 1920, height: 1080))
        let heic =
            [0, 0, 0, 24] + Array("ftypheic".utf8) + [UInt8](repeating: 0, count: 12) + [0, 0, 0, 20] + Array("ispe".utf8) + [
                0, 0, 0, 0, 0, 0, 0x0F, 0xC0, 0, 0, 0x0B, 0xD0,
            ]
        #expect(ImageProbe.probe(heic) == ImageProbe(format: .heic, width: 4032, height: 3024))
        #expect(ImageProbe.probe(Array("plain text".utf8)) == nil)
    }
}

@Suite struct HalfBlockTests {
    /// Two pixels per cell: the upper half block in the upper pixel's colour over the lower's;
    /// a last row of an odd-height picture has the terminal's own background below.
    @Test func aPictureBecomesHalfBlocksWithTheirColours() {
        let image = RGBImage(width: 2, height: 3, rgb: [255, 0, 0, 0, 0, 255, 0, 255, 0, 255, 255, 255, 10, 20, 30, 40, 50, 60])
        let picture = CellPicture(x: 4, y: 2, width: image.width, height: image.height, rgb: image.rgb)
        #expect(picture.columns == 2 && picture.rows == 2)
        let text = String(decoding: PictureEncoder.bytes(picture, depth: .trueColor), as: UTF8.self)
            .replacingOccurrences(of: "\u{1B}", with: "⎋")
        #expect(
            text == "⎋[3;5H⎋[38;2;255;0;0;48;2;0;255;0m▀⎋[38;2;0;0;255;48;2;255;255;255m▀⎋[0m"
                + "⎋[4;5H⎋[38;2;10;20;30;49m▀⎋[38;2;40;50;60m▀⎋[0m")
        let palette = String(decoding: PictureEncoder.bytes(picture, depth: .palette256, rows: 0..<1), as: UTF8.self)
            .replacingOccurrences(of: "\u{1B}", with: "⎋")
        #expect(palette == "⎋[3;5H⎋[38;5;196;48;5;46m▀⎋[38;5;21;48;5;231m▀⎋[0m")
        #expect(PictureEncoder.bytes(picture, depth: .none).isEmpty)
    }

    @Test func coloursMapToTheNearestOfThe256Palette() {
        #expect(PictureEncoder.palette256(RGB(0, 0, 0)) == 16)
        #expect(PictureEncoder.palette256(RGB(255, 255, 255)) == 231)
        #expect(PictureEncoder.palette256(RGB(128, 128, 128)) == 244)
        #expect(PictureEncoder.palette256(RGB(255, 135, 0)) == 208)
        #expect(PictureEncoder.shade(0) == " " && PictureEncoder.shade(255) == "@")
    }
}

/// A crafted progressive JPEG (its first scan repeated thousands of times: small on disk,
/// a pass over every coefficient per scan) once held the previews for a minute, and moving
/// on did not stop it: libjpeg read every scan before the cancel flag was first looked at.
@Suite struct HostileJPEGTests {
    let folder = TestFiles.makeTemporaryDirectory("hostile-jpeg")

    func gradient(_ width: Int, _ height: Int) -> RGBImage {
        var rgb: [UInt8] = []
        rgb.reserveCapacity(width * height * 3)
        for y in 0..<height { for x in 0..<width { rgb += [UInt8(x & 0xFF), UInt8(y & 0xFF), UInt8((x ^ y) & 0xFF)] } }
        return RGBImage(width: width, height: height, rgb: rgb)
    }

    /// The file with its first scan (SOS header and entropy-coded data) repeated `times` times.
    static func repeatingFirstScan(_ jpeg: [UInt8], times: Int) throws -> [UInt8] {
        var i = 2
        var sos: Int?
        while i + 4 <= jpeg.count, jpeg[i] == 0xFF {
            let marker = jpeg[i + 1]
            if marker == 0xDA {
                sos = i
                break
            }
            i += 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3]))
        }
        let start = try #require(sos)
        var end = start + 2 + (Int(jpeg[start + 2]) << 8 | Int(jpeg[start + 3]))
        // The entropy-coded data runs to the next marker that is not a stuffed byte or a restart.
        while end + 1 < jpeg.count, !(jpeg[end] == 0xFF && jpeg[end + 1] != 0x00 && !(0xD0...0xD7).contains(jpeg[end + 1])) { end += 1 }
        let scan = jpeg[start..<end]
        return Array(jpeg[..<end]) + Array([[UInt8]](repeating: Array(scan), count: times - 1).joined()) + Array(jpeg[end...])
    }

    @Test func aFileOfThousandsOfScansIsRefusedAtTheScanLimit() throws {
        let normal = folder + "/normal.jpg"
        try PictureWriter.progressiveJPEG(gradient(640, 480), to: normal)
        var image = um_image()
        defer { um_image_free(&image) }
        #expect(um_decode_jpeg(normal, 80, 60, PreviewDecoder.maxWholePixels, nil, &image) == 0)
        #expect((2...20).contains(image.scans), "a normal progressive JPEG: \(image.scans) scans")

        let crafted = folder + "/crafted.jpg"
        let bytes = try Self.repeatingFirstScan(Array(try Data(contentsOf: URL(fileURLWithPath: normal))), times: 5000)
        try Data(bytes).write(to: URL(fileURLWithPath: crafted))
        var refused = um_image()
        defer { um_image_free(&refused) }
        #expect(um_decode_jpeg(crafted, 80, 60, PreviewDecoder.maxWholePixels, nil, &refused) != 0)
        #expect(refused.scans == UM_JPEG_MAX_SCANS + 1, "stopped at the limit, not after \(refused.scans) scans")
        guard case .failure(.cannotPreview(let why, _)) = PreviewDecoder.decode(path: crafted, fitting: 80, 60) else {
            Issue.record("previewed")
            return
        }
        #expect(why.contains("more than 100 scans"), "\(why)")
    }

    /// Cancelling is seen while the scans are read, before any scanline: the decode stops at
    /// the first scan, not after all of them.
    @Test func aCancelStopsTheDecodeInsideItsFirstScan() throws {
        let big = folder + "/big.jpg"
        try PictureWriter.progressiveJPEG(gradient(1600, 1200), to: big)
        let flag = CancelFlag()
        flag.cancel()
        var cancelled: Int32 = 1
        var image = um_image()
        defer { um_image_free(&image) }
        #expect(um_decode_jpeg(big, 80, 60, PreviewDecoder.maxWholePixels, &cancelled, &image) != 0)
        #expect(image.scans <= 1, "\(image.scans) scans read after the cancel")
        #expect(withUnsafeBytes(of: image.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } == "cancelled")
        guard case .failure(.cancelled) = PreviewDecoder.decode(path: big, fitting: 80, 60, cancel: flag) else {
            Issue.record("not cancelled")
            return
        }
    }
}

/// A photo that carries where it was taken says so on the info line, coarsely (GPS in EXIF, or XMP).
@Suite struct LocationTests {
    let folder = TestFiles.makeTemporaryDirectory("location")

    /// An EXIF payload ("Exif\0\0" + TIFF) whose IFD0 points to a GPS IFD with the four tags.
    static func gpsExif(latitude: (Double, Double, Double), north: Bool, longitude: (Double, Double, Double), east: Bool, bigEndian: Bool) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? [24, 16, 8, 0].map { UInt8(v >> $0 & 0xFF) } : [0, 8, 16, 24].map { UInt8(v >> $0 & 0xFF) } }
        func rationals(_ d: (Double, Double, Double)) -> [UInt8] {
            u32(Int(d.0)) + u32(1) + u32(Int(d.1)) + u32(1) + u32(Int((d.2 * 100).rounded())) + u32(100)
        }
        var tiff: [UInt8] = bigEndian ? [0x4D, 0x4D, 0, 42] + u32(8) : [0x49, 0x49, 42, 0] + u32(8)
        // IFD0 at 8: one entry (GPS pointer), next IFD 0. GPS IFD at 8 + 2 + 12 + 4 = 26.
        let gpsAt = 26
        tiff += u16(1) + u16(0x8825) + u16(4) + u32(1) + u32(gpsAt) + u32(0)
        let dataAt = gpsAt + 2 + 12 * 4 + 4
        tiff += u16(4)
        tiff += u16(1) + u16(2) + u32(2) + (north ? [0x4E, 0, 0, 0] : [0x53, 0, 0, 0])
        tiff += u16(2) + u16(5) + u32(3) + u32(dataAt)
        tiff += u16(3) + u16(2) + u32(2) + (east ? [0x45, 0, 0, 0] : [0x57, 0, 0, 0])
        tiff += u16(4) + u16(5) + u32(3) + u32(dataAt + 24)
        tiff += u32(0)
        tiff += rationals(latitude) + rationals(longitude)
        return Array("Exif\0\0".utf8) + tiff
    }

    @Test(arguments: [false, true])
    func gpsInEXIFIsShownCoarsely(bigEndian: Bool) throws {
        let path = folder + "/paris-\(bigEndian).jpg"
        // 48°51'29.6" N, 2°17'40.2" E: the Eiffel Tower.
        let exif = Self.gpsExif(latitude: (48, 51, 29.6), north: true, longitude: (2, 17, 40.2), east: true, bigEndian: bigEndian)
        try PictureWriter.jpeg(corners(), to: path, exif: exif)
        guard case .success(let preview) = PreviewDecoder.decode(path: path, fitting: 10, 10) else {
            Issue.record("no preview")
            return
        }
        #expect(preview.info.location?.coarse == "48.86, 2.29")
        let south = Self.gpsExif(latitude: (33, 52, 4), north: false, longitude: (151, 12, 36), east: false, bigEndian: bigEndian)
        #expect(ExifSummary.fromTIFF(Array(south.dropFirst(6)))?.location?.coarse == "-33.87, -151.21")
    }

    @Test func gpsInXMPIsShownToo() throws {
        let path = folder + "/xmp.jpg"
        try PictureWriter.jpeg(corners(), to: path)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let xmp = Array(
            "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta><rdf:Description exif:GPSLatitude=\"48,51.4933N\" exif:GPSLongitude=\"2,17.67W\"/></x:xmpmeta>".utf8)
        let segment: [UInt8] = [0xFF, 0xE1, UInt8((xmp.count + 2) >> 8), UInt8((xmp.count + 2) & 0xFF)] + xmp
        bytes.insert(contentsOf: segment, at: 2)
        #expect(ExifSummary.fromJPEG(bytes)?.location?.coarse == "48.86, -2.29")
        #expect(ExifSummary.fromJPEG(Array(try Data(contentsOf: URL(fileURLWithPath: path))))?.location == nil, "no location, none said")
    }

    @Test func aPointIsSaidToTwoDecimalsAndOutOfRangeIsNone() {
        #expect(GeoPoint(latitude: 91, longitude: 0) == nil)
        #expect(GeoPoint(latitude: -0.004, longitude: 179.999)?.coarse == "0.00, 180.00")
    }
}
