import PreviewModel
import UploadCore

/// What `--strip-location` sends: the photo rebuilt from what is known safe, never the photo
/// with what was recognised taken out. A JPEG keeps its start and end markers, its frame,
/// tables (DQT, DHT, DRI, DAC, DNL) and scans (every byte of the compressed picture), a fresh
/// JFIF header without its thumbnail, its ICC profile (APP2 `ICC_PROFILE`) and a fresh Adobe
/// header (APP14, needed for CMYK); a PNG keeps its critical chunks (IHDR, PLTE, IDAT, IEND),
/// the colour chunks (tRNS, gAMA, cHRM, sRGB, iCCP, sBIT, cICP, mDCv, cLLi), pHYs, bKGD and
/// the animation chunks (acTL, fcTL, fdAT); a WebP its picture chunks (see `webp`). All get a fresh minimal EXIF (`KeptExif`:
/// orientation, date taken, camera make and model, exposure) when the photo had one. Everything
/// else goes: every other APPn segment (other EXIF, XMP, IPTC, MPF, MakerNotes, C2PA/JUMBF),
/// comments, text chunks, `eXIf` itself, unknown chunks, and all bytes after the end marker
/// (MPF's second pictures, trailers, a JPEG appended to the file).
///
/// Nothing is decoded or re-encoded: the scans are the file's own bytes, so the pixels are the
/// same. A file whose structure cannot be followed with certainty (damaged, truncated, an
/// extension of the format this does not know) is refused with the reason before anything is
/// sent. The result depends only on the file, so a retry or a resume makes the same bytes.
public enum LocationStripper {
    /// Why a file cannot be sent stripped of its location: it is refused rather than sent as it is.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Whether a file that starts with `prefix` (12 bytes or more) is one whose location can be
    /// removed (JPEG, PNG, WebP, HEIF/HEIC/AVIF).
    public static func canStrip(prefix: [UInt8]) -> Bool {
        (prefix.count >= 3 && prefix[0] == 0xFF && prefix[1] == 0xD8 && prefix[2] == 0xFF)
            || (prefix.count >= 8 && Array(prefix.prefix(8)) == pngSignature)
            || isWebP(prefix) || isHEIF(prefix)
    }

    /// The edits that turn the file whose bytes `read(offset, count)` gives into what is sent.
    public static func edits(size: Int64, read: (Int64, Int) -> [UInt8]) throws(Refusal) -> [ByteEdit] {
        let head = read(0, 12)
        guard canStrip(prefix: head) else {
            throw Refusal("only the location of JPEG, PNG, WebP, HEIC and AVIF files can be removed; this one is sent only without --strip-location")
        }
        if isHEIF(head) { return try heif(size: size, read: read) }
        let pieces =
            head[0] == 0xFF
            ? try jpeg(size: size, read: read)
            : isWebP(head) ? try webp(size: size, read: read) : try png(size: size, read: read)
        return Self.edits(from: pieces, size: size)
    }

    /// What is sent, in order: runs of the file's own bytes and bytes made here.
    enum Piece: Equatable {
        case file(Range<Int64>)
        case bytes([UInt8])
    }

    /// The pieces as edits of the original: every gap between kept runs is replaced by the
    /// bytes made for it (or by nothing).
    static func edits(from pieces: [Piece], size: Int64) -> [ByteEdit] {
        var edits: [ByteEdit] = []
        var cursor: Int64 = 0
        var pending: [UInt8] = []
        for piece in pieces {
            switch piece {
            case .bytes(let bytes):
                pending += bytes
            case .file(let range):
                if range.lowerBound != cursor || !pending.isEmpty {
                    edits.append(ByteEdit(range: cursor..<range.lowerBound, replacement: pending))
                }
                cursor = range.upperBound
                pending = []
            }
        }
        if cursor < size || !pending.isEmpty { edits.append(ByteEdit(range: cursor..<size, replacement: pending)) }
        return edits
    }

    // MARK: JPEG

