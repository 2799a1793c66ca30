/// Decides a file's media type from its first bytes, falling back to its extension.
///
/// Content wins over the name: a PNG called `photo.jpg` is sent as `image/png`.
/// Non-image content that carries an image extension is not an image: the extension
/// is only consulted when the bytes say nothing recognisable.
public enum MediaSniffer {
    /// How many leading bytes `sniff` needs to recognise every supported type.
    public static let prefixLength = 32

    /// The media type of content starting with `prefix`, or `nil` when the bytes match no known signature.
    public static func sniff<C: Collection<UInt8>>(_ prefix: C) -> MediaType? {
        let b = Array(prefix.prefix(prefixLength))
        func starts(_ sig: [UInt8], at offset: Int = 0) -> Bool {
            guard b.count >= offset + sig.count else { return false }
            return Array(b[offset..<offset + sig.count]) == sig
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(Array("ftyp".utf8), at: 4), b.count >= 12 {
            return isoMediaBrand(b)
        }
        if starts(Array("BM".utf8)), b.count >= 18 {
            // The DIB header size distinguishes a real bitmap from text that starts with "BM".
            let dib = UInt32(b[14]) | UInt32(b[15]) << 8 | UInt32(b[16]) << 16 | UInt32(b[17]) << 24
            if [12, 40, 52, 56, 64, 108, 124].contains(dib) { return .bmp }
        }
        return nil
    }

    /// ISO base media files (HEIC, HEIF, AVIF) name their kind in the `ftyp` box's brands.
    private static func isoMediaBrand(_ b: [UInt8]) -> MediaType? {
        var brands: [String] = []
        var offset = 8
        while offset + 4 <= b.count {
            if offset != 12 {  // bytes 12..<16 are the minor version, not a brand
                brands.append(String(decoding: b[offset..<offset + 4], as: UTF8.self))
            }
            offset += 4
        }
        if brands.contains(where: { $0 == "avif" || $0 == "avis" }) { return .avif }
        if brands.contains(where: { ["heic", "heix", "heim", "heis", "hevc", "hevx"].contains($0) }) { return .heic }
        if brands.contains(where: { $0 == "mif1" || $0 == "msf1" }) { return .heif }
        return nil
    }

    /// The media type a file name's extension suggests, or `nil` for unknown extensions.
    public static func type(forFileName name: String) -> MediaType? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "jpg", "jpeg", "jpe", "jfif": return .jpeg
        case "png": return .png
        case "gif": return .gif
        case "bmp", "dib": return .bmp
        case "webp": return .webp
        case "tif", "tiff": return .tiff
        case "heic": return .heic
        case "heif": return .heif
        case "avif": return .avif
        default: return nil
        }
    }

    /// Content first, then the extension, then `application/octet-stream`.
    public static func detect<C: Collection<UInt8>>(prefix: C, fileName: String) -> MediaType {
        if let sniffed = sniff(prefix) { return sniffed }
        let isText = !prefix.isEmpty && looksLikeText(prefix)
        if !isText, let byName = type(forFileName: fileName) {
            return byName
        }
        return isText ? .plainText : .octetStream
    }

    /// Text content under an image extension is a mistake the user should hear about,
    /// so the extension fallback only applies to content that is not plainly text: valid UTF-8
    /// (a sequence cut by the end of the prefix is allowed) without control characters.
    private static func looksLikeText<C: Collection<UInt8>>(_ bytes: C) -> Bool {
        let prefix = Array(bytes.prefix(prefixLength))
        for cut in 0...min(3, prefix.count - 1) {
            let candidate = prefix.dropLast(cut)
            guard let text = String(validating: candidate, as: UTF8.self) else { continue }
            return text.unicodeScalars.allSatisfy { $0 == "\t" || $0 == "\n" || $0 == "\r" || ($0.value >= 0x20 && $0.value != 0x7F) }
        }
        return false
    }
}
