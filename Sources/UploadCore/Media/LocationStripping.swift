/// One change to a file's bytes as sent: the original bytes `range` replaced by `replacement`.
public struct ByteEdit: Sendable, Equatable {
    public var range: Range<Int64>
    public var replacement: [UInt8]

    public init(range: Range<Int64>, replacement: [UInt8]) {
        self.range = range
        self.replacement = replacement
    }
}

/// A file as it is sent with some of its bytes changed: edits sorted and apart, every other
/// byte the file's own. Deterministic from the file, so its length is known before sending and
/// a retried or resumed upload makes the same bytes again.
public struct EditedFile: Sendable, Equatable {
    public let edits: [ByteEdit]
    public let originalSize: Int64

    public init(edits: [ByteEdit], originalSize: Int64) {
        self.edits = edits.sorted { $0.range.lowerBound < $1.range.lowerBound }
        self.originalSize = originalSize
    }

    public var size: Int64 {
        edits.reduce(originalSize) { $0 - Int64($1.range.count) + Int64($1.replacement.count) }
    }

    /// Where the bytes of `virtual..<virtual + count` come from: runs of the original file and of
    /// replacement bytes, in order. Past the end, the original file's own bytes past its end (so
    /// a file that grew still shows as having grown).
    public enum Piece: Equatable {
        case file(offset: Int64, count: Int)
        case bytes([UInt8])
    }

    public func pieces(at virtual: Int64, count: Int) -> [Piece] {
        var pieces: [Piece] = []
        var want = count
        var position = virtual
        var originalAt: Int64 = 0   // original offset of the current run's start
        var virtualAt: Int64 = 0    // virtual offset of the same point
        for edit in edits {
            // The untouched run before this edit.
            let runLength = edit.range.lowerBound - originalAt
            if want > 0, position < virtualAt + runLength {
                let start = position - virtualAt
                let n = Int(min(Int64(want), runLength - start))
                pieces.append(.file(offset: originalAt + start, count: n))
                want -= n
                position += Int64(n)
            }
            virtualAt += runLength
            // The replacement.
            let length = Int64(edit.replacement.count)
            if want > 0, position < virtualAt + length {
                let start = Int(position - virtualAt)
                let n = min(want, edit.replacement.count - start)
                pieces.append(.bytes(Array(edit.replacement[start..<start + n])))
                want -= n
                position += Int64(n)
            }
            virtualAt += length
            originalAt = edit.range.upperBound
        }
        if want > 0 {
            pieces.append(.file(offset: originalAt + (position - virtualAt), count: want))
        }
        return pieces
    }
}