    static func damaged(_ why: String) -> Refusal {
        Refusal("the JPEG \(why); its location cannot be removed with certainty, so it is not sent")
    }

    static func jpeg(size: Int64, read: (Int64, Int) -> [UInt8]) throws(Refusal) -> [Piece] {
        var kept: [Piece] = [.file(0..<2)]  // SOI
        var fresh: [UInt8] = []  // JFIF and EXIF, right after SOI
        var exif: KeptExif?
        var sawFrame = false
        var sawScan = false
        var at: Int64 = 2
        while true {
            guard at + 2 <= size else { throw damaged("ends before its end-of-image marker") }
            let marker = read(at, 2)
            guard marker.count == 2, marker[0] == 0xFF else { throw damaged("has bytes outside any segment at offset \(at)") }
            let code = marker[1]
            switch code {
            case 0xFF:
                at += 1  // a fill byte before a marker: left out
                continue
            case 0xD9:
                guard sawFrame, sawScan else { throw damaged("ends without a picture (no frame or scan)") }
                kept.append(.file(at..<at + 2))
                // Everything after the end marker (trailers, MPF pictures, appended files) is left out.
                return [kept[0], .bytes(fresh + (exif.map(exifSegment) ?? []))] + kept.dropFirst()
            case 0xD8:
                throw damaged("has a second start-of-image marker at offset \(at)")
            case 0x01, 0xD0...0xD7:
                kept.append(.file(at..<at + 2))
                at += 2
                continue
            default:
                break
            }
            guard at + 4 <= size else { throw damaged("ends inside a segment") }
            let lengthBytes = read(at + 2, 2)
            guard lengthBytes.count == 2 else { throw damaged("ends inside a segment") }
            let length = Int64(lengthBytes[0]) << 8 | Int64(lengthBytes[1])
            guard length >= 2, at + 2 + length <= size else { throw damaged("has a segment that runs past its end (offset \(at))") }
            let segment = at..<at + 2 + length
            let payloadAt = at + 4
            let payloadCount = Int(length - 2)
            switch code {
            case 0xC0...0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                sawFrame = true
                kept.append(.file(segment))
            case 0xC4, 0xCC, 0xDB, 0xDC, 0xDD:
                kept.append(.file(segment))  // DHT, DAC, DQT, DNL, DRI: what a decoder needs
            case 0xDA:
                guard sawFrame else { throw damaged("has a scan before its frame header") }
                sawScan = true
                let end = try scanEnd(from: segment.upperBound, size: size, read: read)
                kept.append(.file(at..<end))
                at = end
                continue
            case 0xE0:
                let payload = read(payloadAt, min(payloadCount, 14))
                if fresh.isEmpty, payload.count == 14, payload.starts(with: Array("JFIF\0".utf8)) {
                    // Version, units and density kept; the thumbnail (a picture of its own) is not.
                    fresh = [0xFF, 0xE0, 0x00, 0x10] + payload[0..<12] + [0, 0]
                }
            case 0xE1:
                // The first EXIF before the picture, where viewers read it (one between scans
                // turns nothing upright there, so it turns nothing here either).
                if exif == nil, !sawScan, payloadCount > 6 {
                    let payload = read(payloadAt, payloadCount)
                    if payload.starts(with: Array("Exif\0\0".utf8)) { exif = KeptExif.read(tiff: Array(payload.dropFirst(6))) }
                }
            case 0xE2:
                let name = Array("ICC_PROFILE\0".utf8)
                if payloadCount > name.count, read(payloadAt, name.count) == name { kept.append(.file(segment)) }
            case 0xEE:
                let payload = read(payloadAt, min(payloadCount, 12))
                if payload.count == 12, payload.starts(with: Array("Adobe".utf8)) {
                    // Version, flags and the colour transform; nothing after them.
                    kept.append(.bytes([0xFF, 0xEE, 0x00, 0x0E] + payload))
                }
            case 0xE3...0xED, 0xEF, 0xFE:
                break  // other APPn segments and comments: left out
            default:
                throw damaged("uses marker 0xFF\(hex(code)), which this tool does not know")
            }
            at = segment.upperBound
        }
    }

