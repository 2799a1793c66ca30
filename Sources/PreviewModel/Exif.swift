import Foundation

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
    /// Where the photo was taken (the GPS IFD, or XMP's `exif:GPSLatitude`/`GPSLongitude`).
    public var location: GeoPoint?

    public init(orientation: Orientation = .up, dateTaken: String? = nil, camera: String? = nil, location: GeoPoint? = nil) {
        self.orientation = orientation
        self.dateTaken = dateTaken
        self.camera = camera
        self.location = location
    }

    /// Reads the EXIF of a JPEG whose first bytes are `bytes` (the APP1 segment sits near the
    /// start: 64 KiB is plenty). nil when there is none.
    public static func fromJPEG(_ bytes: [UInt8]) -> ExifSummary? {
        var summary: ExifSummary?
        var xmpLocation: GeoPoint?
        for payload in app1Payloads(bytes) {
            if summary == nil, let tiff = exifTIFF(bytes, payload) {
                summary = fromTIFF(Array(bytes[tiff]))
            } else if let location = XMPLocation.find(in: bytes[payload]) {
                xmpLocation = location
            }
        }
        return merged(summary, xmpLocation)
    }

    /// The payloads of a JPEG's APP1 segments (EXIF, XMP) before its picture data, as far as
    /// `bytes` (its first bytes) go.
    static func app1Payloads(_ bytes: [UInt8]) -> [Range<Int>] {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return [] }
        var payloads: [Range<Int>] = []
        var at = 2
        while at + 4 <= bytes.count {
            guard bytes[at] == 0xFF else { break }
            let marker = bytes[at + 1]
            if marker == 0xFF {
                at += 1
                continue
            }  // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 {
                at += 2
                continue
            }
            if marker == 0xDA || marker == 0xD9 { break }  // image data: no metadata comes after it
            let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
            guard length >= 2 else { break }
            let payload = at + 4
            let end = min(bytes.count, at + 2 + length)
            if marker == 0xE1, end > payload { payloads.append(payload..<end) }
            at += 2 + length
        }
        return payloads
    }

    /// Where the TIFF structure of an `Exif\0\0` APP1 payload lies; nil for another payload.
    static func exifTIFF(_ bytes: [UInt8], _ payload: Range<Int>) -> Range<Int>? {
        guard payload.count >= 6, bytes[payload.lowerBound..<payload.lowerBound + 6].elementsEqual("Exif\0\0".utf8) else { return nil }
        return payload.lowerBound + 6..<payload.upperBound
    }

    /// The EXIF read, with the place XMP gives when the EXIF gives none; nil when neither.
    static func merged(_ summary: ExifSummary?, _ xmpLocation: GeoPoint?) -> ExifSummary? {
        guard summary != nil || xmpLocation != nil else { return nil }
        var result = summary ?? ExifSummary()
        if result.location == nil { result.location = xmpLocation }
        return result
    }

    /// The JPEG thumbnail a camera or phone puts in its EXIF (IFD1's JPEGInterchangeFormat and
    /// its length), when the whole of it lies in `bytes`, the first bytes of a JPEG. It is the
    /// picture as it was taken: an editor may have changed the photo and left it, so it is only
    /// ever shown until the photo itself is decoded.
    public static func jpegThumbnail(_ bytes: [UInt8]) -> ArraySlice<UInt8>? {
        guard let tiff = app1Payloads(bytes).lazy.compactMap({ exifTIFF(bytes, $0) }).first,
            let reader = TIFFReader(Array(bytes[tiff])), let ifd0 = reader.uint32(at: 4),
            let ifd1 = reader.next(after: Int(ifd0)), ifd1 != Int(ifd0)
        else { return nil }
        var offset: Int?
        var size: Int?
        for entry in reader.entries(at: ifd1) {
            if entry.tag == 0x0201 { offset = reader.integer(entry) }
            if entry.tag == 0x0202 { size = reader.integer(entry) }
        }
        guard let offset, let size, size > 4, offset >= 8, offset + size <= tiff.count else { return nil }
        let thumbnail = bytes[(tiff.lowerBound + offset)..<(tiff.lowerBound + offset + size)]
        return thumbnail.starts(with: [0xFF, 0xD8]) ? thumbnail : nil
    }

    /// Reads the EXIF of a WebP whose first bytes are `bytes`: its `EXIF` chunk (the TIFF
    /// structure, or, as some writers have it, that structure after `Exif\0\0`) and its `XMP `
    /// chunk for a place. nil when there is neither in `bytes`.
    public static func fromWebP(_ bytes: [UInt8]) -> ExifSummary? {
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) else { return nil }
        var summary: ExifSummary?
        var xmpLocation: GeoPoint?
        var at = 12
        while at + 8 <= bytes.count {
            let size = Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]) << 16 | Int(bytes[at + 7]) << 24
            let payload = at + 8
            let end = min(bytes.count, payload + size)
            let name = bytes[at..<at + 4]
            if name.elementsEqual("EXIF".utf8), summary == nil {
                var tiff = payload
                if end - tiff >= 6, bytes[tiff..<tiff + 6].elementsEqual("Exif\0\0".utf8) { tiff += 6 }
                summary = fromTIFF(Array(bytes[tiff..<end]))
            } else if name.elementsEqual("XMP ".utf8), end > payload {
                xmpLocation = XMPLocation.find(packet: bytes[payload..<end])
            }
            at = payload + size + (size & 1)
        }
        return merged(summary, xmpLocation)
    }

    /// Where an XMP packet (without the APP1 namespace header) says the photo was taken.
    public static func locationInXMP(_ packet: ArraySlice<UInt8>) -> GeoPoint? {
        XMPLocation.find(packet: packet)
    }

    /// Reads a HEIF `Exif` item as stored: a 4-byte big-endian offset to the TIFF header (ISO/IEC
    /// 23008-12 Annex A.2.1), usually past an `Exif\0\0`, then the header.
    public static func fromHEIFBlock(_ block: [UInt8]) -> ExifSummary? {
        guard block.count >= 4 else { return nil }
        let offset = Int(block[0]) << 24 | Int(block[1]) << 16 | Int(block[2]) << 8 | Int(block[3])
        var start = 4 + offset
        guard start >= 4, start < block.count else { return nil }
        if block.count - start >= 6, block[start..<start + 6].elementsEqual("Exif\0\0".utf8) { start += 6 }
        return fromTIFF(Array(block[start...]))
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
            at = data + length + 4  // the CRC
        }
        return nil
    }

    /// Reads a TIFF structure (what follows "Exif\0\0").
    public static func fromTIFF(_ tiff: [UInt8]) -> ExifSummary? {
        guard let reader = TIFFReader(tiff), let ifd0 = reader.uint32(at: 4) else { return nil }
        var summary = ExifSummary()
        let entries0 = reader.entries(at: Int(ifd0))
        var make: String?
        var model: String?
        var dateTime: String?
        var exifIFD: Int?
        var gpsIFD: Int?
        for entry in entries0 {
            switch entry.tag {
            case 0x8825: gpsIFD = reader.integer(entry)
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
        if let gpsIFD, gpsIFD != Int(ifd0) { summary.location = Self.location(reader, gpsIFD) }
        return summary
    }

    /// GPSLatitudeRef/GPSLatitude/GPSLongitudeRef/GPSLongitude (tags 1-4) as a point; nil when
    /// any is missing or out of range.
    static func location(_ reader: TIFFReader, _ ifd: Int) -> GeoPoint? {
        var latitudeRef: String?
        var longitudeRef: String?
        var latitude: Double?
        var longitude: Double?
        for entry in reader.entries(at: ifd) {
            switch entry.tag {
            case 1: latitudeRef = reader.ascii(entry)
            case 2: latitude = reader.degrees(entry)
            case 3: longitudeRef = reader.ascii(entry)
            case 4: longitude = reader.degrees(entry)
            default: break
            }
        }
        guard var latitude, var longitude else { return nil }
        if latitudeRef?.uppercased() == "S" { latitude = -latitude }
        if longitudeRef?.uppercased() == "W" { longitude = -longitude }
        return GeoPoint(latitude: latitude, longitude: longitude)
    }

    static func camera(make: String?, model: String?) -> String? {
        guard let model, !model.isEmpty else { return make.flatMap { $0.isEmpty ? nil : $0 } }
        guard let make, !make.isEmpty else { return model }
        // "Canon Canon EOS R5" and "NIKON CORPORATION NIKON Z 6" read better as the model alone.
        let brand = make.split(separator: " ").first.map(String.init) ?? make
        return model.lowercased().hasPrefix(brand.lowercased()) ? model : make + " " + model
    }
}

/// A place on Earth in decimal degrees, as a photo's metadata gives it.
public struct GeoPoint: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double

    /// nil outside -90…90 and -180…180 (or not finite).
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// "48.86, 2.35": two decimals (about a kilometre), enough to say where, not which house.
    public var coarse: String {
        func two(_ value: Double) -> String {
            let hundredths = Int((abs(value) * 100).rounded())
            let fraction = hundredths % 100
            return (value < 0 && hundredths > 0 ? "-" : "") + "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
        }
        return two(latitude) + ", " + two(longitude)
    }
}

