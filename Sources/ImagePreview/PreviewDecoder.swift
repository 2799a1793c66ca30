import CImageDecode
import Glibc
import UploadCore
@_exported import PreviewModel

/// Set from any thread to stop a decode between scanlines.
public final class CancelFlag: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Int32>

    public init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: 0)
    }

    deinit { pointer.deallocate() }

    public func cancel() { pointer.pointee = 1 }
    public var isCancelled: Bool { pointer.pointee != 0 }
}

/// Decodes JPEG (libjpeg-turbo, scaled while decoding), PNG (libpng, row by row), WebP
/// (libwebp) and HEIF/HEIC/AVIF (libheif) into a picture that fits a box, upright per EXIF (per
/// the container's own transforms for HEIF). Blocking: run it off the UI's loop.
public enum PreviewDecoder {
    /// Pictures that need all their pixels in memory at once (interlaced PNG, progressive JPEG)
    /// are refused above this many: 64 megapixels (about 200 MB while decoding).
    public static let maxWholePixels: Int64 = 64_000_000

    /// What a file's first bytes say before any decoding: its head, format, info line and
    /// EXIF orientation.
    struct Inspected {
        var head: [UInt8]
        var probe: ImageProbe
        var info: PreviewInfo
        var orientation: Orientation
    }

