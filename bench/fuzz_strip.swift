// libFuzzer entry for the Swift container parsers (bench/fuzz-strip): --strip-location's
// JPEG, PNG, WebP and HEIF rewriters, the TIFF (EXIF) readers behind them and behind the
// preview's information line, and the header probe. FUZZ_PARSER picks one family; the seeds
// it starts from are of that format, and each input goes through every reader of it.
import Foundation

let parser = ProcessInfo.processInfo.environment["FUZZ_PARSER"] ?? "all"

func strip(_ bytes: [UInt8]) {
    _ = try? LocationStripper.edits(size: Int64(bytes.count)) { offset, count in
        guard offset >= 0, offset < Int64(bytes.count), count >= 0 else { return [] }
        let end = Int(min(Int64(bytes.count), offset + Int64(count)))
        return Array(bytes[Int(offset)..<end])
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch parser {
    case "jpeg":
        strip(bytes)
        _ = ExifSummary.fromJPEG(bytes)
        _ = ExifSummary.jpegThumbnail(bytes)
    case "png":
        strip(bytes)
        _ = ExifSummary.fromPNG(bytes)
    case "webp":
        strip(bytes)
        _ = ExifSummary.fromWebP(bytes)
    case "heif":
        strip(bytes)
        _ = ExifSummary.fromHEIFBlock(bytes)
    case "tiff":
        _ = KeptExif.read(tiff: bytes).map { $0.tiff() }
        _ = ExifSummary.fromTIFF(bytes)
    default:
        strip(bytes)
        _ = KeptExif.read(tiff: bytes)
        _ = ExifSummary.fromTIFF(bytes)
    }
    _ = ImageProbe.probe(bytes)
    return 0
}
