import PhotoRewrite
import Foundation
import ImagePreview
import PreviewModel
import Testing
import UploadCore
import UploadTesting

/// `--strip-location` against photos made as a hostile file (or an unusual camera) would make
/// them: the place hidden wherever a reader might find it. What is sent is rebuilt from what is
/// known safe, so none of it survives; the pixels, orientation, camera and date do; a file that
/// cannot be followed with certainty is refused.
func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

@Suite struct StripLocationTests {
    static let folder = TestFiles.makeTemporaryDirectory("strip")
    /// Planted in every hiding place: none of these bytes may leave.
    static let planted = "PLANTED-48.8582N-2.2945E-Paris"

    // MARK: making photos

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    static func exifPayload(_ tiff: TIFFBuilder, header: String = "Exif\0\0") -> [UInt8] { Array(header.utf8) + tiff.bytes() }

    /// IFD0 as a camera writes it (orientation 6, make, model, an Exif IFD with the date), plus `gps`.
    static func cameraTIFF(bigEndian: Bool = false, gpsIn where_: String = "ifd0", extraIFD0: [(tag: Int, value: TIFFBuilder.Value)] = []) -> TIFFBuilder {
        let gps = TIFFBuilder.Directory(TIFFBuilder.gps(latitude: (48, 51, 2960), longitude: (2, 17, 4020), area: planted))
        var ifd0: [(tag: Int, value: TIFFBuilder.Value)] = [(0x010F, .ascii("Canon")), (0x0110, .ascii("Canon EOS R5")), (0x0112, .short(6))]
        var exif: [(tag: Int, value: TIFFBuilder.Value)] = [(0x829A, .rationals([(1, 250)])), (0x9003, .ascii("2024:05:01 10:22:03"))]
        var ifd1: [(tag: Int, value: TIFFBuilder.Value)] = [(0x0103, .short(6))]
        switch where_ {
        case "exif": exif.append((0x8825, .directory(3)))
        case "ifd1": ifd1.append((0x8825, .directory(3)))
        case "twice": ifd0 += [(0x8825, .directory(3)), (0x8825, .directory(3))]
        default: ifd0.append((0x8825, .directory(3)))
        }
        ifd0.append((0x8769, .directory(1)))
        ifd0 += extraIFD0
        ifd0.sort { $0.tag < $1.tag }
        return TIFFBuilder(
            bigEndian: bigEndian,
            [
                TIFFBuilder.Directory(ifd0, next: 2), TIFFBuilder.Directory(exif), TIFFBuilder.Directory(ifd1), gps,
            ])
    }

