import Testing
@testable import UploadCore

@Suite struct MediaSnifferTests {
    static func pad(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: 32) }

    @Test(
        arguments: [
            ([0xFF, 0xD8, 0xFF, 0xE0], "image/jpeg"),
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "image/png"),
            (Array("GIF89a".utf8), "image/gif"),
            (Array("GIF87a".utf8), "image/gif"),
            (Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8), "image/webp"),
            ([0x49, 0x49, 0x2A, 0x00], "image/tiff"),
            ([0x4D, 0x4D, 0x00, 0x2A], "image/tiff"),
            ([0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8), "image/heic"),
            ([0, 0, 0, 0x18] + Array("ftypmif1".utf8) + [0, 0, 0, 0] + Array("mif1".utf8), "image/heif"),
            ([0, 0, 0, 0x1C] + Array("ftypavif".utf8) + [0, 0, 0, 0] + Array("avifmif1".utf8), "image/avif"),
            (Array("BM".utf8) + [0x36, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0], "image/bmp"),
        ] as [([UInt8], String)])
    func recognisesImagesByContent(prefix: [UInt8], mime: String) {
        #expect(MediaSniffer.sniff(Self.pad(prefix))?.mime == mime)
        #expect(MediaSniffer.detect(prefix: Self.pad(prefix), fileName: "misnamed.txt").mime == mime)
    }

    @Test func contentWinsOverExtension() {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        #expect(MediaSniffer.detect(prefix: Self.pad(png), fileName: "photo.jpg") == .png)
    }

    @Test func extensionIsTheFallbackForUnrecognisedBinary() {
        #expect(MediaSniffer.detect(prefix: [0x00, 0x01, 0x02], fileName: "raw.HEIC") == .heic)
        #expect(MediaSniffer.detect(prefix: [], fileName: "empty.png") == .png)
        #expect(MediaSniffer.detect(prefix: [0x00, 0x01], fileName: "blob.bin") == .octetStream)
    }

    @Test func textIsNeverAnImage() {
        let text = Array("just some notes\n".utf8)
        #expect(MediaSniffer.detect(prefix: text, fileName: "notes.jpg") == .plainText)
        #expect(!MediaSniffer.detect(prefix: text, fileName: "notes.jpg").isImage)
        #expect(MediaSniffer.sniff(Array("BM is not a bitmap header".utf8)) == nil)
    }

    @Test func generatedPNGIsRecognisedAndWellFormed() {
        let png = PNGEncoder.encode(width: 3, height: 2) { x, y in (UInt8(x), UInt8(y), 0) }
        #expect(MediaSniffer.sniff(png) == .png)
        #expect(Array(png.suffix(12)) == [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82])
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }
}
