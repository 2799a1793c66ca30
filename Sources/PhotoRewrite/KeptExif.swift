import PreviewModel
import UploadCore

/// The EXIF a photo keeps under `--strip-location`: how to turn it upright, when it was taken,
/// the camera and its exposure. Read from the photo's own EXIF, each value checked for its
/// form (a date is a date, a name is printable ASCII of sensible length), and written as a
/// fresh, minimal TIFF structure: IFD0 and an Exif IFD holding these tags and nothing else
/// (no GPS IFD, no IFD1 and so no thumbnail, no MakerNote, no offsets into the old data).
public struct KeptExif: Sendable, Equatable {
    /// 1…8 (TIFF 0x0112).
    public var orientation: UInt16?
    public var make: String?
    public var model: String?
    /// "YYYY:MM:DD HH:MM:SS" (DateTimeOriginal, 0x9003).
    public var dateTaken: String?
    public var exposureTime: Rational?
    public var fNumber: Rational?
    public var iso: UInt16?
    public var focalLength: Rational?

    /// An EXIF RATIONAL: two unsigned 32-bit integers.
    public struct Rational: Sendable, Equatable {
        public var numerator: UInt32
        public var denominator: UInt32

        public init(numerator: UInt32, denominator: UInt32) {
            self.numerator = numerator
            self.denominator = denominator
        }
    }

    public init() {}

    public var isEmpty: Bool { self == KeptExif() }

    /// What of a TIFF structure is kept; nil when it is not one.
    public static func read(tiff: [UInt8]) -> KeptExif? {
        guard let reader = TIFFReader(tiff), let ifd0 = reader.uint32(at: 4) else { return nil }
        var kept = KeptExif()
        var exifIFD: Int?
        var dateTime: String?
        for entry in reader.entries(at: Int(ifd0)) {
            switch entry.tag {
            case 0x0112: kept.orientation = reader.integer(entry).flatMap { (1...8).contains($0) ? UInt16($0) : nil }
            case 0x010F: kept.make = reader.ascii(entry).flatMap(name)
            case 0x0110: kept.model = reader.ascii(entry).flatMap(name)
            case 0x0132: dateTime = reader.ascii(entry).flatMap(date)
            case 0x8769: exifIFD = reader.integer(entry)
            default: break
            }
        }
        if let exifIFD, exifIFD != Int(ifd0) {
            for entry in reader.entries(at: exifIFD) {
                switch entry.tag {
                case 0x9003: kept.dateTaken = reader.ascii(entry).flatMap(date)
                case 0x829A: kept.exposureTime = reader.rational(entry).map { Rational(numerator: $0.0, denominator: $0.1) }
                case 0x829D: kept.fNumber = reader.rational(entry).map { Rational(numerator: $0.0, denominator: $0.1) }
                case 0x8827: kept.iso = reader.integer(entry).flatMap { (1...65_535).contains($0) ? UInt16($0) : nil }
                case 0x920A: kept.focalLength = reader.rational(entry).map { Rational(numerator: $0.0, denominator: $0.1) }
                default: break
                }
            }
        }
        kept.dateTaken = kept.dateTaken ?? dateTime
        return kept
    }

    /// A camera's make or model: printable ASCII, at most 64 characters; nil otherwise.
    static func name(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 64, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return text
    }

    /// "YYYY:MM:DD HH:MM:SS" and nothing else.
    static func date(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 19 else { return nil }
        for (i, b) in bytes.enumerated() {
            switch i {
            case 4, 7, 13, 16: guard b == UInt8(ascii: ":") else { return nil }
            case 10: guard b == UInt8(ascii: " ") else { return nil }
            default: guard (0x30...0x39).contains(b) else { return nil }
            }
        }
        return text
    }

    /// The TIFF structure (big-endian) holding exactly these values.
    public func tiff() -> [UInt8] {
        struct Entry {
            let tag: UInt16, type: UInt16, count: UInt32
            let value: [UInt8]
        }
        func ascii(_ tag: UInt16, _ text: String) -> Entry {
            let bytes = Array(text.utf8) + [0]
            return Entry(tag: tag, type: 2, count: UInt32(bytes.count), value: bytes)
        }
        func short(_ tag: UInt16, _ value: UInt16) -> Entry {
            Entry(tag: tag, type: 3, count: 1, value: [UInt8(value >> 8), UInt8(value & 0xFF)])
        }
        func rational(_ tag: UInt16, _ value: Rational) -> Entry {
            Entry(tag: tag, type: 5, count: 1, value: PNGEncoder.bigEndian(value.numerator) + PNGEncoder.bigEndian(value.denominator))
        }
        var ifd0: [Entry] = []
        if let make { ifd0.append(ascii(0x010F, make)) }
        if let model { ifd0.append(ascii(0x0110, model)) }
        if let orientation { ifd0.append(short(0x0112, orientation)) }
        var exif: [Entry] = []
        if let exposureTime { exif.append(rational(0x829A, exposureTime)) }
        if let fNumber { exif.append(rational(0x829D, fNumber)) }
        if let iso { exif.append(short(0x8827, iso)) }
        if !exif.isEmpty || dateTaken != nil { exif.append(Entry(tag: 0x9000, type: 7, count: 4, value: Array("0232".utf8))) }
        if let dateTaken { exif.append(ascii(0x9003, dateTaken)) }
        if let focalLength { exif.append(rational(0x920A, focalLength)) }

        /// An IFD at `start` and the values that do not fit in its entries, after it.
        func directory(_ entries: [Entry], at start: Int) -> [UInt8] {
            var head: [UInt8] = [UInt8(entries.count >> 8), UInt8(entries.count & 0xFF)]
            var values: [UInt8] = []
            let valuesAt = start + 2 + 12 * entries.count + 4
            for entry in entries {
                head += [UInt8(entry.tag >> 8), UInt8(entry.tag & 0xFF), UInt8(entry.type >> 8), UInt8(entry.type & 0xFF)]
                head += PNGEncoder.bigEndian(entry.count)
                if entry.value.count <= 4 {
                    head += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
                } else {
                    head += PNGEncoder.bigEndian(UInt32(valuesAt + values.count))
                    values += entry.value
                    if values.count % 2 == 1 { values.append(0) }
                }
            }
            return head + [0, 0, 0, 0] + values
        }
        var out: [UInt8] = Array("MM".utf8) + [0, 42, 0, 0, 0, 8]
        if !exif.isEmpty {
            // The Exif IFD's pointer takes its place in IFD0 (tags stay in order: 0x8769 is last).
            let ifd0Size = 2 + 12 * (ifd0.count + 1) + 4 + ifd0.filter { $0.value.count > 4 }.reduce(0) { $0 + ($1.value.count + 1) / 2 * 2 }
            ifd0.append(Entry(tag: 0x8769, type: 4, count: 1, value: PNGEncoder.bigEndian(UInt32(8 + ifd0Size))))
            out += directory(ifd0, at: 8)
            out += directory(exif, at: out.count)
        } else {
            out += directory(ifd0, at: 8)
        }
        return out
    }
}