    /// Where a scan's compressed data ends: the next marker that is not a stuffed byte
    /// (`FF 00`), a restart marker or a fill byte. Read in blocks; the whole scan is read.
    static func scanEnd(from start: Int64, size: Int64, read: (Int64, Int) -> [UInt8]) throws(Refusal) -> Int64 {
        var at = start
        while at < size {
            let bytes = read(at, Int(min(Int64(1 << 20), size - at)))
            guard !bytes.isEmpty else { break }
            var i = 0
            var advance = bytes.count
            while let found = bytes[i...].firstIndex(of: 0xFF) {
                // The byte after FF is in the next block: read again from the FF.
                guard found + 1 < bytes.count else {
                    advance = found
                    break
                }
                let next = bytes[found + 1]
                if next == 0x00 || (0xD0...0xD7).contains(next) || next == 0xFF {
                    i = found + 1
                    continue
                }
                return at + Int64(found)
            }
            guard advance > 0 else { break }  // the file ends with FF
            at += Int64(advance)
        }
        throw damaged("ends inside its compressed picture (no end-of-image marker)")
    }

    static func exifSegment(_ exif: KeptExif) -> [UInt8] {
        guard !exif.isEmpty else { return [] }
        let payload = Array("Exif\0\0".utf8) + exif.tiff()
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    // MARK: PNG

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The chunks kept: the picture, its colours, its pixel size and its frames.
    static let keptChunks: Set<String> = [
        "IHDR", "PLTE", "IDAT", "IEND", "tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "cICP", "mDCv", "cLLi",
        "pHYs", "bKGD", "acTL", "fcTL", "fdAT",
    ]

    static func png(size: Int64, read: (Int64, Int) -> [UInt8]) throws(Refusal) -> [Piece] {
        func damaged(_ why: String) -> Refusal {
            Refusal("the PNG \(why); its location cannot be removed with certainty, so it is not sent")
        }
        var pieces: [Piece] = [.file(0..<8)]
        var exif: KeptExif?
        var exifPlaced = false
        var first = true
        var at: Int64 = 8
        while true {
            guard at + 12 <= size else { throw damaged("ends before its IEND chunk") }
            let header = read(at, 8)
            guard header.count == 8 else { throw damaged("ends before its IEND chunk") }
            let length = header[0..<4].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            let type = Array(header[4..<8])
            guard type.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else {
                throw damaged("has a chunk with a malformed name at offset \(at)")
            }
            guard length <= Int64(Int32.max), at + 12 + length <= size else { throw damaged("has a chunk that runs past its end (offset \(at))") }
            let name = String(decoding: type, as: UTF8.self)
            let chunk = at..<at + 12 + length
            if first {
                guard name == "IHDR" else { throw damaged("does not begin with IHDR") }
                first = false
            }
            if name == "eXIf", exif == nil {
                exif = KeptExif.read(tiff: read(at + 8, Int(length)))
            } else if keptChunks.contains(name) {
                if name == "IDAT" || name == "IEND", !exifPlaced {
                    // The fresh eXIf goes before the picture data, where viewers look for it.
                    exifPlaced = true
                    if let exif, !exif.isEmpty {
                        let data = exif.tiff()
                        pieces.append(
                            .bytes(
                                PNGEncoder.bigEndian(UInt32(data.count)) + Array("eXIf".utf8) + data
                                    + PNGEncoder.bigEndian(CRC32.checksum(Array("eXIf".utf8) + data))))
                    }
                }
                pieces.append(.file(chunk))
                if name == "IEND" { return pieces }  // and nothing after it
            } else if type[0] & 0x20 == 0 {
                throw damaged("has a critical chunk \(name) this tool does not know")
            }
            at = chunk.upperBound
        }
    }
}
