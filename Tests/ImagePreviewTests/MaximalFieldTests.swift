import PhotoRewrite
import Foundation
import PreviewModel
import Testing
import UploadCore

/// Every container parser in Swift fed the largest values its length and offset fields hold,
/// where the file has no such bytes: each refuses or reads nothing, none stops the process
/// (an arithmetic overflow traps). HEIF's own cases are in StripLocationHEIFCraftedTests.
@Suite struct MaximalFieldTests {
    typealias S = StripLocationTests
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(v >> (8 * $0) & 0xFF) } }
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }

    @Test func jpegSegmentsOfTheLargestLength() {
        // SOI, then an APP1 and a DQT claiming 65,535 bytes that are not there.
        for marker: UInt8 in [0xE1, 0xDB, 0xC0, 0xFE] {
            let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, marker, 0xFF, 0xFF] + Array("Exif\0\0MM".utf8)
            #expect(throws: LocationStripper.Refusal.self, "marker \(marker)") { try S.apply(bytes) }
            _ = ExifSummary.fromJPEG(bytes)
            _ = ExifSummary.jpegThumbnail(bytes)
        }
    }

    @Test func pngChunksOfTheLargestLength() {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        for length: UInt32 in [0xFFFF_FFFF, 0x7FFF_FFFF, 0x8000_0000] {
            let bytes = signature + be32(length) + Array("eXIf".utf8) + [UInt8](repeating: 0, count: 16)
            #expect(throws: LocationStripper.Refusal.self, "\(length)") { try S.apply(bytes) }
            _ = ExifSummary.fromPNG(bytes)
        }
    }

    @Test func webpSizesOfTheLargestValue() {
        for (riff, chunk): (UInt32, UInt32) in [(0xFFFF_FFFF, 10), (40, 0xFFFF_FFFF), (0xFFFF_FFF0, 0xFFFF_FFF0), (40, 0x7FFF_FFFF)] {
            let bytes = Array("RIFF".utf8) + Self.le32(riff) + Array("WEBPVP8X".utf8) + Self.le32(chunk) + [UInt8](repeating: 0, count: 24)
            #expect(throws: LocationStripper.Refusal.self, "\(riff) \(chunk)") { try S.apply(bytes) }
            _ = ExifSummary.fromWebP(bytes)
        }
    }

    @Test func tiffOffsetsAndCountsOfTheLargestValue() {
        // Big- and little-endian headers whose first IFD, entry counts, value counts and value
        // offsets are the largest their fields hold.
        for header in [Array("MM\0*".utf8), Array("II*\0".utf8)] {
            let bigEndian = header[0] == UInt8(ascii: "M")
            func u32(_ v: UInt32) -> [UInt8] { bigEndian ? be32(v) : Self.le32(v) }
            func u16(_ v: UInt16) -> [UInt8] { bigEndian ? Self.be16(v) : Self.be16(v).reversed() }
            let cases: [[UInt8]] = [
                header + u32(0xFFFF_FFFF),
                header + u32(8) + u16(0xFFFF),
                // One entry (GPS IFD pointer, then an ASCII tag) with a count and offset at the top.
                header + u32(8) + u16(2) + u16(0x8825) + u16(4) + u32(1) + u32(0xFFFF_FFFF)
                    + u16(0x010F) + u16(2) + u32(0xFFFF_FFFF) + u32(0xFFFF_FFF0) + u32(0),
                header + u32(8) + u16(1) + u16(0x9003) + u16(5) + u32(0x7FFF_FFFF) + u32(0x7FFF_FFFF) + u32(0xFFFF_FFFF),
            ]
            for tiff in cases {
                _ = KeptExif.read(tiff: tiff).map { $0.tiff() }
                _ = ExifSummary.fromTIFF(tiff)
                _ = ExifSummary.fromHEIFBlock(be32(0xFFFF_FFFF) + tiff)
            }
        }
    }
}