/// Removes where a photo was taken, for `--strip-location`: GPS in EXIF (the GPS IFD and IFD0's
/// pointer to it) and location properties in XMP, from a JPEG's APP1 segments or a PNG's `eXIf`
/// and `iTXt` chunks. Nothing else changes: no pixel is decoded or re-encoded, orientation, date
/// and camera stay, and the file keeps its length (values are zeroed or blanked with spaces)
/// except where a whole segment holding only location-bearing metadata is dropped. Formats it
/// cannot rewrite safely are refused, never sent with the location.
public enum LocationStripper {
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Whether a file that starts with `prefix` is one whose location can be removed (JPEG, PNG).
    public static func canStrip(prefix: [UInt8]) -> Bool {
        (prefix.count >= 3 && prefix[0] == 0xFF && prefix[1] == 0xD8 && prefix[2] == 0xFF)
            || (prefix.count >= 8 && Array(prefix.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    /// The edits that take the location out of the file whose bytes `read(offset, count)` gives.
    public static func edits(size: Int64, read: (Int64, Int) -> [UInt8]) throws(Refusal) -> [ByteEdit] {
        let head = read(0, 8)
        if canStrip(prefix: head) { return head[0] == 0xFF ? try jpeg(size: size, read: read) : try png(size: size, read: read) }
        throw Refusal(description: "only the location of JPEG and PNG files can be removed; this one is sent only without --strip-location")
    }

    // MARK: JPEG

    static func jpeg(size: Int64, read: (Int64, Int) -> [UInt8]) throws(Refusal) -> [ByteEdit] {
        var edits: [ByteEdit] = []
        var at: Int64 = 2
        while at + 4 <= size {
            let header = read(at, 4)
            guard header.count == 4, header[0] == 0xFF else { throw Refusal(description: "the JPEG's segments are damaged; its location cannot be removed safely") }
            let marker = header[1]
            if marker == 0xFF { at += 1; continue }
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { at += 2; continue }
            if marker == 0xDA || marker == 0xD9 { break } // image data: metadata comes before it
            let length = Int64(header[2]) << 8 | Int64(header[3])
            guard length >= 2, at + 2 + length <= size else { throw Refusal(description: "the JPEG's segments are damaged; its location cannot be removed safely") }
            if marker == 0xE1 {
                let payloadAt = at + 4
                let payload = read(payloadAt, Int(length - 2))
                if payload.starts(with: exifHeader) {
                    let tiff = Array(payload.dropFirst(exifHeader.count))
                    if let cleaned = TIFFLocation.removed(tiff), cleaned != tiff {
                        edits.append(ByteEdit(range: payloadAt + Int64(exifHeader.count)..<payloadAt + Int64(payload.count), replacement: cleaned))
                    }
                } else if payload.starts(with: xmpHeader) {
                    let xmp = Array(payload.dropFirst(xmpHeader.count))
                    let cleaned = XMPLocationText.blanked(xmp)
                    if cleaned != xmp {
                        edits.append(ByteEdit(range: payloadAt + Int64(xmpHeader.count)..<payloadAt + Int64(payload.count), replacement: cleaned))
                    }
                } else if payload.starts(with: extendedXMPHeader) {
                    // A piece of a larger XMP: it may hold location and cannot be read alone; dropped.
                    edits.append(ByteEdit(range: at..<at + 2 + length, replacement: []))
                }
            }
            at += 2 + length
        }
        return edits
    }

    static let exifHeader = Array("Exif\0\0".utf8)
    static let xmpHeader = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
    static let extendedXMPHeader = Array("http://ns.adobe.com/xmp/extension/\0".utf8)

    // MARK: PNG

    static func png(size: Int64, read: (Int64, Int) -> [UInt8]) throws(Refusal) -> [ByteEdit] {
        var edits: [ByteEdit] = []
        var at: Int64 = 8
        while at + 12 <= size {
            let header = read(at, 8)
            guard header.count == 8 else { break }
            let length = header[0..<4].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            let type = Array(header[4..<8])
            guard length <= Int64(Int32.max), at + 12 + length <= size else { throw Refusal(description: "the PNG's chunks are damaged; its location cannot be removed safely") }
            let name = String(decoding: type, as: UTF8.self)
            if name == "IEND" { break }
            let dataAt = at + 8
            switch name {
            case "eXIf":
                let tiff = read(dataAt, Int(length))
                if let cleaned = TIFFLocation.removed(tiff), cleaned != tiff {
                    edits.append(ByteEdit(range: dataAt..<dataAt + length + 4, replacement: cleaned + PNGEncoder.bigEndian(CRC32.checksum(type + cleaned))))
                }
            case "iTXt", "tEXt", "zTXt":
                let data = read(dataAt, Int(length))
                let keyword = String(decoding: data.prefix { $0 != 0 }, as: UTF8.self)
                if keyword.hasPrefix("Raw profile type") {
                    // ImageMagick's hex-encoded EXIF/XMP/IPTC: dropped whole.
                    edits.append(ByteEdit(range: at..<at + 12 + length, replacement: []))
                } else if name == "iTXt", keyword == "XML:com.adobe.xmp" {
                    // keyword NUL, compression flag, method, language NUL, translated keyword NUL, text.
                    let afterKeyword = keyword.utf8.count + 1
                    guard data.count > afterKeyword + 2 else { break }
                    if data[afterKeyword] != 0 {
                        edits.append(ByteEdit(range: at..<at + 12 + length, replacement: []))
                        break
                    }
                    var textAt = afterKeyword + 2
                    for _ in 0..<2 { textAt = (data[textAt...].firstIndex(of: 0) ?? data.count - 1) + 1 }
                    let text = Array(data[min(textAt, data.count)...])
                    let cleaned = XMPLocationText.blanked(text)
                    if cleaned != text {
                        let newData = Array(data[..<textAt]) + cleaned
                        edits.append(ByteEdit(range: dataAt..<dataAt + length + 4, replacement: newData + PNGEncoder.bigEndian(CRC32.checksum(type + newData))))
                    }
                }
            default:
                break
            }
            at += 12 + length
        }
        return edits
    }
}

/// The TIFF structure of EXIF with its location removed: IFD0's GPS pointer taken out (the
/// entries after it moved up) and the GPS IFD with every value it points to zeroed. The same
/// length; nil when the structure cannot be read.
enum TIFFLocation {
    static func removed(_ tiff: [UInt8]) -> [UInt8]? {
        guard tiff.count >= 8 else { return nil }
        let big: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): big = false
        case (0x4D, 0x4D): big = true
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return big ? Int(tiff[at]) << 8 | Int(tiff[at + 1]) : Int(tiff[at + 1]) << 8 | Int(tiff[at])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return big ? a << 16 | b : b << 16 | a
        }
        guard u16(2) == 42, let ifd0 = u32(4), let count = u16(ifd0), count < 1000, ifd0 + 2 + 12 * count + 4 <= tiff.count else { return nil }
        var out = tiff
        guard let index = (0..<count).first(where: { u16(ifd0 + 2 + 12 * $0) == 0x8825 }) else { return tiff }
        let gps = u32(ifd0 + 2 + 12 * index + 8)
        // IFD0 without the pointer: the later entries and the next-IFD offset move up 12 bytes.
        let entryAt = ifd0 + 2 + 12 * index
        let end = ifd0 + 2 + 12 * count + 4
        out.replaceSubrange(entryAt..<end - 12, with: tiff[(entryAt + 12)..<end])
        for i in (end - 12)..<end { out[i] = 0 }
        let newCount = count - 1
        if big { out[ifd0] = UInt8(newCount >> 8); out[ifd0 + 1] = UInt8(newCount & 0xFF) } else { out[ifd0] = UInt8(newCount & 0xFF); out[ifd0 + 1] = UInt8(newCount >> 8) }
        // The GPS IFD and what its entries point to, zeroed.
        if let gps, gps != ifd0, let n = u16(gps), n < 1000 {
            let sizes = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8]
            for i in 0..<n {
                let at = gps + 2 + 12 * i
                guard let type = u16(at + 2), let items = u32(at + 4) else { break }
                let bytes = (sizes[type] ?? 1) * min(items, 1 << 20)
                if bytes > 4, let offset = u32(at + 8), offset >= 0, offset + bytes <= out.count {
                    for j in offset..<offset + bytes { out[j] = 0 }
                }
            }
            let directoryEnd = min(out.count, gps + 2 + 12 * n + 4)
            if gps < directoryEnd { for j in gps..<directoryEnd { out[j] = 0 } }
        }
        return out
    }
}

