import PhotoRewrite
import Foundation
import ImagePreview
import PreviewModel
import Testing
import UploadCore
import UploadTesting

/// `--strip-location` for WebP: photos made by cwebp/img2webp with a place written by exiftool,
/// and the place planted by hand where a reader might look (an unknown chunk, a frame's own
/// chunks, XMP, an EXIF with `Exif\0\0` before it, bytes after the RIFF). Checked by exiftool
/// (`-ee -location:all`) and by dwebp's pixels, as well as by the bytes.
@Suite struct StripLocationWebPTests {
    typealias S = StripLocationTests
    static let folder = TestFiles.makeTemporaryDirectory("strip-webp")

    static func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
    static func chunk(_ name: String, _ payload: [UInt8]) -> [UInt8] {
        Array(name.utf8) + le32(payload.count) + payload + (payload.count & 1 == 1 ? [0] : [])
    }
    /// The chunks of a WebP (after RIFF…WEBP), each as name and payload.
    static func chunks(_ webp: [UInt8]) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        var at = 12
        while at + 8 <= webp.count {
            let length = Int(webp[at + 4]) | Int(webp[at + 5]) << 8 | Int(webp[at + 6]) << 16 | Int(webp[at + 7]) << 24
            out.append((String(decoding: webp[at..<at + 4], as: UTF8.self), Array(webp[at + 8..<min(webp.count, at + 8 + length)])))
            at += 8 + length + (length & 1)
        }
        return out
    }
    static func riff(_ chunks: [[UInt8]]) -> [UInt8] {
        let body = chunks.flatMap { $0 }
        return Array("RIFF".utf8) + le32(4 + body.count) + Array("WEBP".utf8) + body
    }

    static func encoded(_ name: String, lossless: Bool = false, alpha: Bool = false) throws -> [UInt8] {
        let png = folder + "/\(name).png"
        if alpha {
            var rgba: [UInt8] = []
            for y in 0..<48 { for x in 0..<64 { rgba += [UInt8(x * 4), UInt8(y * 5), 120, x < 32 ? 255 : 90] } }
            try PictureWriter.pngRGBA(width: 64, height: 48, rgba: rgba, to: png)
        } else {
            var rgb: [UInt8] = []
            for y in 0..<48 { for x in 0..<64 { rgb += [UInt8(x * 4), UInt8(y * 5), 120] } }
            try PictureWriter.png(RGBImage(width: 64, height: 48, rgb: rgb), to: png)
        }
        let webp = folder + "/\(name).webp"
        try PhoneEncoders.run("cwebp", ["-quiet"] + (lossless ? ["-lossless"] : ["-q", "80"]) + [png, "-o", webp])
        return Array(try Data(contentsOf: URL(fileURLWithPath: webp)))
    }

    /// exiftool finds no place at all in `bytes`, embedded documents included.
    static func exiftoolFindsNoPlace(_ bytes: [UInt8], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let path = folder + "/check-\(UUID().uuidString.prefix(8)).webp"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let found = try ToolRun.output("/usr/bin/exiftool", ["-a", "-G1", "-ee", "-s", "-location:all", "-XMP:all", "-IPTC:all", path])
        #expect(found.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(label): \(found)", sourceLocation: sourceLocation)
    }

    /// dwebp decodes both to the same pixels.
    static func samePixels(_ a: [UInt8], _ b: [UInt8], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        func pixels(_ bytes: [UInt8]) throws -> Data {
            let path = folder + "/px-\(UUID().uuidString.prefix(8))"
            try Data(bytes).write(to: URL(fileURLWithPath: path + ".webp"))
            try PhoneEncoders.run("dwebp", ["-quiet", "-pam", path + ".webp", "-o", path + ".pam"])
            return try Data(contentsOf: URL(fileURLWithPath: path + ".pam"))
        }
        #expect(try pixels(a) == pixels(b), "\(label): dwebp's pixels differ", sourceLocation: sourceLocation)
    }

    static var tools: Bool { PhoneEncoders.webp && PhoneEncoders.has("dwebp") && PhoneEncoders.has("exiftool") }

    @Test(.enabled(if: tools), arguments: [(false, false), (true, false), (false, true)])
    func aPlaceExiftoolWroteGoesAndCameraDateAndOrientationStay(lossless: Bool, alpha: Bool) throws {
        let original = try Self.encoded("exiftool-\(lossless)-\(alpha)", lossless: lossless, alpha: alpha)
        let path = Self.folder + "/tagged-\(lossless)-\(alpha).webp"
        try Data(original).write(to: URL(fileURLWithPath: path))
        try PhoneEncoders.run(
            "exiftool",
            [
                "-q", "-overwrite_original", "-Make=Apple", "-Model=iPhone 15", "-DateTimeOriginal=2024:05:01 10:22:03",
                "-Orientation#=6", "-GPSLatitude=48.8582", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945",
                "-GPSLongitudeRef=E", "-XMP:City=\(S.planted)", "-XMP:GPSLatitude=48.8582", "-XMP:GPSLongitude=2.2945", path,
            ])
        let tagged = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Self.chunks(tagged).map(\.0).contains("XMP "), "exiftool wrote XMP")
        let out = try S.check(tagged, "exiftool's place", ext: "webp")
        try Self.exiftoolFindsNoPlace(out, "exiftool's place")
        try Self.samePixels(tagged, out, "exiftool's place")
        let kept = try #require(ExifSummary.fromWebP(out))
        #expect(kept.orientation == .right && kept.camera == "Apple iPhone 15" && kept.dateTaken == "2024:05:01 10:22:03" && kept.location == nil)
        let names = Self.chunks(out).map(\.0)
        #expect(names.first == "VP8X" && names.last == "EXIF" && !names.contains("XMP "), "\(names)")
        // VP8X: EXIF flag set (the fresh one), XMP flag cleared, alpha kept as it was.
        let flags = Self.chunks(out)[0].1[0]
        #expect(flags & 0x08 != 0 && flags & 0x04 == 0 && (flags & 0x10 != 0) == (Self.chunks(tagged)[0].1[0] & 0x10 != 0))
    }

    @Test(.enabled(if: tools))
    func aPlacePlantedWhereAReaderMightLookGoes() throws {
        let plain = try Self.encoded("planted")
        let picture = Self.chunks(plain).filter { $0.0 == "VP8 " }
        #expect(picture.count == 1)
        let vp8 = Self.chunk("VP8 ", picture[0].1)
        let tiff = S.cameraTIFF().bytes()
        let xmp = Array(S.xmp("<exif:GPSLatitude>48,51.49N</exif:GPSLatitude><photoshop:City>\(S.planted)</photoshop:City>").utf8)
        // VP8X: EXIF and XMP flags, a 64x48 canvas.
        let vp8x = Self.chunk("VP8X", [0x0C, 0, 0, 0, 63, 0, 0, 47, 0, 0])
        let variants: [(String, [UInt8])] = [
            ("EXIF and XMP chunks", Self.riff([vp8x, vp8, Self.chunk("EXIF", tiff), Self.chunk("XMP ", xmp)])),
            ("EXIF after Exif\\0\\0", Self.riff([vp8x, vp8, Self.chunk("EXIF", Array("Exif\0\0".utf8) + tiff)])),
            ("an unknown chunk", Self.riff([vp8x, Self.chunk("LOCA", Array(S.planted.utf8)), vp8, Self.chunk("EXIF", tiff)])),
            ("bytes after the RIFF", Self.riff([vp8x, vp8, Self.chunk("EXIF", tiff)]) + Array(S.planted.utf8) + Array("GPS".utf8)),
            ("two EXIF chunks", Self.riff([vp8x, vp8, Self.chunk("EXIF", tiff), Self.chunk("EXIF", tiff)])),
        ]
        for (label, bytes) in variants {
            let out = try S.check(bytes, label, ext: "webp")
            try Self.exiftoolFindsNoPlace(out, label)
            try Self.samePixels(bytes, out, label)
            #expect(ExifSummary.fromWebP(out)?.camera == "Canon Canon EOS R5" || ExifSummary.fromWebP(out)?.camera == "Canon EOS R5", "\(label)")
        }
    }

    @Test(.enabled(if: tools && PhoneEncoders.has("img2webp")))
    func anAnimationKeepsItsFramesAndLosesWhatItsFramesHide() throws {
        _ = try Self.encoded("frame-a")
        let green = Self.folder + "/frame-b.png"
        try PictureWriter.png(RGBImage(width: 64, height: 48, rgb: [UInt8](repeating: 90, count: 64 * 48 * 3)), to: green)
        let animated = Self.folder + "/animated.webp"
        try PhoneEncoders.run("img2webp", ["-loop", "0", "-lossy", "-d", "200", Self.folder + "/frame-a.png", green, "-o", animated])
        let made = Array(try Data(contentsOf: URL(fileURLWithPath: animated)))
        var frames = Self.chunks(made)
        #expect(frames.filter { $0.0 == "ANMF" }.count == 2)
        // An unknown chunk with the place inside the first frame, after its picture.
        let first = try #require(frames.firstIndex { $0.0 == "ANMF" })
        frames[first].1 += Self.chunk("LOCA", Array(S.planted.utf8))
        let hostile = Self.riff(
            frames.map { Self.chunk($0.0, $0.1) } + [Self.chunk("XMP ", Array(S.xmp("<exif:GPSLatitude>48,51.49N</exif:GPSLatitude>").utf8))])
        let out = try S.check(hostile, "an animation", ext: "webp")
        try Self.exiftoolFindsNoPlace(out, "an animation")
        #expect(Self.chunks(out).filter { $0.0 == "ANMF" }.count == 2)
        // Every frame the same: webpmux-free check through the frames' picture bytes.
        let framesBefore = Self.chunks(made).filter { $0.0 == "ANMF" }.map(\.1)
        let framesAfter = Self.chunks(out).filter { $0.0 == "ANMF" }.map(\.1)
        #expect(framesBefore == framesAfter)
    }

    @Test func aWebPThatCannotBeFollowedIsRefused() {
        let vp8x = Self.chunk("VP8X", [0x08, 0, 0, 0, 63, 0, 0, 47, 0, 0])
        let picture = Self.chunk("VP8L", [0x2F, 0x3F, 0xC0, 0x0B, 0, 0x07])
        let cases: [(String, [UInt8])] = [
            ("cut short", Array(Self.riff([vp8x, picture]).dropLast(3))),
            ("no picture chunk first", Self.riff([Self.chunk("EXIF", [1, 2, 3, 4]), picture])),
            (
                "a chunk past its end",
                Array("RIFF".utf8) + Self.le32(4 + 18 + 30) + Array("WEBP".utf8) + vp8x + Array("VP8L".utf8) + Self.le32(4000)
                    + [UInt8](repeating: 0, count: 30)
            ),
            ("a second VP8X", Self.riff([vp8x, picture, vp8x])),
        ]
        for (label, bytes) in cases {
            #expect(throws: LocationStripper.Refusal.self, "\(label)") { try S.apply(bytes) }
        }
        #expect(throws: LocationStripper.Refusal.self) { try S.apply(Array("RIFF".utf8) + Self.le32(4) + Array("WEBX".utf8)) }
    }
}