/// XMP's GPS properties (`exif:GPSLatitude="48,51.6N"`, as an attribute or an element), in an
/// APP1 segment whose payload starts with the XMP namespace.
enum XMPLocation {
    static func find(in payload: ArraySlice<UInt8>) -> GeoPoint? {
        let header = Array("http://ns.adobe.com/xap/1.0/\0".utf8)
        guard payload.count > header.count, payload.prefix(header.count).elementsEqual(header) else { return nil }
        return find(packet: payload.dropFirst(header.count))
    }

    /// The same in an XMP packet alone (a WebP `XMP ` chunk, a HEIF XMP item).
    static func find(packet: ArraySlice<UInt8>) -> GeoPoint? {
        let text = String(decoding: packet.prefix(256 * 1024), as: UTF8.self)
        guard let latitude = value(of: "GPSLatitude", in: text).flatMap(coordinate),
            let longitude = value(of: "GPSLongitude", in: text).flatMap(coordinate)
        else { return nil }
        return GeoPoint(latitude: latitude, longitude: longitude)
    }

    /// `exif:NAME="…"` or `<exif:NAME>…</exif:NAME>`.
    static func value(of name: String, in text: String) -> String? {
        for (open, close) in [("exif:\(name)=\"", "\""), ("exif:\(name)='", "'"), ("<exif:\(name)>", "<")] {
            guard let start = text.range(of: open) else { continue }
            let rest = text[start.upperBound...]
            guard let end = rest.range(of: close) else { continue }
            return String(rest[..<end.lowerBound]).trimmingCharacters(in: " ")
        }
        return nil
    }