    static func plainJPEG(progressive: Bool = false) throws -> [UInt8] {
        let path = folder + "/base-\(progressive)-\(UUID().uuidString.prefix(6)).jpg"
        if progressive {
            try PictureWriter.progressiveJPEG(corners(width: 40, height: 30), to: path)
        } else {
            try PictureWriter.jpeg(corners(width: 40, height: 30), to: path)
        }
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A JPEG with `segments` right after SOI (or after its JFIF header) and `trailer` after EOI.
    static func jpeg(_ segments: [[UInt8]], trailer: [UInt8] = [], progressive: Bool = false) throws -> [UInt8] {
        var bytes = try plainJPEG(progressive: progressive)
        var at = 2
        if bytes[2] == 0xFF, bytes[3] == 0xE0 { at = 4 + (Int(bytes[4]) << 8 | Int(bytes[5])) }
        bytes.insert(contentsOf: segments.flatMap { $0 }, at: at)
        return bytes + trailer
    }

    static func xmp(_ body: String) -> String {
        "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\(body)</rdf:RDF></x:xmpmeta>"
    }

    static func iptcCity() -> [UInt8] {
        // Photoshop's image resource block 0x0404 (IPTC-IIM) with 2:90 City and 2:101 Country.
        func dataset(_ number: UInt8, _ text: String) -> [UInt8] { [0x1C, 2, number, 0, UInt8(text.utf8.count)] + Array(text.utf8) }
        let iim = dataset(90, planted) + dataset(101, "France")
        let resource = Array("8BIM".utf8) + [0x04, 0x04, 0, 0] + be32(UInt32(iim.count)) + iim + (iim.count % 2 == 1 ? [0] : [])
        return Array("Photoshop 3.0\0".utf8) + resource
    }

    static func png(_ chunks: [(String, [UInt8])], after: [(String, [UInt8])] = []) throws -> [UInt8] {
        let path = folder + "/base-\(UUID().uuidString.prefix(6)).png"
        try PictureWriter.png(corners(width: 16, height: 16), to: path)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        func chunk(_ name: String, _ data: [UInt8]) -> [UInt8] {
            be32(UInt32(data.count)) + Array(name.utf8) + data + be32(CRC32.checksum(Array(name.utf8) + data))
        }
        // After IHDR (8 + 25 bytes).
        bytes.insert(contentsOf: chunks.flatMap { chunk($0.0, $0.1) }, at: 33)
        return bytes + after.flatMap { chunk($0.0, $0.1) }
    }

    // MARK: checking what is sent

    static func apply(_ bytes: [UInt8]) throws -> [UInt8] {
        let edits = try LocationStripper.edits(size: Int64(bytes.count)) { offset, count in
            Array(bytes[Int(min(offset, Int64(bytes.count)))..<Int(min(offset + Int64(count), Int64(bytes.count)))])
        }
        let edited = EditedFile(edits: edits, originalSize: Int64(bytes.count))
        var out: [UInt8] = []
        for piece in edited.pieces(at: 0, count: Int(edited.size)) {
            switch piece {
            case .bytes(let b): out += b
            case .file(let offset, let count): out += bytes[Int(offset)..<min(bytes.count, Int(offset) + count)]
            }
        }
        return out
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { i in haystack[i] == needle[0] && haystack[i..<i + needle.count].elementsEqual(needle) }
    }

    /// Nothing planted left, in any encoding or compression a reader would undo.
    static func expectNoPlace(_ out: [UInt8], _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let utf16 = Array(planted.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(!contains(out, Array(planted.utf8)), "\(label): planted text left", sourceLocation: sourceLocation)
        #expect(!contains(out, Array("PLANTED".utf8)), "\(label): part of the planted text left", sourceLocation: sourceLocation)
        #expect(!contains(out, utf16), "\(label): planted UTF-16 text left", sourceLocation: sourceLocation)
        for word in ["GPS", "Gps", "City", "Paris", "Location", "xmpmeta", "drone-dji", "jumb", "c2pa", "8BIM"] {
            #expect(!contains(out, Array(word.utf8)), "\(label): \(word) left", sourceLocation: sourceLocation)
        }
        // The GPS rationals as either byte order writes 48/1, 51/1.
        #expect(!contains(out, [48, 0, 0, 0, 1, 0, 0, 0, 51, 0, 0, 0, 1, 0, 0, 0]), "\(label)", sourceLocation: sourceLocation)
        #expect(!contains(out, [0, 0, 0, 48, 0, 0, 0, 1, 0, 0, 0, 51, 0, 0, 0, 1]), "\(label)", sourceLocation: sourceLocation)
        #expect(
            ExifSummary.fromJPEG(out)?.location == nil && ExifSummary.fromPNG(out)?.location == nil && ExifSummary.fromWebP(out)?.location == nil,
            "\(label)", sourceLocation: sourceLocation)
    }

    static func decoded(_ bytes: [UInt8], _ ext: String) throws -> RGBImage? {
        let path = folder + "/decode-\(UUID().uuidString.prefix(8)).\(ext)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        guard case .success(let preview) = PreviewDecoder.decode(path: path, fitting: 64, 64) else { return nil }
        return preview.image
    }

    /// Stripped: no place, the same pixels, the same bytes when stripped again.
    static func check(_ bytes: [UInt8], _ label: String, ext: String = "jpg", sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
        let out = try apply(bytes)
        expectNoPlace(out, label, sourceLocation: sourceLocation)
        let before = try decoded(bytes, ext)
        let after = try decoded(out, ext)
        #expect(after != nil && before == after, "\(label): the same pixels", sourceLocation: sourceLocation)
        #expect(try apply(out) == out, "\(label): stripping again changes nothing", sourceLocation: sourceLocation)
        #expect(try apply(bytes) == out, "\(label): the same bytes every time", sourceLocation: sourceLocation)
        return out
    }

    // MARK: JPEG

    @Test func aCamerasGPSGoesAndItsOrientationCameraAndDateStay() throws {
        for bigEndian in [false, true] {
            let bytes = try Self.jpeg([Self.segment(0xE1, Self.exifPayload(Self.cameraTIFF(bigEndian: bigEndian)))])
            #expect(ExifSummary.fromJPEG(bytes)?.location != nil)
            let out = try Self.check(bytes, "EXIF \(bigEndian ? "MM" : "II")")
            let summary = try #require(ExifSummary.fromJPEG(out))
            #expect(summary.orientation.rawValue == 6)
            #expect(summary.camera == "Canon EOS R5")
            #expect(summary.dateTaken == "2024:05:01 10:22:03")
            let tiff = try #require(Self.firstEXIF(out))
            #expect(KeptExif.read(tiff: tiff)?.exposureTime == KeptExif.Rational(numerator: 1, denominator: 250))
        }
    }

    static func firstEXIF(_ jpeg: [UInt8]) -> [UInt8]? {
        var at = 2
        while at + 4 <= jpeg.count, jpeg[at] == 0xFF, jpeg[at + 1] != 0xDA {
            let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
            if jpeg[at + 1] == 0xE1, jpeg[(at + 4)...].starts(with: Array("Exif\0\0".utf8)) { return Array(jpeg[(at + 10)..<(at + 2 + length)]) }
            at += 2 + length
        }
        return nil
    }

    @Test(arguments: ["exif", "ifd1", "twice"])
    func gpsWhereNoCameraPutsItGoesToo(place: String) throws {
        _ = try Self.check(try Self.jpeg([Self.segment(0xE1, Self.exifPayload(Self.cameraTIFF(gpsIn: place)))]), "GPS in \(place)")
    }

    @Test func unusualEXIFLayoutsLoseTheirPlace() throws {
        // IFD0 of 1,000 entries (GPSAreaInformation among them), and one without its next-IFD link.
        let filler: [(tag: Int, value: TIFFBuilder.Value)] = (0..<996).map { (0xC000 + $0, .short(1)) }
        let big = Self.cameraTIFF(extraIFD0: filler)
        var noNext = Self.cameraTIFF()
        noNext.directories[0].omitNext = true
        // EXIF split over two APP1 segments, and a second EXIF APP1 with only GPS.
        let whole = Self.exifPayload(Self.cameraTIFF())
        let gpsOnly = TIFFBuilder(
            bigEndian: true,
            [
                TIFFBuilder.Directory([(0x8825, .directory(1))]),
                TIFFBuilder.Directory(TIFFBuilder.gps(latitude: (48, 51, 2960), longitude: (2, 17, 4020), area: Self.planted)),
            ])
        let cases: [(String, [[UInt8]])] = [
            ("IFD0 with 1,000 entries", [Self.segment(0xE1, Self.exifPayload(big))]),
            ("IFD0 without its next-IFD offset", [Self.segment(0xE1, Self.exifPayload(noNext))]),
            ("EXIF split over two APP1", [Self.segment(0xE1, Array(whole[..<60])), Self.segment(0xE1, Array(whole[60...]))]),
            ("a second EXIF APP1", [Self.segment(0xE1, Self.exifPayload(Self.cameraTIFF())), Self.segment(0xE1, Self.exifPayload(gpsOnly))]),
            ("EXIF\\0\\0", [Self.segment(0xE1, Self.exifPayload(Self.cameraTIFF(), header: "EXIF\0\0"))]),
            ("Exif\\0\\xff", [Self.segment(0xE1, Array("Exif\0".utf8) + [0xFF] + Self.cameraTIFF().bytes())]),
            ("stray bytes before Exif", [Self.segment(0xE1, Array("xyExif\0\0".utf8) + Self.cameraTIFF().bytes())]),
            ("EXIF in APP3", [Self.segment(0xE3, Self.exifPayload(Self.cameraTIFF()))]),
        ]
        for (label, segments) in cases {
            _ = try Self.check(try Self.jpeg(segments), label)
        }
    }

    @Test func xmpInAnyFormGoes() throws {
        let description = "<rdf:Description xmlns:exif='http://ns.adobe.com/exif/1.0/' exif:GPSLatitude='48,51.49N' photoshop:City='\(Self.planted)'/>"
        let dji =
            "<rdf:Description xmlns:drone-dji='http://www.dji.com/drone-dji/1.0/' drone-dji:GpsLatitude='+48.8582' drone-dji:GpsLongitude='+2.2945' drone-dji:Note='\(Self.planted)'/>"
        let otherPrefix =
            "<rdf:Description xmlns:e='http://ns.adobe.com/exif/1.0/'><e:GPSLatitude >48,51.49N</e:GPSLatitude ><e:Note>\(Self.planted)</e:Note></rdf:Description>"
        let spaced = "<rdf:Description exif:GPSLatitude = \"48,51.49N\" exif:Note = \"\(Self.planted)\"/>"
        let standard = "http://ns.adobe.com/xap/1.0/\0"
        let utf16 = Array(standard.utf8) + Array(Self.xmp(description).utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let extended =
            Array("http://ns.adobe.com/xmp/extension/\0".utf8) + Array("0123456789ABCDEF0123456789ABCDEF".utf8) + [0, 0, 1, 0, 0, 0, 0, 0]
            + Array(Self.xmp(description).utf8)
        let cases: [(String, [UInt8])] = [
            ("standard XMP", Array((standard + Self.xmp(description)).utf8)),
            ("DJI's drone-dji", Array((standard + Self.xmp(dji)).utf8)),
            ("another prefix, a space before >", Array((standard + Self.xmp(otherPrefix)).utf8)),
            ("spaces around =", Array((standard + Self.xmp(spaced)).utf8)),
            ("XMP\\0 header", Array(("XMP\0" + Self.xmp(description)).utf8)),
            ("no header", Array(Self.xmp(description).utf8)),
            ("a space for the NUL", Array(("http://ns.adobe.com/xap/1.0/ " + Self.xmp(description)).utf8)),
            ("UTF-16", utf16),
            ("extended XMP", extended),
        ]
        for (label, payload) in cases {
            _ = try Self.check(try Self.jpeg([Self.segment(0xE1, payload)]), label)
        }
    }

    @Test func placeNamesPicturesAndManifestsInsideThePhotoGo() throws {
        let exifWithThumbnail = try Self.jpeg([Self.segment(0xE1, Self.exifPayload(Self.cameraTIFF()))])
        let c2pa = Array("JP".utf8) + [0, 1, 0, 0, 0, 1] + [0, 0, 0, 80] + Array("jumb".utf8) + Array("{\"c2pa.location\":\"\(Self.planted)\"}".utf8)
        let jfifThumbnail = Array("JFIF\0".utf8) + [1, 2, 0, 0, 1, 0, 1, 4, 2] + Array(Self.planted.utf8.prefix(24))
        let adobeExtra = Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, 1] + Array(Self.planted.utf8)
        let cases: [(String, [[UInt8]], [UInt8])] = [
            ("IPTC City in APP13", [Self.segment(0xED, Self.iptcCity())], []),
            ("MakerNote with a city", [Self.segment(0xE1, Self.exifPayload(Self.cameraTIFF(extraIFD0: [(0x927C, .undefined(Array(Self.planted.utf8)))])))], []),
            ("MPF and a second picture after EOI", [Self.segment(0xE2, Array("MPF\0".utf8) + [0x4D, 0x4D, 0, 42])], exifWithThumbnail),
            ("a JPEG after EOI", [], try Self.jpeg([Self.segment(0xE1, Self.exifPayload(Self.cameraTIFF()))])),
            ("C2PA/JUMBF in APP11", [Self.segment(0xEB, c2pa)], []),
            ("a comment", [Self.segment(0xFE, Array(Self.planted.utf8))], []),
            ("a JFIF thumbnail", [Self.segment(0xE0, jfifThumbnail)], []),
            ("an Adobe segment with more after it", [Self.segment(0xEE, adobeExtra)], []),
            ("an unknown APP15", [Self.segment(0xEF, Array(Self.planted.utf8))], []),
        ]
        for (label, segments, trailer) in cases {
            _ = try Self.check(try Self.jpeg(segments, trailer: trailer), label)
        }
    }

    @Test func metadataBetweenProgressiveScansGoes() throws {
        var bytes = try Self.plainJPEG(progressive: true)
        // After the first scan, before the second SOS.
        var sos: [Int] = []
        for i in 0..<(bytes.count - 1) where bytes[i] == 0xFF && bytes[i + 1] == 0xDA { sos.append(i) }
        #expect(sos.count > 2, "a progressive JPEG has several scans")
        let inserted = Self.segment(0xE1, Self.exifPayload(Self.cameraTIFF())) + Self.segment(0xFE, Array(Self.planted.utf8))
        bytes.insert(contentsOf: inserted, at: sos[1])
        let out = try Self.check(bytes, "EXIF between scans")
        #expect(ExifSummary.fromJPEG(out) == nil, "EXIF between scans turns nothing upright in a viewer, nor here")
    }

    @Test func aJPEGThatCannotBeFollowedIsRefused() throws {
        let plain = try Self.plainJPEG()
        let refusals: [(String, [UInt8], String)] = [
            ("truncated", Array(plain.dropLast(10)), "ends inside its compressed picture"),
            ("cut inside its headers", Array(plain[..<30]), "runs past its end"),
            ("a JPEG-LS marker", Array(plain[..<2]) + Self.segment(0xF7, [1, 2, 3]) + Array(plain[2...]), "marker 0xFFF7"),
            ("bytes between segments", Array(plain[..<20]) + [0x00, 0x11] + Array(plain[20...]), "bytes outside any segment"),
            ("a second SOI", Array(plain[..<2]) + [0xFF, 0xD8] + Array(plain[2...]), "second start-of-image"),
            ("no picture", [0xFF, 0xD8] + Self.segment(0xE1, Self.exifPayload(Self.cameraTIFF())) + [0xFF, 0xD9], "without a picture"),
        ]
        for (label, bytes, reason) in refusals {
            #expect(throws: LocationStripper.Refusal.self, "\(label)") { try Self.apply(bytes) }
            do { _ = try Self.apply(bytes) } catch let refusal as LocationStripper.Refusal {
                #expect(refusal.description.contains(reason), "\(label): \(refusal.description)")
            }
        }
    }

    // MARK: PNG

    @Test func aPNGKeepsItsPictureAndColoursAndNothingElse() throws {
        let tiff = Self.cameraTIFF().bytes()
        let xmpText = Array("XML:com.adobe.xmp\0\0\0\0\0".utf8) + Array(Self.xmp("<rdf:Description photoshop:City='\(Self.planted)'/>").utf8)
        let cases: [(String, [(String, [UInt8])], [(String, [UInt8])])] = [
            ("eXIf", [("eXIf", tiff)], []),
            ("eXIf starting Exif\\0\\0", [("eXIf", Array("Exif\0\0".utf8) + tiff)], []),
            ("exIf and zxIf", [("exIf", tiff), ("zxIf", PictureWriter.zlib(tiff))], []),
            ("eXIf after IEND", [], [("eXIf", tiff)]),
            ("XMP in iTXt", [("iTXt", xmpText)], []),
            ("XMP in tEXt", [("tEXt", Array("XML:com.adobe.xmp\0".utf8) + Array(Self.xmp(Self.planted).utf8))], []),
            ("zTXt", [("zTXt", Array("Location\0\0".utf8) + PictureWriter.zlib(Array(Self.planted.utf8)))], []),
            ("ImageMagick raw profile", [("tEXt", Array("Raw profile type exif\0".utf8) + Array(Self.planted.utf8))], []),
            ("an unknown ancillary chunk", [("prVt", Array(Self.planted.utf8))], []),
            ("C2PA caBX", [("caBX", Array("jumb".utf8) + Array(Self.planted.utf8))], []),
            ("tIME and a colour chunk", [("tIME", [7, 232, 5, 1, 10, 22, 3]), ("gAMA", [0, 0, 0xB1, 0x8F])], []),
        ]
        for (label, chunks, after) in cases {
            let out = try Self.check(try Self.png(chunks, after: after), label, ext: "png")
            if label == "eXIf" {
                #expect(ExifSummary.fromPNG(out)?.orientation.rawValue == 6, "orientation kept in a fresh eXIf")
                #expect(ExifSummary.fromPNG(out)?.camera == "Canon EOS R5")
            }
            if label.hasPrefix("tIME") { #expect(Self.contains(out, Array("gAMA".utf8)) && !Self.contains(out, Array("tIME".utf8))) }
        }
    }

    @Test func aPNGThatCannotBeFollowedIsRefused() throws {
        let plain = try Self.png([])
        let unknownCritical = try Self.png([("ABCD", [1, 2, 3])])
        #expect(throws: LocationStripper.Refusal.self) { try Self.apply(Array(plain.dropLast(12))) }
        #expect(throws: LocationStripper.Refusal.self) { try Self.apply(unknownCritical) }
        #expect(throws: LocationStripper.Refusal.self) { try Self.apply(Array(plain[..<8]) + Array(plain[33...])) }
    }

    @Test func otherFormatsAreRefusedNotSentWithTheirLocation() {
        let gif = Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 20)
        #expect(throws: LocationStripper.Refusal.self) { try Self.apply(gif) }
    }

    @Test func aPhotoWithoutMetadataIsSentAsItIs() throws {
        let plain = try Self.plainJPEG()
        let out = try Self.apply(plain)
        #expect(out == plain, "JFIF, tables and scans: all kept, nothing added")
    }
}
