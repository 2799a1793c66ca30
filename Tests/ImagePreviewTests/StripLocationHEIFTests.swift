import PhotoRewrite
import Foundation
import ImagePreview
import PreviewModel
import Testing
import UploadCore
import UploadTesting

/// `--strip-location` for HEIC and AVIF: photos made by heif-enc/avifenc with a place written by
/// exiftool (EXIF GPS, XMP GPS and a city), and places planted where the container has room for
/// them. Checked by exiftool (`-ee -location:all`), by heif-convert's pixels and by the bytes.
@Suite struct StripLocationHEIFTests {
    typealias S = StripLocationTests
    static let folder = TestFiles.makeTemporaryDirectory("strip-heif")
    static var tools: Bool {
        PhoneEncoders.heif && PhoneEncoders.has("heif-convert") && PhoneEncoders.has("exiftool")
    }

    static func made(_ name: String, avif: Bool = false) throws -> String {
        var rgb: [UInt8] = []
        for y in 0..<96 { for x in 0..<128 { rgb += [UInt8(x * 2), UInt8(y * 2), 120] } }
        let png = folder + "/\(name).png"
        try PictureWriter.png(RGBImage(width: 128, height: 96, rgb: rgb), to: png)
        let out = folder + "/\(name).\(avif ? "avif" : "heic")"
        if avif {
            try PhoneEncoders.run("avifenc", ["-s", "10", png, out])
        } else {
            try PhoneEncoders.run("heif-enc", ["-q", "80", "-t", "64", png, "-o", out])
        }
        try PhoneEncoders.run(
            "exiftool",
            [
                "-q", "-overwrite_original", "-Make=Apple", "-Model=iPhone 15", "-DateTimeOriginal=2024:05:01 10:22:03",
                "-Orientation#=6", "-GPSLatitude=48.8582", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945",
                "-GPSLongitudeRef=E", "-XMP:City=\(S.planted)", "-XMP:GPSLatitude=48.8582", "-XMP:GPSLongitude=2.2945", out,
            ])
        return out
    }

    static func write(_ bytes: [UInt8], _ ext: String) throws -> String {
        let path = folder + "/out-\(UUID().uuidString.prefix(8)).\(ext)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// heif-convert's picture of `path`, its pixels (the PNG it writes also carries the EXIF).
    static func pixels(_ path: String) throws -> [UInt8] {
        let png = path + ".png"
        try PhoneEncoders.run("heif-convert", [path, png])
        return try PreviewDecoder.decode(path: png, fitting: 4096, 4096).get().image.rgb
    }

    @Test(.enabled(if: tools), arguments: [false, true])
    func aPlaceExiftoolWroteGoesAndThePicturesCameraAndDateStay(avif: Bool) throws {
        guard !avif || PhoneEncoders.avif else { return }
        let path = try Self.made(avif ? "avif" : "heic", avif: avif)
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let before = try ToolRun.output("/usr/bin/exiftool", ["-a", "-G1", "-ee", "-s", "-location:all", "-XMP:City", path])
        #expect(before.contains("GPSLatitude") && before.contains(S.planted), "exiftool wrote the place: \(before)")
        let out = try S.apply(original)
        #expect(out.count == original.count, "every byte stays in its place")
        S.expectNoPlace(out, avif ? "AVIF" : "HEIC")
        #expect(try S.apply(out) == out && S.apply(original) == out)
        let stripped = try Self.write(out, avif ? "avif" : "heic")
        let after = try ToolRun.output("/usr/bin/exiftool", ["-a", "-G1", "-ee", "-s", "-location:all", "-XMP:all", "-IPTC:all", stripped])
        #expect(after.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(after)")
        let kept = try ToolRun.output("/usr/bin/exiftool", ["-s3", "-Make", "-Model", "-DateTimeOriginal", stripped])
        #expect(kept == "Apple\niPhone 15\n2024:05:01 10:22:03\n", "\(kept)")
        #expect(try Self.pixels(path) == Self.pixels(stripped), "heif-convert's pixels")
        // The preview still reads it.
        let preview = try PreviewDecoder.decode(path: stripped, fitting: 32, 32).get()
        #expect(preview.info.camera == "Apple iPhone 15" && preview.info.location == nil)
    }

    /// Top-level boxes added to a real HEIC: a `free` box is blanked; any other box (a phone's
    /// trailer, a `uuid`, an image sequence's `moov`) goes, cut at the end and blanked between
    /// known boxes; bytes that are no box, or a file cut short, are refused.
    @Test(.enabled(if: tools))
    func whatTheContainerHasRoomForIsBlankedCutOrRefused() throws {
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: try Self.made("planted"))))
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(UInt32(8 + payload.count)) + Array(type.utf8) + payload }
        let planted = Array(S.planted.utf8) + Array("GPS".utf8)
        let withFree = original + box("free", planted)
        let freed = try S.apply(withFree)
        S.expectNoPlace(freed, "a free box")
        #expect(freed.count == withFree.count)
        #expect(try Self.pixels(Self.write(withFree, "heic")) == Self.pixels(Self.write(freed, "heic")))
        for (label, trailer) in [
            ("a Samsung trailer", box("sefd", planted)), ("a uuid box", box("uuid", [UInt8](repeating: 7, count: 16) + planted)),
            ("an image sequence", box("moov", planted)),
        ] {
            let out = try S.apply(original + trailer)
            S.expectNoPlace(out, label)
            #expect(out.count == original.count, "\(label): cut")
            // Between known boxes (before a free box): zeros in place.
            let between = try S.apply(original + trailer + box("free", []))
            S.expectNoPlace(between, label + " between")
            #expect(between.count == original.count + trailer.count + 8)
            #expect(try Self.pixels(Self.write(between, "heic")) == Self.pixels(Self.write(original, "heic")), "\(label)")
        }
        for (label, bytes) in [
            ("bytes after the last box", original + Array(S.planted.utf8)),
            ("a cut file", Array(original.dropLast(10))),
        ] {
            #expect(throws: LocationStripper.Refusal.self, "\(label)") { try S.apply(bytes) }
        }
    }
}