    /// XMP's "DDD,MM,SSk" or "DDD,MM.mmk" (k: N, S, E or W) in decimal degrees.
    static func coordinate(_ text: String) -> Double? {
        guard let last = text.last, "NSEWnsew".contains(last) else { return nil }
        let parts = text.dropLast().split(separator: ",").map { Double($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil }) else { return nil }
        let numbers = parts.map { $0! }
        var degrees = numbers[0] + numbers[1] / 60 + (numbers.count == 3 ? numbers[2] / 3600 : 0)
        if "SWsw".contains(last) { degrees = -degrees }
        return degrees
    }
}

/// EXIF orientation: how the stored pixels must be turned to show the photo upright.
public enum Orientation: Int, Sendable, CaseIterable {
    case up = 1
    case upMirrored, down, downMirrored, leftMirrored, right, rightMirrored, left

    /// Whether upright, the picture is the stored one's height wide (a quarter turn).
    public var swapsSides: Bool { rawValue >= 5 }
}

/// Reads TIFF fields with the file's byte order, refusing anything out of bounds.
/// Reads a TIFF structure (EXIF's), bounds-checked at every step: for the preview's summary
/// and for what `--strip-location` keeps.
public struct TIFFReader: Sendable {
    /// One line of the EXIF summary: its label and value.
    public struct Entry: Sendable {
        public let tag: UInt16
        public let type: UInt16
        public let count: UInt32
        /// Where the entry's 4-byte value/offset field is.
        public let valueAt: Int
    }

    public let bytes: [UInt8]
    public let bigEndian: Bool

