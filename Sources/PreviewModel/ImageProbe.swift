import Foundation

/// What a file's first bytes say about it as a picture: its format and, where the header
/// carries them cheaply, its pixel dimensions (never by decoding).
public struct ImageProbe: Sendable, Equatable {
    /// The image formats the preview knows by their first bytes.
    public enum Format: String, Sendable {
        case jpeg = "JPEG"
        case png = "PNG"
        case gif = "GIF"
        case webp = "WebP"
        case heic = "HEIC"
        case avif = "AVIF"
        case bmp = "BMP"
        case tiff = "TIFF"
    }

    public var format: Format
    public var width: Int?
    public var height: Int?

    public init(format: Format, width: Int? = nil, height: Int? = nil) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// How many leading bytes `probe` wants (a JPEG's frame header can follow a large EXIF block).
    public static let headLength = 256 * 1024

    /// nil when the bytes are of no picture format known here.
    public static func probe(_ b: [UInt8]) -> ImageProbe? {
        func be16(_ i: Int) -> Int? { i + 2 <= b.count ? Int(b[i]) << 8 | Int(b[i + 1]) : nil }
        func le16(_ i: Int) -> Int? { i + 2 <= b.count ? Int(b[i + 1]) << 8 | Int(b[i]) : nil }
        func be32(_ i: Int) -> Int? { i + 4 <= b.count ? Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) : nil }
        func le32(_ i: Int) -> Int? { i + 4 <= b.count ? Int(b[i + 3]) << 24 | Int(b[i + 2]) << 16 | Int(b[i + 1]) << 8 | Int(b[i]) : nil }
        func le24(_ i: Int) -> Int? { i + 3 <= b.count ? Int(b[i + 2]) << 16 | Int(b[i + 1]) << 8 | Int(b[i]) : nil }
        func ascii(_ i: Int, _ s: String) -> Bool {
            let u = Array(s.utf8)
            return i + u.count <= b.count && Array(b[i..<i + u.count]) == u
        }

        if b.count >= 3, b[0] == 0xFF, b[1] == 0xD8, b[2] == 0xFF {
            var probe = ImageProbe(format: .jpeg)
            var at = 2
            while at + 9 <= b.count, b[at] == 0xFF {
                let marker = b[at + 1]
                if marker == 0xFF {
                    at += 1
                    continue
                }
                if (0xD0...0xD7).contains(marker) || marker == 0x01 {
                    at += 2
                    continue
                }
                guard let length = be16(at + 2), length >= 2 else { break }
                // Start-of-frame markers (not DHT C4, JPG C8, DAC CC) carry the size.
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                    probe.height = be16(at + 5)
                    probe.width = be16(at + 7)
                    break
                }
                if marker == 0xDA { break }
                at += 2 + length
            }
            return probe
        }
        if b.count >= 8, b[0] == 0x89, ascii(1, "PNG\r\n") {
            return ImageProbe(format: .png, width: be32(16), height: be32(20))
        }
        if ascii(0, "GIF87a") || ascii(0, "GIF89a") {
            return ImageProbe(format: .gif, width: le16(6), height: le16(8))
        }
        if ascii(0, "RIFF"), ascii(8, "WEBP") {
            var probe = ImageProbe(format: .webp)
            if ascii(12, "VP8X") {
                probe.width = le24(24).map { $0 + 1 }
                probe.height = le24(27).map { $0 + 1 }
            } else if ascii(12, "VP8L"), let bits = le32(21) {
                probe.width = (bits & 0x3FFF) + 1
                probe.height = ((bits >> 14) & 0x3FFF) + 1
            } else if ascii(12, "VP8 ") {
                probe.width = le16(26).map { $0 & 0x3FFF }
                probe.height = le16(28).map { $0 & 0x3FFF }
            }
            return probe
        }
        if ascii(4, "ftyp") {
            let brand = b.count >= 12 ? String(decoding: b[8..<12], as: UTF8.self) : ""
            let format: Format? =
                ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1"].contains(brand)
                ? .heic
                : ["avif", "avis"].contains(brand) ? .avif : nil
            guard let format else { return nil }
            var probe = ImageProbe(format: format)
            // The first image spatial extent property ('ispe'): the primary item's size, usually.
            if let at = find(Array("ispe".utf8), in: b), let w = be32(at + 8), let h = be32(at + 12) {
                probe.width = w
                probe.height = h
            }
            return probe
        }
        if ascii(0, "BM") {
            return ImageProbe(format: .bmp, width: le32(18), height: le32(22).map { abs(Int(Int32(truncatingIfNeeded: $0))) })
        }
        if ascii(0, "II*\0") || ascii(0, "MM\0*") {
            return ImageProbe(format: .tiff)
        }
        return nil
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<i + needle.count]) == needle {
            return i
        }
        return nil
    }
}
