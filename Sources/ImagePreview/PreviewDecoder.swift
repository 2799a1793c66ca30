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

/// Decodes JPEG (libjpeg-turbo, scaled while decoding) and PNG (libpng, row by row) into a
/// picture that fits a box, upright per EXIF. Blocking: run it off the UI's loop.
public enum PreviewDecoder {
    /// Pictures that need all their pixels in memory at once (interlaced PNG, progressive JPEG)
    /// are refused above this many: 64 megapixels (about 200 MB while decoding).
    public static let maxWholePixels: Int64 = 64_000_000

    public static func decode(path: String, fitting width: Int, _ height: Int, cancel: CancelFlag? = nil) -> Result<Preview, PreviewProblem> {
        guard width > 0, height > 0 else { return .failure(.cannotPreview("no room to draw", nil)) }
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
        let exif = probe.format == .jpeg ? ExifSummary.fromJPEG(head) : probe.format == .png ? ExifSummary.fromPNG(head) : nil
        if let exif {
            orientation = exif.orientation
            info.dateTaken = exif.dateTaken
            info.camera = exif.camera
            info.location = exif.location
            if orientation.swapsSides { (info.width, info.height) = (info.height, info.width) }
        }
        guard probe.format == .jpeg || probe.format == .png else { return .failure(.noPreview(info)) }
        // The box for the stored pixels: turned when the picture is shown a quarter turn around.
        let (boxWidth, boxHeight) = orientation.swapsSides ? (height, width) : (width, height)
        var image = um_image()
        defer { um_image_free(&image) }
        let flag = cancel?.pointer
        let status = PathText.withCString(path) { cPath in
            probe.format == .jpeg
                ? um_decode_jpeg(cPath, Int32(boxWidth), Int32(boxHeight), maxWholePixels, flag, &image)
                : um_decode_png(cPath, Int32(boxWidth), Int32(boxHeight), maxWholePixels, flag, &image)
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

/// Writes pictures (tests and the demo's samples).
public enum PictureWriter {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A baseline JPEG of `image`, with an EXIF APP1 payload (starting "Exif\0\0") when given.
    public static func jpeg(_ image: RGBImage, to path: String, quality: Int = 90, exif: [UInt8]? = nil) throws {
        var error = [CChar](repeating: 0, count: 200)
        let status = image.rgb.withUnsafeBufferPointer { rgb in
            if let exif {
                exif.withUnsafeBufferPointer { app1 in
                    um_write_jpeg(path, rgb.baseAddress, Int32(image.width), Int32(image.height), Int32(quality), app1.baseAddress, app1.count, &error, error.count)
                }
            } else {
                um_write_jpeg(path, rgb.baseAddress, Int32(image.width), Int32(image.height), Int32(quality), nil, 0, &error, error.count)
            }
        }
        guard status == 0 else { throw Failure(description: Self.text(error)) }
    }

    /// A progressive JPEG of `image` (libjpeg's standard scan script, about ten scans).
    public static func progressiveJPEG(_ image: RGBImage, to path: String, quality: Int = 90) throws {
        var error = [CChar](repeating: 0, count: 200)
        let status = image.rgb.withUnsafeBufferPointer { rgb in
            um_write_progressive_jpeg(path, rgb.baseAddress, Int32(image.width), Int32(image.height), Int32(quality), &error, error.count)
        }
        guard status == 0 else { throw Failure(description: Self.text(error)) }
    }

    static func text(_ chars: [CChar]) -> String {
        String(decoding: chars.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A PNG of `image`; `exif` (the same payload as for a JPEG, "Exif\0\0" and a TIFF
    /// structure) goes into an eXIf chunk, which holds the TIFF structure alone.
    public static func png(_ image: RGBImage, to path: String, interlaced: Bool = false, exif: [UInt8]? = nil) throws {
        var error = [CChar](repeating: 0, count: 200)
        let tiff = exif.map { Array($0.starts(with: Array("Exif\0\0".utf8)) ? $0.dropFirst(6) : $0[...]) } ?? []
        let status = image.rgb.withUnsafeBufferPointer { rgb in
            tiff.withUnsafeBufferPointer { exifBytes in
                um_write_png(path, rgb.baseAddress, Int32(image.width), Int32(image.height), interlaced ? 1 : 0,
                             exifBytes.isEmpty ? nil : exifBytes.baseAddress, exifBytes.count, &error, error.count)
            }
        }
        guard status == 0 else { throw Failure(description: Self.text(error)) }
    }

    /// An EXIF payload with IFD0 orientation and, optionally, make/model and a DateTimeOriginal
    /// in an Exif sub-IFD: in either byte order.
    public static func exif(orientation: Int, bigEndian: Bool, make: String? = nil, model: String? = nil, dateTaken: String? = nil) -> [UInt8] {
        var tiff: [UInt8] = bigEndian ? [0x4D, 0x4D, 0, 42, 0, 0, 0, 8] : [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? [24, 16, 8, 0].map { UInt8(v >> $0 & 0xFF) } : [0, 8, 16, 24].map { UInt8(v >> $0 & 0xFF) } }
        var entries: [(tag: Int, type: Int, count: Int, data: [UInt8])] = [(0x0112, 3, 1, u16(orientation) + [0, 0])]
        if let make { entries.append((0x010F, 2, make.utf8.count + 1, Array(make.utf8) + [0])) }
        if let model { entries.append((0x0110, 2, model.utf8.count + 1, Array(model.utf8) + [0])) }
        if dateTaken != nil { entries.append((0x8769, 4, 1, [])) }
        let ifd0Size = 2 + 12 * entries.count + 4
        var extra: [UInt8] = []
        var directory = u16(entries.count)
        let extraBase = 8 + ifd0Size
        for entry in entries {
            directory += u16(entry.tag) + u16(entry.type) + u32(entry.count)
            if entry.tag == 0x8769 {
                directory += u32(0) // patched below
            } else if entry.data.count <= 4 {
                directory += entry.data + [UInt8](repeating: 0, count: 4 - entry.data.count)
            } else {
                directory += u32(extraBase + extra.count)
                extra += entry.data
            }
        }
        directory += u32(0)
        if let dateTaken {
            let exifAt = extraBase + extra.count
            let pointerAt = 2 + 12 * (entries.firstIndex { $0.tag == 0x8769 }!) + 8
            directory.replaceSubrange(pointerAt..<pointerAt + 4, with: u32(exifAt))
            let date = Array(dateTaken.utf8) + [0]
            extra += u16(1) + u16(0x9003) + u16(2) + u32(date.count) + u32(exifAt + 18) + u32(0) + date
        }
        tiff += directory + extra
        return Array("Exif\0\0".utf8) + tiff
    }
}
