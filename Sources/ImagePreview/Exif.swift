/// What a photo's EXIF says that a preview shows: how to turn it upright, when it was taken,
/// with what camera. Read from the TIFF structure in a JPEG's APP1 segment (or a bare TIFF
/// header), big- or little-endian, bounds-checked at every step: a malformed segment yields
/// what could be read before the damage, never a crash.
public struct ExifSummary: Sendable, Equatable {
    /// 1…8 (TIFF tag 0x0112); 1 when absent or out of range.
    public var orientation: Orientation = .up
    /// `DateTimeOriginal` from the Exif sub-IFD, else `DateTime` from IFD0 ("2024:05:01 10:22:03").
    public var dateTaken: String?
    /// The camera: `Make` and `Model`, the make left out when the model already names it.
    public var camera: String?

    public init(orientation: Orientation = .up, dateTaken: String? = nil, camera: String? = nil) {
        self.orientation = orientation
        self.dateTaken = dateTaken
        self.camera = camera
    }

    /// Reads the EXIF of a JPEG whose first bytes are `bytes` (the APP1 segment sits near the
    /// start: 64 KiB is plenty). nil when there is none.
    public static func fromJPEG(_ bytes: [UInt8]) -> ExifSummary? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { return nil }
            let marker = bytes[at + 1]
            if marker == 0xFF { at += 1; continue } // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { at += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return nil } // image data: no EXIF came before it
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length >= 2 else { return nil }
            let payload = at + 4
            let end = min(bytes.count, at + 2 + length)
            if marker == 0xE1, end - payload >= 6, Array(bytes[payload..<payload + 6]) == Array("Exif\0\0".utf8) {
                return fromTIFF(Array(bytes[(payload + 6)..<end]))
            }
            at += 2 + length
        }
        return nil
    }

    /// Reads the EXIF of a PNG whose first bytes are `bytes`: its eXIf chunk (PNG 1.5 extension,
    /// PNG third edition), which holds the TIFF structure itself. nil when there is none in
    /// `bytes` (chunks are walked to IEND or the end of what was read).
    public static func fromPNG(_ bytes: [UInt8]) -> ExifSummary? {
        guard bytes.count >= 8, bytes[0..<8].elementsEqual([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
        var at = 8
        while at + 8 <= bytes.count {
            let length = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            let data = at + 8
            guard length >= 0, length <= Int(Int32.max) else { return nil }
            if type == "IEND" { return nil }
            if type == "eXIf" {
                guard data + length <= bytes.count else { return nil }
                return fromTIFF(Array(bytes[data..<(data + length)]))
            }
            at = data + length + 4 // the CRC
        }
        return nil
    }

    /// Reads a TIFF structure (what follows "Exif\0\0").
    public static func fromTIFF(_ tiff: [UInt8]) -> ExifSummary? {
        guard let reader = TIFFReader(tiff), let ifd0 = reader.uint32(at: 4) else { return nil }
        var summary = ExifSummary()
        let entries0 = reader.entries(at: Int(ifd0))
        var make: String?, model: String?, dateTime: String?
        var exifIFD: Int?
        for entry in entries0 {
            switch entry.tag {
            case 0x0112: summary.orientation = reader.integer(entry).flatMap { Orientation(rawValue: $0) } ?? .up
            case 0x010F: make = reader.ascii(entry)
            case 0x0110: model = reader.ascii(entry)
            case 0x0132: dateTime = reader.ascii(entry)
            case 0x8769: exifIFD = reader.integer(entry)
            default: break
            }
        }
        if let exifIFD, exifIFD != Int(ifd0) {
            for entry in reader.entries(at: exifIFD) where entry.tag == 0x9003 {
                summary.dateTaken = reader.ascii(entry)
            }
        }
        summary.dateTaken = summary.dateTaken ?? dateTime
        summary.camera = Self.camera(make: make, model: model)
        return summary
    }

    static func camera(make: String?, model: String?) -> String? {
        guard let model, !model.isEmpty else { return make.flatMap { $0.isEmpty ? nil : $0 } }
        guard let make, !make.isEmpty else { return model }
        // "Canon Canon EOS R5" and "NIKON CORPORATION NIKON Z 6" read better as the model alone.
        let brand = make.split(separator: " ").first.map(String.init) ?? make
        return model.lowercased().hasPrefix(brand.lowercased()) ? model : make + " " + model
    }
}

/// EXIF orientation: how the stored pixels must be turned to show the photo upright.
public enum Orientation: Int, Sendable, CaseIterable {
    case up = 1, upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Whether upright, the picture is the stored one's height wide (a quarter turn).
    public var swapsSides: Bool { rawValue >= 5 }
}

/// Reads TIFF fields with the file's byte order, refusing anything out of bounds.
struct TIFFReader {
    struct Entry {
        let tag: UInt16
        let type: UInt16
        let count: UInt32
        /// Where the entry's 4-byte value/offset field is.
        let valueAt: Int
    }

    let bytes: [UInt8]
    let bigEndian: Bool

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        self.bytes = bytes
        guard uint16(at: 2) == 42 else { return nil }
    }

    func uint16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= bytes.count else { return nil }
        let a = UInt16(bytes[offset]), b = UInt16(bytes[offset + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    func uint32(at offset: Int) -> UInt32? {
        guard let high = uint16(at: bigEndian ? offset : offset + 2), let low = uint16(at: bigEndian ? offset + 2 : offset) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    /// The entries of the IFD at `offset`; as many as fit when the directory is cut short.
    func entries(at offset: Int) -> [Entry] {
        guard let count = uint16(at: offset) else { return [] }
        var entries: [Entry] = []
        for i in 0..<min(Int(count), 1000) {
            let at = offset + 2 + 12 * i
            guard let tag = uint16(at: at), let type = uint16(at: at + 2), let n = uint32(at: at + 4), at + 12 <= bytes.count else { break }
            entries.append(Entry(tag: tag, type: type, count: n, valueAt: at + 8))
        }
        return entries
    }

    /// A SHORT or LONG value (the first of them).
    func integer(_ entry: Entry) -> Int? {
        switch entry.type {
        case 3: uint16(at: entry.valueAt).map(Int.init)
        case 4: uint32(at: entry.valueAt).map(Int.init)
        default: nil
        }
    }

    /// An ASCII value, trimmed at its NUL and of spaces; nil when it points outside the data.
    func ascii(_ entry: Entry) -> String? {
        guard entry.type == 2, entry.count > 0, entry.count < 4096 else { return nil }
        let length = Int(entry.count)
        let start: Int
        if length <= 4 {
            start = entry.valueAt
        } else {
            guard let offset = uint32(at: entry.valueAt) else { return nil }
            start = Int(offset)
        }
        guard start >= 0, start + length <= bytes.count else { return nil }
        let raw = bytes[start..<start + length].prefix { $0 != 0 }
        let text = String(decoding: raw, as: UTF8.self).trimmingCharacters(in: " ")
        return text.isEmpty ? nil : text
    }
}

private extension String {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
