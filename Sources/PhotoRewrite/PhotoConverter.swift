import CImageDecode
import Glibc
import PreviewModel
import UploadCore

/// A photo made into what the destination accepts (`--convert`, `--max-dimension`,
/// `--max-bytes`): decoded (libjpeg-turbo's scaled decoding where it still leaves every pixel
/// the size needs, as libvips does), resampled with a Lanczos-3 filter, turned upright from its
/// EXIF orientation (which is then reset), and written as JPEG or WebP. The written photo keeps
/// its colour profile; its EXIF is the photo's own with the orientation reset, or under
/// `--strip-location` only what `KeptExif` keeps. XMP, comments and thumbnails are not written.
///
/// The bytes depend only on the file and the settings (the same libraries), so a retry or a
/// resume makes the same body again.
public enum PhotoConverter {
    /// Why a photo cannot be converted: it is refused rather than sent as it is.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// A photo as written.
    public struct Converted: Sendable, Equatable {
        public let bytes: [UInt8]
        public let width: Int
        public let height: Int
        public let format: PhotoConversion.Format
        /// The quality it was written at (lower than asked when `maxBytes` needed it).
        public let quality: Int
    }

    /// Pictures decoded whole at most (HEIF, AVIF, lossless WebP, progressive JPEG): 200 MP.
    public static let maxWholePixels: Int64 = 200_000_000

    /// The first bytes read for the format and the EXIF (an APP1 holds at most 64 KiB).
    static let headLength = 256 * 1024