    public init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return nil }
        switch (bytes[0], bytes[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        self.bytes = bytes
        guard uint16(at: 2) == 42 else { return nil }
    }

    public func uint16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= bytes.count else { return nil }
        let a = UInt16(bytes[offset])
        let b = UInt16(bytes[offset + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    public func uint32(at offset: Int) -> UInt32? {
        guard let high = uint16(at: bigEndian ? offset : offset + 2), let low = uint16(at: bigEndian ? offset + 2 : offset) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    /// The offset of the IFD after the one at `offset` (its next-IFD link); nil at the last one
    /// or when the link lies past the bytes.
    public func next(after offset: Int) -> Int? {
        guard let count = uint16(at: offset), let link = uint32(at: offset + 2 + 12 * Int(count)), link != 0 else { return nil }
        return Int(link)
    }

    /// The entries of the IFD at `offset`; as many as fit when the directory is cut short.
    public func entries(at offset: Int) -> [Entry] {
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
    public func integer(_ entry: Entry) -> Int? {
        switch entry.type {
        case 3: uint16(at: entry.valueAt).map(Int.init)
        case 4: uint32(at: entry.valueAt).map(Int.init)
        default: nil
        }
    }

    /// The first RATIONAL of an entry as numerator and denominator (nil: another type, or a zero denominator).
    public func rational(_ entry: Entry) -> (UInt32, UInt32)? {
        guard entry.type == 5, entry.count >= 1, let offset = uint32(at: entry.valueAt),
            let numerator = uint32(at: Int(offset)), let denominator = uint32(at: Int(offset) + 4), denominator != 0
        else { return nil }
        return (numerator, denominator)
    }

    /// Three RATIONALs (degrees, minutes, seconds) as decimal degrees; nil for any other shape or
    /// a zero denominator.
    func degrees(_ entry: Entry) -> Double? {
        guard entry.type == 5, entry.count == 3, let offset = uint32(at: entry.valueAt) else { return nil }
        var parts: [Double] = []
        for i in 0..<3 {
            let at = Int(offset) + 8 * i
            guard let numerator = uint32(at: at), let denominator = uint32(at: at + 4), denominator != 0 else { return nil }
            parts.append(Double(numerator) / Double(denominator))
        }
        return parts[0] + parts[1] / 60 + parts[2] / 3600
    }

    /// An ASCII value, trimmed at its NUL and of spaces; nil when it points outside the data.
    public func ascii(_ entry: Entry) -> String? {
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

extension String {
    fileprivate func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}

extension ExifSummary {
    /// The TIFF structure of the EXIF in a file's first bytes (`head`): a JPEG's `Exif` APP1, a
    /// PNG's eXIf chunk, a WebP's EXIF chunk; nil when there is none there or for other formats.
    package static func tiff(in head: [UInt8], format: ImageProbe.Format) -> [UInt8]? {
        switch format {
        case .jpeg:
            for payload in app1Payloads(head) {
                if let tiff = exifTIFF(head, payload) { return Array(head[tiff]) }
            }
            return nil
        case .png:
            guard head.count >= 8 else { return nil }
            var at = 8
            while at + 8 <= head.count {
                let length = head[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
                let data = at + 8
                guard length >= 0, length <= Int(Int32.max) else { return nil }
                let type = head[(at + 4)..<(at + 8)]
                if type.elementsEqual("IEND".utf8) || type.elementsEqual("IDAT".utf8) { return nil }
                if type.elementsEqual("eXIf".utf8) { return data + length <= head.count ? Array(head[data..<data + length]) : nil }
                at = data + length + 4
            }
            return nil
        case .webp:
            guard head.count >= 12, head[0..<4].elementsEqual("RIFF".utf8), head[8..<12].elementsEqual("WEBP".utf8) else { return nil }
            var at = 12
            while at + 8 <= head.count {
                let size = Int(head[at + 4]) | Int(head[at + 5]) << 8 | Int(head[at + 6]) << 16 | Int(head[at + 7]) << 24
                let payload = at + 8
                guard payload + size <= head.count else { return nil }
                if head[at..<at + 4].elementsEqual("EXIF".utf8) {
                    var tiff = payload
                    if size >= 6, head[tiff..<tiff + 6].elementsEqual("Exif\0\0".utf8) { tiff += 6 }
                    return Array(head[tiff..<payload + size])
                }
                at = payload + size + (size & 1)
            }
            return nil
        default:
            return nil
        }
    }

    /// The TIFF structure inside a HEIF's EXIF block (a 4-byte offset to the header, then it).
    package static func tiff(inHEIFBlock block: [UInt8]) -> [UInt8]? {
        guard block.count >= 4 else { return nil }
        let offset = Int(block[0]) << 24 | Int(block[1]) << 16 | Int(block[2]) << 8 | Int(block[3])
        var start = 4 + offset
        guard start >= 4, start < block.count else { return nil }
        if block.count - start >= 6, block[start..<start + 6].elementsEqual("Exif\0\0".utf8) { start += 6 }
        return Array(block[start...])
    }
}
