import Foundation
import PhotoRewrite
import PreviewModel
import Testing
import UploadCore
import UploadTesting

/// `--convert`, `--max-dimension`, `--max-bytes`: what arrives is checked with decoders this code
/// does not use (djpeg, dwebp) and read with exiftool, where they exist.
@Suite struct PhotoConverterTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "convert-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// Four quadrants: red, green / blue, white.
    static func quadrants(_ width: Int, _ height: Int) -> RGBImage {
        var rgb: [UInt8] = []
        rgb.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                switch (x < width / 2, y < height / 2) {
                case (true, true): rgb += [255, 0, 0]
                case (false, true): rgb += [0, 255, 0]
                case (true, false): rgb += [0, 0, 255]
                case (false, false): rgb += [255, 255, 255]
                }
            }
        }
        return RGBImage(width: width, height: height, rgb: rgb)
    }

    static func close(_ a: (UInt8, UInt8, UInt8), _ b: (Int, Int, Int), within tolerance: Int = 24) -> Bool {
        abs(Int(a.0) - b.0) <= tolerance && abs(Int(a.1) - b.1) <= tolerance && abs(Int(a.2) - b.2) <= tolerance
    }

    func write(_ bytes: [UInt8], _ name: String) -> String {
        let path = folder + "/" + name
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    @Test func theNameFollowsTheFormatWritten() {
        let jpeg = PhotoConversion(format: .jpeg)
        #expect(jpeg.sentName("IMG_1234.HEIC") == "IMG_1234.jpg")
        #expect(jpeg.sentName("a.JPEG") == "a.JPEG")
        #expect(jpeg.sentName("a.jpg") == "a.jpg")
        #expect(jpeg.sentName("noext") == "noext.jpg")
        #expect(jpeg.sentName(".hidden") == ".hidden.jpg")
        #expect(PhotoConversion(format: .webp).sentName("x.png") == "x.webp")
        #expect(PhotoConversion(format: .keep, maxDimension: 100).sentName("x.png") == "x.png")
    }

    @Test func aSidewaysJPEGArrivesUprightAtTheLongestSideAsked() throws {
        let djpeg = try #require(Tools.path("djpeg"), "djpeg (libjpeg-turbo-progs) decodes what arrives")
        let source = folder + "/side.jpg"
        // Stored 400 x 300, shown turned a quarter right (EXIF 6): 300 x 400 upright.
        try PictureWriter.jpeg(
            Self.quadrants(400, 300), to: source, quality: 95,
            exif: PictureWriter.exif(orientation: 6, bigEndian: false, make: "Phone", model: "X"))
        let converted = try #require(try PhotoConverter.convert(path: source, PhotoConversion(format: .jpeg, maxDimension: 200), stripLocation: false))
        #expect(converted.width == 150 && converted.height == 200)
        let decoded = try Tools.ppm(djpeg, write(converted.bytes, "side-out.jpg"))
        #expect(decoded.width == 150 && decoded.height == 200)
        // Turned right: blue (stored bottom left) is now top left, red top right, white bottom
        // left, green bottom right.
        #expect(Self.close(decoded.pixel(37, 50), (0, 0, 255)))
        #expect(Self.close(decoded.pixel(112, 50), (255, 0, 0)))
        #expect(Self.close(decoded.pixel(37, 150), (255, 255, 255)))
        #expect(Self.close(decoded.pixel(112, 150), (0, 255, 0)))
        let exif = try #require(ExifSummary.fromJPEG(converted.bytes))
        #expect(exif.orientation == .up)
        #expect(exif.camera == "Phone X")
    }

    @Test func fineDetailIsFilteredNotPicked() throws {
        // A one-pixel checkerboard shrunk 2.5 times: a low-pass filter makes it even grey (within
        // 2 levels here); picking pixels makes stripes, averaging the 2 or 3 under each output
        // pixel (a box) leaves a pattern 16 levels deep.
        let size = 1000
        var rgb = [UInt8](repeating: 0, count: size * size * 3)
        for y in 0..<size { for x in 0..<size where (x + y) % 2 == 0 { for c in 0..<3 { rgb[(y * size + x) * 3 + c] = 255 } } }
        let source = folder + "/checker.png"
        try PictureWriter.png(RGBImage(width: size, height: size, rgb: rgb), to: source)
        let converted = try #require(
            try PhotoConverter.convert(path: source, PhotoConversion(format: .jpeg, quality: 95, maxDimension: 400), stripLocation: false))
        let djpeg = try #require(Tools.path("djpeg"), "djpeg (libjpeg-turbo-progs) decodes what arrives")
        let decoded = try Tools.ppm(djpeg, write(converted.bytes, "checker.jpg"))
        #expect(decoded.width == 400 && decoded.height == 400)
        let far = decoded.rgb.filter { abs(Int($0) - 128) > 6 }.count
        #expect(far == 0, "\(far) values stray from the grey a filter makes")
    }

    @Test func theColourProfileGoesWithThePhoto() throws {
        let cjpeg = try #require(Tools.path("cjpeg"), "cjpeg (libjpeg-turbo-progs) writes the source with its profile")
        // A profile as a display's: a header that says it is one, and bytes of its own.
        var profile = [UInt8](repeating: 0, count: 132)
        profile[0..<4] = [0, 0, 0x01, 0x84]
        profile[36..<40] = Array("acsp".utf8)[...]
        profile += (0..<256).map { UInt8($0) }
        profile[0..<4] = [UInt8(profile.count >> 24), UInt8(profile.count >> 16 & 0xFF), UInt8(profile.count >> 8 & 0xFF), UInt8(profile.count & 0xFF)]
        let iccPath = write(profile, "p3.icc")
        let ppm = folder + "/src.ppm"
        let picture = Self.quadrants(600, 400)
        FileManager.default.createFile(atPath: ppm, contents: Data(Array("P6\n600 400\n255\n".utf8) + picture.rgb))
        let source = folder + "/withprofile.jpg"
        try Tools.run(cjpeg, ["-icc", iccPath, "-outfile", source, ppm])
        for format in [PhotoConversion.Format.jpeg, .webp] {
            let converted = try #require(try PhotoConverter.convert(path: source, PhotoConversion(format: format, maxDimension: 300), stripLocation: true))
            #expect(Tools.iccProfile(in: converted.bytes) == profile, "\(format)")
        }
    }

    @Test func transparencyLiesOnWhite() throws {
        let source = folder + "/alpha.png"
        let rgba = [UInt8]((0..<(64 * 64)).flatMap { _ in [UInt8(0), 0, 0, 0] })
        try PictureWriter.pngRGBA(width: 64, height: 64, rgba: rgba, to: source)
        let converted = try #require(try PhotoConverter.convert(path: source, PhotoConversion(format: .jpeg), stripLocation: false))
        let djpeg = try #require(Tools.path("djpeg"), "djpeg decodes what arrives")
        let decoded = try Tools.ppm(djpeg, write(converted.bytes, "alpha.jpg"))
        #expect(decoded.rgb.allSatisfy { $0 >= 250 })
    }

    @Test func aPhotoThatIsAlreadyWhatWasAskedGoesAsItIs() throws {
        let source = folder + "/small.jpg"
        try PictureWriter.jpeg(Self.quadrants(100, 80), to: source)
        #expect(try PhotoConverter.convert(path: source, PhotoConversion(format: .jpeg, maxDimension: 200), stripLocation: false) == nil)
        #expect(try PhotoConverter.convert(path: source, PhotoConversion(format: .keep, maxBytes: 1 << 20), stripLocation: false) == nil)
        #expect(try PhotoConverter.convert(path: source, PhotoConversion(format: .webp), stripLocation: false)?.format == .webp)
    }

    @Test func maxBytesTakesTheHighestQualityThatFits() throws {
        // Noise: every quality step changes the size.
        var generator = SystemRandomNumberGenerator()
        let picture = RGBImage(width: 300, height: 200, rgb: (0..<(300 * 200 * 3)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let source = folder + "/noise.png"
        try PictureWriter.png(picture, to: source)
        let full = try #require(try PhotoConverter.convert(path: source, PhotoConversion(format: .jpeg, quality: 90), stripLocation: false))
        let limit = Int64(full.bytes.count * 2 / 3)
        let fitted = try #require(try PhotoConverter.convert(path: source, PhotoConversion(format: .jpeg, quality: 90, maxBytes: limit), stripLocation: false))
        #expect(Int64(fitted.bytes.count) <= limit)
        #expect(fitted.quality < 90 && fitted.quality >= PhotoConversion.lowestQuality)
        let above = try #require(try PhotoConverter.convert(path: source, PhotoConversion(format: .jpeg, quality: fitted.quality + 1), stripLocation: false))
        #expect(Int64(above.bytes.count) > limit, "quality \(fitted.quality + 1) fits too")
        #expect(throws: PhotoConverter.Refusal.self) {
            try PhotoConverter.convert(path: source, PhotoConversion(format: .jpeg, maxBytes: 1024), stripLocation: false)
        }
    }

    @Test func theSameFileAndSettingsMakeTheSameBytes() throws {
        let source = folder + "/same.jpg"
        try PictureWriter.jpeg(Self.quadrants(640, 480), to: source, exif: PictureWriter.exif(orientation: 3, bigEndian: true))
        let settings = PhotoConversion(format: .jpeg, quality: 80, maxDimension: 333)
        let first = try PhotoConverter.convert(path: source, settings, stripLocation: false)
        let second = try PhotoConverter.convert(path: source, settings, stripLocation: false)
        #expect(first != nil && first == second)
    }

    @Test func animationsAreRefusedWhole() throws {
        // An APNG: acTL before the picture.
        let options = PNGEncoder.Options(chunks: [("acTL", [0, 0, 0, 2, 0, 0, 0, 0])], deflate: PictureWriter.zlib)
        let apng = write(PNGEncoder.encode(rgb: Self.quadrants(8, 8).rgb, width: 8, height: 8, options: options), "anim.png")
        #expect(throws: PhotoConverter.Refusal("an animated PNG is not converted: only its first frame would arrive")) {
            try PhotoConverter.convert(path: apng, PhotoConversion(format: .jpeg), stripLocation: false)
        }
        // An animated WebP: VP8X with the animation flag.
        var webp = Array("RIFF".utf8) + [30, 0, 0, 0] + Array("WEBPVP8X".utf8) + [10, 0, 0, 0, 0x02, 0, 0, 0, 7, 0, 0, 7, 0, 0]
        webp += Array("ANIM".utf8) + [6, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        let animated = write(webp, "anim.webp")
        #expect(throws: PhotoConverter.Refusal("an animated WebP is not converted: only its first frame would arrive")) {
            try PhotoConverter.convert(path: animated, PhotoConversion(format: .jpeg), stripLocation: false)
        }
        // An animated GIF: refused, its frames counted; a GIF of one frame is a picture like any.
        let palette: [(UInt8, UInt8, UInt8)] = [(230, 20, 20), (20, 20, 230)]
        let halves = (0..<(40 * 30)).map { UInt8($0 % 40 < 20 ? 0 : 1) }
        let frame = GIFWriter.Frame(width: 40, height: 30, indexes: halves)
        let gif = write(GIFWriter.gif(width: 40, height: 30, palette: palette, frames: [frame, frame, frame]), "anim.gif")
        #expect(throws: PhotoConverter.Refusal("an animated GIF (3 frames) is not converted: only its first frame would arrive")) {
            try PhotoConverter.convert(path: gif, PhotoConversion(format: .jpeg), stripLocation: false)
        }
        let still = write(GIFWriter.gif(width: 40, height: 30, palette: palette, frames: [frame]), "still.gif")
        let converted = try #require(try PhotoConverter.convert(path: still, PhotoConversion(format: .jpeg), stripLocation: false))
        #expect(converted.format == .jpeg && converted.bytes.starts(with: [0xFF, 0xD8]) && converted.width == 40)
        if let djpeg = Tools.path("djpeg") {
            let decoded = try Tools.ppm(djpeg, write(converted.bytes, "still.jpg"))
            #expect(decoded.width == 40 && decoded.height == 30)
            #expect(Self.close(decoded.pixel(5, 15), (230, 20, 20), within: 30) && Self.close(decoded.pixel(35, 15), (20, 20, 230), within: 30))
        }
        let text = write(Array("not a photo".utf8), "notes.jpg")
        #expect(throws: PhotoConverter.Refusal.self) { try PhotoConverter.convert(path: text, PhotoConversion(format: .jpeg), stripLocation: false) }
    }

    @Test func aPNGCannotKeepItsFormatWhenResized() throws {
        let source = folder + "/big.png"
        try PictureWriter.png(Self.quadrants(300, 200), to: source)
        #expect(throws: PhotoConverter.Refusal("a PNG photo cannot be written again in its own format; add --convert jpeg or --convert webp")) {
            try PhotoConverter.convert(path: source, PhotoConversion(format: .keep, maxDimension: 100), stripLocation: false)
        }
    }

    @Test func locationGoesOnlyWhenAskedAndTheRestStays() throws {
        let exiftool = try #require(Tools.path("exiftool"), "exiftool (libimage-exiftool-perl) reads what arrives")
        let source = folder + "/located.jpg"
        try PictureWriter.jpeg(
            Self.quadrants(800, 600), to: source,
            exif: PictureWriter.exif(orientation: 8, bigEndian: false, make: "Cam", model: "One", dateTaken: "2026:05:01 10:00:00"))
        try Tools.run(exiftool, ["-q", "-overwrite_original", "-GPSLatitude=48.85", "-GPSLatitudeRef=N", "-GPSLongitude=2.35", "-GPSLongitudeRef=E", source])
        for strip in [false, true] {
            let converted = try #require(try PhotoConverter.convert(path: source, PhotoConversion(format: .jpeg, maxDimension: 400), stripLocation: strip))
            let out = write(converted.bytes, "located-\(strip).jpg")
            let tags = try Tools.output(exiftool, ["-s", "-n", "-Orientation", "-Make", "-GPSLatitude", "-DateTimeOriginal", out])
            #expect(tags.contains("Orientation                     : 1"), "\(tags)")
            #expect(tags.contains("Make                            : Cam"), "\(tags)")
            #expect(tags.contains("2026:05:01 10:00:00"), "\(tags)")
            #expect(tags.contains("GPSLatitude") == !strip, "strip \(strip): \(tags)")
        }
    }

    @Test func aHEICBecomesAJPEGAndABurstIsRefused() throws {
        let heifEnc = try #require(Tools.path("heif-enc"), "heif-enc (libheif-examples) writes the HEIC")
        let jpeg = folder + "/for-heic.jpg"
        try PictureWriter.jpeg(Self.quadrants(640, 480), to: jpeg, quality: 95)
        let heic = folder + "/photo.heic"
        try Tools.run(heifEnc, ["-q", "90", "-o", heic, jpeg])
        let converted = try #require(try PhotoConverter.convert(path: heic, PhotoConversion(format: .jpeg, maxDimension: 320), stripLocation: false))
        let djpeg = try #require(Tools.path("djpeg"), "djpeg decodes what arrives")
        let decoded = try Tools.ppm(djpeg, write(converted.bytes, "heic.jpg"))
        #expect(decoded.width == 320 && decoded.height == 240)
        #expect(Self.close(decoded.pixel(80, 60), (255, 0, 0), within: 40))
        #expect(Self.close(decoded.pixel(240, 180), (255, 255, 255), within: 40))
        let burst = folder + "/burst.heic"
        try Tools.run(heifEnc, ["-q", "50", "-o", burst, jpeg, jpeg])
        #expect(throws: PhotoConverter.Refusal("this HEIF holds 2 pictures (a burst or a collection); it is not converted: only one would arrive")) {
            try PhotoConverter.convert(path: burst, PhotoConversion(format: .jpeg), stripLocation: false)
        }
    }

    /// A phone's HEIC (and an AVIF) says "Display P3" with code points (an nclx colour box), not
    /// a profile: the JPEG or WebP written from it carries a Display P3 profile, read back by
    /// exiftool and applied by Little CMS (through Pillow) as Apple's own profile would be.
    @Test func aDisplayP3PhotoDescribedByCodePointsStaysP3() throws {
        let avifenc = try #require(Tools.path("avifenc"), "avifenc (libavif-bin) writes the AVIF")
        let exiftool = try #require(Tools.path("exiftool"), "exiftool reads the profile written")
        let jpeg = folder + "/for-p3.jpg"
        try PictureWriter.jpeg(Self.quadrants(320, 240), to: jpeg, quality: 95)
        let p3 = folder + "/p3.avif"
        let srgb = folder + "/srgb.avif"
        let pq = folder + "/pq.avif"
        for (path, cicp) in [(p3, "12/13/6"), (srgb, "1/13/6"), (pq, "9/16/9")] {
            try Tools.run(avifenc, ["--min", "10", "--max", "20", "-s", "8", "--cicp", cicp, jpeg, path])
        }
        var sources = [p3]
        // HEIC's nclx box as libheif 1.16+ writes it (Debian's heif-enc 1.15 writes none).
        let heic = folder + "/p3.heic"
        let python =
            "from PIL import Image; import pillow_heif, sys; pillow_heif.register_heif_opener(); "
            + "Image.open(sys.argv[1]).save(sys.argv[2], quality=90, color_primaries=12, transfer_characteristics=13, matrix_coefficients=6, full_range_flag=1)"
        if (try? Tools.run("/usr/bin/python3", ["-c", python, jpeg, heic])) != nil { sources.append(heic) }
        for source in sources {
            for format in [PhotoConversion.Format.jpeg, .webp] {
                let converted = try #require(try PhotoConverter.convert(path: source, PhotoConversion(format: format), stripLocation: false))
                let out = write(converted.bytes, "p3-\((source as NSString).pathExtension).\(format.rawValue)")
                let tags = try Tools.output(
                    exiftool,
                    [
                        "-s", "-ProfileDescription", "-RedMatrixColumn", "-GreenMatrixColumn", "-BlueMatrixColumn",
                        "-MediaWhitePoint", "-ColorSpaceData", out,
                    ])
                #expect(tags.contains("ProfileDescription              : Display P3"), "\(source) \(format): \(tags)")
                #expect(tags.contains("ColorSpaceData                  : RGB"), "\(tags)")
                // Apple's own Display P3 profile: red 0.5151 0.2412 -0.0011 (Bradford-adapted to D50).
                for (name, want) in [
                    ("RedMatrixColumn", [0.5151, 0.2412, -0.0011]), ("GreenMatrixColumn", [0.2919, 0.6922, 0.0419]),
                    ("BlueMatrixColumn", [0.1572, 0.0666, 0.7841]), ("MediaWhitePoint", [0.9642, 1.0, 0.8249]),
                ] {
                    let line = try #require(tags.split(separator: "\n").first { $0.hasPrefix(name) }, "\(name) in \(tags)")
                    let read = line.split(separator: ":")[1].split(separator: " ").compactMap { Double($0) }
                    #expect(read.count == 3 && zip(read, want).allSatisfy { abs($0 - $1) < 0.0015 }, "\(name): \(read) vs \(want)")
                }
            }
        }
        // Little CMS turns P3 (200, 100, 50) through the profile into sRGB (215, 93, 31), as the
        // P3-to-sRGB matrix and the sRGB curve give by hand.
        let lcms =
            "import io, sys; from PIL import Image, ImageCms; "
            + "p = ImageCms.ImageCmsProfile(io.BytesIO(Image.open(sys.argv[1]).info['icc_profile'])); "
            + "t = ImageCms.buildTransform(p, ImageCms.createProfile('sRGB'), 'RGB', 'RGB'); "
            + "print(*ImageCms.applyTransform(Image.new('RGB', (1, 1), (200, 100, 50)), t).getpixel((0, 0)))"
        if let applied = try? Tools.output("/usr/bin/python3", ["-c", lcms, folder + "/p3-avif.jpeg"]) {
            let rgb = applied.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
            #expect(rgb.count == 3 && zip(rgb, [215, 93, 31]).allSatisfy { abs($0 - $1) <= 1 }, "\(applied)")
        }
        // sRGB needs no profile; an HDR curve cannot be kept in a JPEG and is refused in words.
        let plain = try #require(try PhotoConverter.convert(path: srgb, PhotoConversion(format: .jpeg), stripLocation: false))
        #expect(Tools.iccProfile(in: plain.bytes) == nil)
        #expect(throws: PhotoConverter.Refusal("an HDR photo (PQ curve) is not converted: as JPEG or WebP its colours would be wrong")) {
            try PhotoConverter.convert(path: pq, PhotoConversion(format: .jpeg), stripLocation: false)
        }
    }

    @Test func theProfilesCurveIsTheSRGBCurve() {
        guard case .profile(let icc, let name) = ColourProfile.need(primaries: 12, transfer: 13) else {
            Issue.record("Display P3 needs a profile")
            return
        }
        #expect(name == "Display P3")
        #expect(Int(icc[0]) << 24 | Int(icc[1]) << 16 | Int(icc[2]) << 8 | Int(icc[3]) == icc.count, "the header's size")
        #expect(icc.count % 4 == 0 && Array(icc[36..<40]) == Array("acsp".utf8))
        // The tone curve at 0.5 (stored) is sRGB's 0.2140 (linear).
        let curve = icc.indices.dropLast(4).first { Array(icc[$0..<$0 + 4]) == Array("curv".utf8) }
        #expect(curve != nil)
        if let curve {
            let at = curve + 12 + 2 * 511
            let value = Double(Int(icc[at]) << 8 | Int(icc[at + 1])) / 65535
            #expect(abs(value - pow((511.0 / 1023 + 0.055) / 1.055, 2.4)) < 0.0001 && abs(value - 0.2140) < 0.001)
        }
        #expect(ColourProfile.need(primaries: 1, transfer: 13) == .none)
        #expect(ColourProfile.need(primaries: 0, transfer: 0) == .none)
        #expect(
            ColourProfile.need(primaries: 22, transfer: 13)
                == .refused("its colours are described by primaries 22, which this converter does not know; send it as it is"))
    }
}