    /// `path` as `settings` make it; nil when nothing needs doing (the photo already has the
    /// format, the size and the bytes asked), so it goes as it is.
    public static func convert(path: String, _ settings: PhotoConversion, stripLocation: Bool) throws(Refusal) -> Converted? {
        let head = try readHead(path)
        guard let probe = ImageProbe.probe(head.bytes) else {
            throw Refusal("only photos can be converted (JPEG, PNG, WebP, HEIC, AVIF, GIF); this is not one of them")
        }
        try refuseSeveralPictures(probe.format, head.bytes)
        let target: PhotoConversion.Format
        switch settings.outcome(source: probe.format.rawValue, width: probe.width, height: probe.height, fileSize: head.fileSize) {
        case .asItIs: return nil
        case .refused(let why): throw Refusal(why)
        case .written(let format, _, _): target = format
        }
        var image = um_image()
        image.fine = 1
        defer { um_image_free(&image) }
        let side = Int32(clamping: settings.maxDimension ?? Int(Int32.max))
        let status = PathText.withCString(path) { cPath -> Int32 in
            switch probe.format {
            case .jpeg: um_decode_jpeg(cPath, side, side, maxWholePixels, nil, &image)
            case .png: um_decode_png(cPath, side, side, maxWholePixels, nil, &image)
            case .webp: um_decode_webp(cPath, side, side, maxWholePixels, nil, &image)
            case .gif: um_decode_gif(cPath, side, side, maxWholePixels, nil, &image)
            case .avif: um_decode_avif(cPath, side, side, maxWholePixels, nil, &image)
            case .heic: um_decode_heif(cPath, side, side, maxWholePixels, nil, &image)
            default: -2
            }
        }
        guard status != -2 else {
            throw Refusal("\(probe.format.rawValue) files are not converted; send it as it is or convert it first")
        }
        guard status == 0, let pixels = image.rgb else {
            let why = withUnsafeBytes(of: image.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw Refusal("the photo cannot be decoded: \(why.isEmpty ? "unknown error" : why.replacingOccurrences(of: "to preview", with: "to convert"))")
        }
        if image.images > 1 {
            throw Refusal(
                probe.format == .heic
                    ? "this HEIF holds \(image.images) pictures (a burst or a collection); it is not converted: only one would arrive"
                    : "an animated \(probe.format.rawValue) (\(image.images) frames) is not converted: only its first frame would arrive")
        }
        // The file's EXIF: HEIF's and AVIF's from the container (their turns already applied by
        // the decoder), the others' from their first bytes (their orientation applied here).
        let turnsApplied = probe.format == .heic || probe.format == .avif
        let tiff: [UInt8]? =
            turnsApplied
            ? image.exif.flatMap { ExifSummary.tiff(inHEIFBlock: Array(UnsafeBufferPointer(start: $0, count: image.exif_size))) }
            : ExifSummary.tiff(in: head.bytes, format: probe.format)
        let kept = tiff.flatMap(KeptExif.read(tiff:))
        let orientation = turnsApplied ? .up : kept?.orientation.flatMap { Orientation(rawValue: Int($0)) } ?? .up
        let count = Int(image.width) * Int(image.height) * 3
        let exif = writtenExif(tiff, kept: kept, stripLocation: stripLocation)
        var icc = image.icc.map { Array(UnsafeBufferPointer(start: $0, count: image.icc_size)) }
        if icc == nil {
            // Colours given as code points (a phone's Display P3 HEIC): written as a profile.
            switch ColourProfile.need(primaries: Int(image.colour_primaries), transfer: Int(image.transfer_characteristics)) {
            case .none: break
            case .profile(let profile, _): icc = profile
            case .refused(let why): throw Refusal(why)
            }
        }
        let decoded = UnsafeBufferPointer(start: pixels, count: count)
        guard orientation == .up else {
            // Turned: a copy, turned (the decoder's pixels are freed after).
            let upright = RGBImage(width: Int(image.width), height: Int(image.height), rgb: Array(decoded)).upright(orientation)
            return try upright.rgb.withUnsafeBufferPointer { rgb throws(Refusal) in
                try write(Pixels(rgb: rgb, width: upright.width, height: upright.height), as: target, settings: settings, exif: exif, icc: icc)
            }
        }
        // Upright already: written straight from the decoder's pixels, with no copy of them.
        return try write(Pixels(rgb: decoded, width: Int(image.width), height: Int(image.height)), as: target, settings: settings, exif: exif, icc: icc)
    }

    /// Pixels to write: 8-bit RGB rows, top to bottom, no padding.
    struct Pixels {
        let rgb: UnsafeBufferPointer<UInt8>
        let width: Int
        let height: Int
    }

    /// The EXIF the written photo carries: under `--strip-location` only what `KeptExif` keeps;
    /// otherwise the photo's own. Either way with the orientation reset to upright (the pixels
    /// are turned), and none when the photo had none.
    static func writtenExif(_ tiff: [UInt8]?, kept: KeptExif?, stripLocation: Bool) -> [UInt8]? {
        guard let tiff, var kept else { return nil }
        if stripLocation || tiff.count > 65_000 {
            // A JPEG's APP1 holds 64 KiB: larger EXIF (a MakerNote with previews) keeps the allowlist.
            kept.orientation = kept.orientation == nil ? nil : 1
            return kept.isEmpty ? nil : kept.tiff()
        }
        return uprightTIFF(tiff)
    }

    /// `tiff` with IFD0's orientation (0x0112) set to 1, in place: every other byte as it was.
    static func uprightTIFF(_ tiff: [UInt8]) -> [UInt8] {
        guard let reader = TIFFReader(tiff), let ifd0 = reader.uint32(at: 4) else { return tiff }
        var bytes = tiff
        for entry in reader.entries(at: Int(ifd0)) where entry.tag == 0x0112 && entry.type == 3 && entry.count == 1 {
            bytes[entry.valueAt] = reader.bigEndian ? 0 : 1
            bytes[entry.valueAt + 1] = reader.bigEndian ? 1 : 0
        }
        return bytes
    }

    /// `picture` written as `format` at the settings' quality, or the largest quality whose
    /// result fits `maxBytes` (found by halving the range: about six encodes).
    static func write(
        _ picture: Pixels, as format: PhotoConversion.Format, settings: PhotoConversion,
        exif: [UInt8]?, icc: [UInt8]?
    ) throws(Refusal) -> Converted {
        func encode(_ quality: Int) throws(Refusal) -> [UInt8] {
            try PhotoConverter.encode(picture, as: format, quality: quality, exif: exif, icc: icc)
        }
        let asked = settings.quality
        var best = try encode(asked)
        var quality = asked
        if let limit = settings.maxBytes, Int64(best.count) > limit {
            var low = min(PhotoConversion.lowestQuality, asked)
            var high = asked - 1
            var found: (Int, [UInt8])?
            while low <= high {
                let middle = (low + high) / 2
                let bytes = try encode(middle)
                if Int64(bytes.count) <= limit {
                    found = (middle, bytes)
                    low = middle + 1
                } else {
                    high = middle - 1
                }
            }
            guard let found else {
                let smallest = try encode(min(PhotoConversion.lowestQuality, asked))
                throw Refusal(
                    "even at quality \(min(PhotoConversion.lowestQuality, asked)) this photo is \(ByteFormat.bytes(Int64(smallest.count))) at \(picture.width) x \(picture.height), over --max-bytes \(ByteFormat.bytes(limit)); allow more bytes or give a smaller --max-dimension"
                )
            }
            (quality, best) = found
        }
        return Converted(bytes: best, width: picture.width, height: picture.height, format: format, quality: quality)
    }

    static func encode(_ picture: Pixels, as format: PhotoConversion.Format, quality: Int, exif: [UInt8]?, icc: [UInt8]?) throws(Refusal) -> [UInt8] {
        var bytes: UnsafeMutablePointer<UInt8>?
        var size = 0
        var error = [CChar](repeating: 0, count: 200)
        let rgb = picture.rgb
        let status: Int32 = (exif ?? []).withUnsafeBufferPointer { exifBytes in
            (icc ?? []).withUnsafeBufferPointer { iccBytes in
                let encoder = format == .webp ? um_encode_webp : um_encode_jpeg
                return encoder(
                    rgb.baseAddress, Int32(picture.width), Int32(picture.height), Int32(quality),
                    exif == nil ? nil : exifBytes.baseAddress, exifBytes.count,
                    icc == nil ? nil : iccBytes.baseAddress, iccBytes.count, &bytes, &size, &error, error.count)
            }
        }
        guard status == 0, let bytes else {
            throw Refusal(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        defer { free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: size))
    }

    /// An animation or a file of several pictures is refused whole, never half-converted:
    /// an APNG (acTL before the picture), an animated WebP (VP8X's animation flag).
    static func refuseSeveralPictures(_ format: ImageProbe.Format, _ head: [UInt8]) throws(Refusal) {
        switch format {
        case .png:
            var at = 8
            while at + 8 <= head.count {
                let length = head[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
                let type = head[(at + 4)..<(at + 8)]
                if type.elementsEqual("acTL".utf8) { throw Refusal("an animated PNG is not converted: only its first frame would arrive") }
                if type.elementsEqual("IDAT".utf8) || length < 0 { return }
                at += 12 + length
            }
        case .webp:
            if head.count > 20, head[12..<16].elementsEqual("VP8X".utf8), head[20] & 0x02 != 0 {
                throw Refusal("an animated WebP is not converted: only its first frame would arrive")
            }
        default:
            return
        }
    }

    struct Head {
        var bytes: [UInt8]
        var fileSize: Int64
    }

    static func readHead(_ path: String) throws(Refusal) -> Head {
        let fd = PathText.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { throw Refusal("cannot open it: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Refusal("cannot read it: \(String(cString: strerror(errno)))") }
        var bytes = [UInt8](repeating: 0, count: headLength)
        var filled = 0
        while filled < headLength {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, headLength - filled, off_t(filled)) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw Refusal("cannot read it: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            filled += n
        }
        return Head(bytes: Array(bytes.prefix(filled)), fileSize: Int64(st.st_size))
    }
}
