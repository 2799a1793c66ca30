import CDeflate
import CTestImages
import Foundation
import Glibc
import PreviewModel
import UploadCore

/// Writes pictures for tests and benchmarks: JPEGs through libjpeg, PNGs through uploadmon's
/// one PNG writer (`PNGEncoder`) with zlib's compression, as real files are.
public enum PictureWriter {
    /// The head of a JPEG that says where it was taken: SOI, an EXIF APP1 whose IFD0 points to
    /// a GPS IFD (one rational), SOF0 and SOS. Scan data follows (bytes without 0xFF), then EOI.
    public static let locatedJPEGHead: [UInt8] = {
        var tiff: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        tiff += [1, 0] + [0x25, 0x88, 4, 0, 1, 0, 0, 0, 26, 0, 0, 0] + [0, 0, 0, 0]
        tiff += [1, 0] + [2, 0, 5, 0, 3, 0, 0, 0, 44, 0, 0, 0] + [0, 0, 0, 0]
        tiff += [48, 0, 0, 0, 1, 0, 0, 0, 51, 0, 0, 0, 1, 0, 0, 0, 96, 11, 0, 0, 100, 0, 0, 0]
        let app1 = Array("Exif\0\0".utf8) + tiff
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, UInt8((app1.count + 2) >> 8), UInt8((app1.count + 2) & 0xFF)] + app1
        bytes += [0xFF, 0xC0, 0, 11, 8, 0, 1, 0, 1, 1, 1, 0x11, 0]
        bytes += [0xFF, 0xDA, 0, 8, 1, 1, 0, 0, 63, 0]
        return bytes
    }()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// A baseline JPEG of `image`, with an EXIF APP1 payload (starting "Exif\0\0") when given.
    public static func jpeg(_ image: RGBImage, to path: String, quality: Int = 90, exif: [UInt8]? = nil) throws {
        var error = [CChar](repeating: 0, count: 200)
        let status = image.rgb.withUnsafeBufferPointer { rgb in
            if let exif {
                exif.withUnsafeBufferPointer { app1 in
                    um_write_jpeg(
                        path, rgb.baseAddress, Int32(image.width), Int32(image.height), Int32(quality), app1.baseAddress, app1.count, &error, error.count)
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
        let tiff = exif.map { Array($0.starts(with: Array("Exif\0\0".utf8)) ? $0.dropFirst(6) : $0[...]) }
        let options = PNGEncoder.Options(interlaced: interlaced, chunks: tiff.map { [("eXIf", $0)] } ?? [], deflate: Self.zlib)
        let bytes = PNGEncoder.encode(rgb: image.rgb, width: image.width, height: image.height, options: options)
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw Failure(description: "cannot create \(path)")
        }
    }

    /// An EXIF payload ("Exif\0\0" and a TIFF structure) as a camera writes one with a JPEG
    /// thumbnail: IFD0 (make, model, orientation, each when given), then IFD1 pointing at
    /// `thumbnail`, which follows the structure.
    public static func exif(thumbnail: [UInt8], make: String? = nil, model: String? = nil, orientation: Int = 1, bigEndian: Bool = false) -> [UInt8] {
        var ifd0: [(tag: Int, value: TIFFBuilder.Value)] = []
        if let make { ifd0.append((0x010F, .ascii(make))) }
        if let model { ifd0.append((0x0110, .ascii(model))) }
        ifd0.append((0x0112, .short(orientation)))
        func tiff(offset: Int) -> [UInt8] {
            TIFFBuilder(
                bigEndian: bigEndian,
                [
                    TIFFBuilder.Directory(ifd0, next: 1),
                    TIFFBuilder.Directory([(0x0103, .short(6)), (0x0201, .long(offset)), (0x0202, .long(thumbnail.count))]),
                ]
            ).bytes()
        }
        return Array("Exif\0\0".utf8) + tiff(offset: tiff(offset: 0).count) + thumbnail
    }

    /// A PNG with transparency: `rgba` holds 4 bytes per pixel.
    public static func pngRGBA(width: Int, height: Int, rgba: [UInt8], to path: String) throws {
        let bytes = PNGEncoder.encode(rgba: rgba, width: width, height: height, deflate: Self.zlib)
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw Failure(description: "cannot create \(path)")
        }
    }

    /// `bytes` as a zlib stream at zlib's default level.
    public static func zlib(_ bytes: [UInt8]) -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = bytes.withUnsafeBufferPointer { um_zlib_compress($0.baseAddress, $0.count, 6, &output, &length) }
        guard status == 0, let output else { fatalError("zlib is out of memory") }
        defer { free(output) }
        return Array(UnsafeBufferPointer(start: output, count: length))
    }

    /// The zlib stream `bytes` inflated to exactly `size` bytes, or nil when it is broken or
    /// comes to another size.
    public static func inflate(_ bytes: [UInt8], size: Int) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: size)
        let status = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { um_zlib_inflate(input.baseAddress, input.count, $0.baseAddress, size) }
        }
        return status == 0 ? output : nil
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
                directory += u32(0)  // patched below
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