/// The outside tools the tests read results with.
enum Tools {
    static func path(_ name: String) -> String? {
        for directory in ["/usr/bin", "/usr/local/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: directory + "/" + name) {
            return directory + "/" + name
        }
        return nil
    }

    struct Failed: Error, CustomStringConvertible { let description: String }

    @discardableResult
    static func output(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        let errors = Pipe()
        process.standardOutput = pipe
        process.standardError = errors
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        let said = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failed(description: "\(tool) \(arguments.joined(separator: " ")): \(String(decoding: said, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func run(_ tool: String, _ arguments: [String]) throws { try output(tool, arguments) }

    /// `path` decoded by djpeg (or dwebp) into pixels.
    static func ppm(_ decoder: String, _ path: String) throws -> RGBImage {
        let out = path + ".ppm"
        if decoder.hasSuffix("dwebp") { try run(decoder, [path, "-ppm", "-o", out]) } else { try run(decoder, ["-pnm", "-outfile", out, path]) }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        // "P6\nW H\n255\n"
        var fields: [Int] = []
        var at = 2
        var current = ""
        while fields.count < 3, at < bytes.count {
            let c = bytes[at]
            at += 1
            if c == 0x20 || c == 0x0A || c == 0x09 || c == 0x0D {
                if !current.isEmpty {
                    fields.append(Int(current) ?? 0)
                    current = ""
                }
            } else {
                current.append(Character(UnicodeScalar(c)))
            }
        }
        let (width, height) = (fields[0], fields[1])
        return RGBImage(width: width, height: height, rgb: Array(bytes[at..<(at + width * height * 3)]))
    }

    /// The ICC profile a JPEG (APP2 ICC_PROFILE chunks, joined) or a WebP (ICCP) carries.
    static func iccProfile(in bytes: [UInt8]) -> [UInt8]? {
        if bytes.starts(with: Array("RIFF".utf8)) {
            var at = 12
            while at + 8 <= bytes.count {
                let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
                if bytes[at..<at + 4].elementsEqual("ICCP".utf8) { return Array(bytes[at + 8..<at + 8 + size]) }
                at += 8 + size + (size & 1)
            }
            return nil
        }
        var chunks: [Int: [UInt8]] = [:]
        var at = 2
        while at + 4 <= bytes.count, bytes[at] == 0xFF, bytes[at + 1] != 0xDA {
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            let payload = at + 4
            if bytes[at + 1] == 0xE2, length > 16, bytes[payload..<payload + 12].elementsEqual(Array("ICC_PROFILE".utf8) + [0]) {
                chunks[Int(bytes[payload + 12])] = Array(bytes[payload + 14..<at + 2 + length])
            }
            at += 2 + length
        }
        guard !chunks.isEmpty else { return nil }
        return chunks.keys.sorted().flatMap { chunks[$0]! }
    }
}