    static func inspect(_ path: String) -> Result<Inspected, PreviewProblem> {
        var st = stat()
        guard PathText.withCString(path, { stat($0, &st) }) == 0 else { return .failure(.cannotPreview(String(cString: strerror(errno)), nil)) }
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .failure(.cannotPreview("not a regular file", nil)) }
        let head = readHead(path, count: ImageProbe.headLength)
        guard let head else { return .failure(.cannotPreview(String(cString: strerror(errno)), nil)) }
        var info = PreviewInfo(fileSize: Int64(st.st_size))
        guard let probe = ImageProbe.probe(head) else { return .failure(.cannotPreview("not a picture format known here", info)) }
        info.format = probe.format
        info.width = probe.width
        info.height = probe.height
        var orientation = Orientation.up
        let exif: ExifSummary? =
            switch probe.format {
            case .jpeg: ExifSummary.fromJPEG(head)
            case .png: ExifSummary.fromPNG(head)
            case .webp: ExifSummary.fromWebP(head)
            default: nil
            }
        if let exif {
            orientation = exif.orientation
            describe(&info, exif)
            if orientation.swapsSides { (info.width, info.height) = (info.height, info.width) }
        }
        return .success(Inspected(head: head, probe: probe, info: info, orientation: orientation))
    }

    /// `first`, when given, gets the file's own small copy of itself first (`firstPicture`),
    /// from the same read of the file.
    public static func decode(
        path: String, fitting width: Int, _ height: Int, cancel: CancelFlag? = nil,
        first: ((Preview) -> Void)? = nil
    ) -> Result<Preview, PreviewProblem> {
        guard width > 0, height > 0 else { return .failure(.cannotPreview("no room to draw", nil)) }
        let inspected: Inspected
        switch inspect(path) {
        case .success(let found): inspected = found
        case .failure(let problem): return .failure(problem)
        }
        let (probe, orientation) = (inspected.probe, inspected.orientation)
        var info = inspected.info
        let decodes: [ImageProbe.Format] = [.jpeg, .png, .webp, .gif, .heic, .avif]
        guard decodes.contains(probe.format) else { return .failure(.noPreview(info)) }
        if let first, cancel?.isCancelled != true, let picture = firstPicture(inspected, path: path, fitting: width, height) {
            first(picture)
        }
        // The box for the stored pixels: turned when the picture is shown a quarter turn around.
        let (boxWidth, boxHeight) = orientation.swapsSides ? (height, width) : (width, height)
        var image = um_image()
        defer { um_image_free(&image) }
        let flag = cancel?.pointer
        let status = PathText.withCString(path) { cPath in
            switch probe.format {
            case .jpeg: um_decode_jpeg(cPath, Int32(boxWidth), Int32(boxHeight), maxWholePixels, flag, &image)
            case .png: um_decode_png(cPath, Int32(boxWidth), Int32(boxHeight), maxWholePixels, flag, &image)
            case .webp: um_decode_webp(cPath, Int32(boxWidth), Int32(boxHeight), maxWholePixels, flag, &image)
            case .gif: um_decode_gif(cPath, Int32(boxWidth), Int32(boxHeight), maxWholePixels, flag, &image)
            case .avif: um_decode_avif(cPath, Int32(boxWidth), Int32(boxHeight), maxWholePixels, flag, &image)
            default: um_decode_heif(cPath, Int32(boxWidth), Int32(boxHeight), maxWholePixels, flag, &image)
            }
        }
        if probe.format == .heic || probe.format == .avif {
            // HEIF's EXIF is an item of the container, which libheif (libavif) finds; its
            // orientation is informative only (the file's own turns are applied already).
            if let block = image.exif, image.exif_size >= 4 {
                let bytes = Array(UnsafeBufferPointer(start: block, count: image.exif_size))
                if let exif = ExifSummary.fromHEIFBlock(bytes) { describe(&info, exif) }
            }
            if info.location == nil, let xmp = image.xmp, image.xmp_size > 0 {
                info.location = ExifSummary.locationInXMP(Array(UnsafeBufferPointer(start: xmp, count: image.xmp_size))[...])
            }
            if image.source_width > 0 { (info.width, info.height) = (Int(image.source_width), Int(image.source_height)) }
        }
        if cancel?.isCancelled == true { return .failure(.cancelled) }
        guard status == 0, let pixels = image.rgb else {
            let why = withUnsafeBytes(of: image.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return .failure(.cannotPreview(why.isEmpty ? "the picture cannot be decoded" : why, info))
        }
        let count = Int(image.width) * Int(image.height) * 3
        let stored = RGBImage(width: Int(image.width), height: Int(image.height), rgb: Array(UnsafeBufferPointer(start: pixels, count: count)))
        let source = (Int(image.source_width), Int(image.source_height))
        info.width = orientation.swapsSides ? source.1 : source.0
        info.height = orientation.swapsSides ? source.0 : source.1
        return .success(Preview(image: stored.upright(orientation), info: info))
    }

    /// A first picture at once: a JPEG's EXIF thumbnail (a phone's is 160x120 or larger) or a
    /// HEIF's thumbnail item fitted to the box and turned upright, marked provisional; nil when
    /// the file has none, or when a HEIF's thumbnail already serves the box (`decode` takes it
    /// then). The photo itself is decoded after it (`decode`), and replaces it.
    public static func firstPicture(path: String, fitting width: Int, _ height: Int) -> Preview? {
        guard width > 0, height > 0, case .success(let inspected) = inspect(path) else { return nil }
        return firstPicture(inspected, path: path, fitting: width, height)
    }

    static func firstPicture(_ inspected: Inspected, path: String, fitting width: Int, _ height: Int) -> Preview? {
        var info = inspected.info
        var image = um_image()
        defer { um_image_free(&image) }
        switch inspected.probe.format {
        case .jpeg:
            guard let thumbnail = ExifSummary.jpegThumbnail(inspected.head) else { return nil }
            let (boxWidth, boxHeight) = inspected.orientation.swapsSides ? (height, width) : (width, height)
            let status = Array(thumbnail).withUnsafeBufferPointer {
                um_decode_jpeg_bytes($0.baseAddress, $0.count, Int32(boxWidth), Int32(boxHeight), nil, &image)
            }
            guard status == 0 else { return nil }
        case .heic, .avif:
            let status = PathText.withCString(path) { um_decode_heif_thumbnail($0, Int32(width), Int32(height), &image) }
            guard status == 0, image.source_width > 0 else { return nil }
            // A thumbnail with all the pixels the box needs is what the decode proper takes
            // (at once): no first picture then.
            let (sw, sh) = (Double(image.source_width), Double(image.source_height))
            let scale = min(1, Double(width) / sw, Double(height) / sh)
            guard Double(image.width) < (sw * scale).rounded() - 1 else { return nil }
            (info.width, info.height) = (Int(image.source_width), Int(image.source_height))
        default:
            return nil
        }
        guard let pixels = image.rgb else { return nil }
        let stored = RGBImage(
            width: Int(image.width), height: Int(image.height),
            rgb: Array(UnsafeBufferPointer(start: pixels, count: Int(image.width) * Int(image.height) * 3)))
        return Preview(image: stored.upright(inspected.orientation), info: info, provisional: true)
    }

    /// Date, camera and place from `exif` (its orientation is the caller's to apply, or not).
    private static func describe(_ info: inout PreviewInfo, _ exif: ExifSummary) {
        info.dateTaken = exif.dateTaken
        info.camera = exif.camera
        info.location = exif.location
    }

    static func readHead(_ path: String, count: Int) -> [UInt8]? {
        let fd = PathText.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            filled += n
        }
        return Array(bytes[0..<filled])
    }
}
