import PhotoRewrite
import Foundation
import Testing
import UploadCore

/// `--strip-location` on HEIF files put together by hand, as a hostile file would be: boxes a
/// reader may take (a second `iloc`, a second `idat`), metadata items without a location, a
/// handler name with bytes after its end, and sizes and offsets at the largest values their
/// fields hold. Each is refused or rewritten, and none may stop the process.
@Suite struct StripLocationHEIFCraftedTests {
    typealias S = StripLocationTests

    static func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func be64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(v >> (56 - 8 * $0) & 0xFF) } }
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(UInt32(8 + payload.count)) + Array(type.utf8) + payload }
    static func full(_ type: String, version: UInt8 = 0, _ payload: [UInt8]) -> [UInt8] { box(type, [version, 0, 0, 0] + payload) }

    static func hdlr(after name: [UInt8] = []) -> [UInt8] {
        full("hdlr", [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + Array("Handler".utf8) + [0] + name)
    }

    static func infe(_ id: Int, _ type: String, contentType: String? = nil) -> [UInt8] {
        full(
            "infe", version: 2,
            be16(id) + be16(0) + Array(type.utf8) + Array("name".utf8) + [0]
                + (contentType.map { Array($0.utf8) + [0] } ?? []))
    }

    static func iinf(_ entries: [[UInt8]]) -> [UInt8] { full("iinf", be16(entries.count) + entries.flatMap { $0 }) }

    /// `iloc` version 1 with 4-byte offsets and lengths, no base: (id, method, offset, length).
    static func iloc(_ items: [(Int, Int, UInt32, UInt32)]) -> [UInt8] {
        var payload: [UInt8] = [0x44, 0x00] + be16(items.count)
        for item in items {
            payload += be16(item.0)
            payload += be16(item.1)
            payload += be16(0) + be16(1)
            payload += be32(item.2) + be32(item.3)
        }
        return full("iloc", version: 1, payload)
    }

    static let ftyp = box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))

    /// ftyp, then meta with `metaBoxes(mdatStart)`, then an mdat holding `picture` then `exif`.
    static func file(
        picture: [UInt8] = [UInt8](repeating: 0xAB, count: 64), exif: [UInt8],
        metaBoxes: (_ mdatPayload: Int) -> [[UInt8]]
    ) -> [UInt8] {
        // The meta's size does not depend on the offsets written in it (fixed-width fields).
        let probe = full("meta", metaBoxes(0).flatMap { $0 })
        let mdatPayload = ftyp.count + probe.count + 8
        let meta = full("meta", metaBoxes(mdatPayload).flatMap { $0 })
        return ftyp + meta + box("mdat", picture + exif)
    }

    static let gpsExif = [0, 0, 0, 0] + Array("MM\0*".utf8) + Array(S.planted.utf8) + Array("GPS".utf8)

    @Test func aSecondItemLocationTableIsRefused() throws {
        let bytes = Self.file(exif: Self.gpsExif) { mdat in
            [
                Self.hdlr(), Self.iinf([Self.infe(1, "hvc1"), Self.infe(2, "Exif")]),
                Self.iloc([(1, 0, UInt32(mdat), 64), (2, 0, UInt32(mdat + 64), UInt32(Self.gpsExif.count))]),
                Self.iloc([(1, 0, UInt32(mdat), 64)]),
            ]
        }
        #expect { try S.apply(bytes) } throws: { "\($0)".contains("two 'iloc' boxes") }
    }

    @Test func secondDescriptionsAndDataBoxesAreRefused() throws {
        for (twice, extra) in [
            ("iinf", Self.iinf([Self.infe(3, "hvc1")])), ("idat", Self.box("idat", [1, 2, 3])),
            ("hdlr", Self.hdlr()),
        ] {
            let bytes = Self.file(exif: []) { mdat in
                [Self.hdlr(), Self.iinf([Self.infe(1, "hvc1")]), Self.box("idat", [0]), Self.iloc([(1, 0, UInt32(mdat), 64)]), extra]
            }
            #expect("\(twice)") { try S.apply(bytes) } throws: { "\($0)".contains("two '\(twice)' boxes") }
        }
        // The same file with each box once is stripped: the refusals are the second boxes'.
        let once = Self.file(exif: []) { mdat in [Self.hdlr(), Self.iinf([Self.infe(1, "hvc1")]), Self.iloc([(1, 0, UInt32(mdat), 64)])] }
        #expect(try S.apply(once).count == once.count)
    }

    /// An `Exif` or XMP item that no `iloc` entry locates: where a reader would find it is not
    /// known, so it cannot be rewritten.
    @Test func aMetadataItemWithoutALocationIsRefused() throws {
        for item in [Self.infe(2, "Exif"), Self.infe(2, "mime", contentType: "application/rdf+xml"), Self.infe(2, "iptc")] {
            let bytes = Self.file(exif: Self.gpsExif) { mdat in
                [Self.hdlr(), Self.iinf([Self.infe(1, "hvc1"), item]), Self.iloc([(1, 0, UInt32(mdat), 64)])]
            }
            #expect { try S.apply(bytes) } throws: { "\($0)".contains("without saying where its bytes are") }
        }
    }

    /// Whatever follows the handler's name (where an item could be pointed) becomes zeros.
    @Test func bytesAfterTheHandlersNameGo() throws {
        let hidden = Array(S.planted.utf8) + Array("GPS".utf8)
        let bytes = Self.file(exif: []) { mdat in
            [Self.hdlr(after: hidden), Self.iinf([Self.infe(1, "hvc1")]), Self.iloc([(1, 0, UInt32(mdat), 64)])]
        }
        let out = try S.apply(bytes)
        #expect(out.count == bytes.count)
        S.expectNoPlace(out, "after the handler's name")
        // A name without its end: spaces, and the box's last byte ends it.
        var handler: [UInt8] = [0, 0, 0, 0] + Array("pict".utf8)
        handler += [UInt8](repeating: 0, count: 12) + Array(S.planted.utf8)
        var meta = Self.full("hdlr", handler)
        meta += Self.iinf([]) + Self.full("iloc", version: 1, [0x44, 0, 0, 0])
        let unended = Self.ftyp + Self.full("meta", meta) + Self.box("mdat", [])
        let cleared = try S.apply(unended)
        S.expectNoPlace(cleared, "an unended handler name")
    }

    /// Sizes and offsets at the largest values their fields hold: refused with the reason,
    /// never computed past Int64 (which stops the process).
    @Test func theLargestSizesAndOffsetsAreRefusedNotOverflowed() throws {
        // A top-level box of size 1 whose 64-bit size is Int64.max, after a first box, and one
        // whose 64-bit size has its top bit set (negative as Int64).
        for large in [UInt64(Int64.max), UInt64.max, UInt64(Int64.max) - 7] {
            var bytes: [UInt8] = Self.ftyp + be32(1)
            bytes += Array("mdat".utf8) + Self.be64(large)
            bytes += [UInt8](repeating: 0, count: 32)
            #expect(throws: LocationStripper.Refusal.self, "\(large)") { try S.apply(bytes) }
        }
        // iloc with 8-byte base, offset and length whose sum overflows.
        let huge = Self.be64(UInt64(Int64.max))
        let top = Self.be64(UInt64.max)
        for (base, offset, length) in [
            (huge, huge, Self.be64(1)), (Self.be64(16), huge, huge), (top, Self.be64(0), Self.be64(1)),
            (Self.be64(0), Self.be64(0), top), (Self.be64(0), top, Self.be64(8)),
        ] {
            for method in [0, 1] {
                var payload: [UInt8] = [0x88, 0x80] + Self.be16(1)
                payload += Self.be16(1) + Self.be16(method)
                payload += Self.be16(0) + base
                payload += Self.be16(1) + offset
                payload += length
                let iloc = Self.full("iloc", version: 1, payload)
                let bytes = Self.file(exif: []) { _ in [Self.hdlr(), Self.iinf([Self.infe(1, "hvc1")]), Self.box("idat", [0]), iloc] }
                #expect(throws: LocationStripper.Refusal.self, "method \(method)") { try S.apply(bytes) }
            }
        }
    }
}