/// XMP text with every location property blanked with spaces (the same length, still well-formed
/// XML: attributes and elements become whitespace): `exif:GPS…`, `photoshop:City`/`State`/
/// `Country`, `Iptc4xmpCore:Location`/`CountryCode`, `Iptc4xmpExt:LocationCreated`/`LocationShown`.
enum XMPLocationText {
    static let names = ["photoshop:City", "photoshop:State", "photoshop:Country", "Iptc4xmpCore:Location", "Iptc4xmpCore:CountryCode",
                        "Iptc4xmpExt:LocationCreated", "Iptc4xmpExt:LocationShown", "exif:GPS"]

    static func blanked(_ text: [UInt8]) -> [UInt8] {
        var out = text
        for name in names {
            let prefixOnly = name.hasSuffix("GPS") // exif:GPS… stands for every GPS property
            let pattern = Array(name.utf8)
            var i = 0
            while let found = find(pattern, in: out, from: i) {
                i = found + 1
                var nameEnd = found + pattern.count
                if prefixOnly { while nameEnd < out.count, isNameByte(out[nameEnd]) { nameEnd += 1 } }
                else if nameEnd < out.count, isNameByte(out[nameEnd]) { continue }
                let before = found > 0 ? out[found - 1] : 0x20
                if before == UInt8(ascii: "<") {
                    // An element: to its closing tag (or its own end when self-closing).
                    let element = Array(out[found..<nameEnd])
                    guard let tagEnd = out[nameEnd...].firstIndex(of: UInt8(ascii: ">")) else { continue }
                    var end = tagEnd + 1
                    if out[tagEnd - 1] != UInt8(ascii: "/"), let close = find(Array("</".utf8) + element + [UInt8(ascii: ">")], in: out, from: tagEnd) {
                        end = close + element.count + 3
                    }
                    for j in (found - 1)..<end { out[j] = 0x20 }
                } else if [0x20, 0x09, 0x0A, 0x0D].contains(before), nameEnd < out.count, out[nameEnd] == UInt8(ascii: "=") {
                    // An attribute: through its closing quote.
                    guard nameEnd + 1 < out.count, [UInt8(ascii: "\""), UInt8(ascii: "'")].contains(out[nameEnd + 1]) else { continue }
                    let quote = out[nameEnd + 1]
                    guard let close = out[(nameEnd + 2)...].firstIndex(of: quote) else { continue }
                    for j in found...close { out[j] = 0x20 }
                }
            }
        }
        return out
    }

    static func isNameByte(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
    }

    static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard !pattern.isEmpty, bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
        var i = start
        while i <= bytes.count - pattern.count {
            if bytes[i] == pattern[0], bytes[i..<i + pattern.count].elementsEqual(pattern) { return i }
            i += 1
        }
        return nil
    }
}
