/// Builds TIFF structures (EXIF's) for tests, laid out as a hostile file would: any number of
/// directories in either byte order, entries pointing at other directories, a next-IFD link
/// or none, values stored after each directory.
public struct TIFFBuilder {
    public enum Value {
        case ascii(String)
        case short(Int)
        case long(Int)
        case rationals([(Int, Int)])
        case undefined([UInt8])
        /// A LONG holding the offset of directory number `n`.
        case directory(Int)
    }

    public struct Directory {
        public var entries: [(tag: Int, value: Value)]
        /// The next-IFD link: the number of another directory, nil for 0, or omitted altogether.
        public var next: Int?
        public var omitNext: Bool

        public init(_ entries: [(tag: Int, value: Value)], next: Int? = nil, omitNext: Bool = false) {
            self.entries = entries
            self.next = next
            self.omitNext = omitNext
        }
    }

    public var bigEndian: Bool
    public var directories: [Directory]

    public init(bigEndian: Bool, _ directories: [Directory]) {
        self.bigEndian = bigEndian
        self.directories = directories
    }

    func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func u32(_ v: Int) -> [UInt8] { bigEndian ? [24, 16, 8, 0].map { UInt8(v >> $0 & 0xFF) } : [0, 8, 16, 24].map { UInt8(v >> $0 & 0xFF) } }

    func encoded(_ value: Value, offsets: [Int]) -> (type: Int, count: Int, bytes: [UInt8]) {
        switch value {
        case .ascii(let text):
            let b = Array(text.utf8) + [0]
            return (2, b.count, b)
        case .short(let v): return (3, 1, u16(v))
        case .long(let v): return (4, 1, u32(v))
        case .rationals(let list): return (5, list.count, list.flatMap { u32($0.0) + u32($0.1) })
        case .undefined(let b): return (7, b.count, b)
        case .directory(let n): return (4, 1, u32(offsets.indices.contains(n) ? offsets[n] : 0))
        }
    }

    func size(of directory: Directory) -> Int {
        var total = 2 + 12 * directory.entries.count + (directory.omitNext ? 0 : 4)
        for entry in directory.entries {
            let n = encoded(entry.value, offsets: []).bytes.count
            if n > 4 { total += n + n % 2 }
        }
        return total
    }

    /// The TIFF bytes (what follows "Exif\0\0").
    public func bytes() -> [UInt8] {
        var offsets: [Int] = []
        var at = 8
        for directory in directories {
            offsets.append(at)
            at += size(of: directory)
        }
        var out: [UInt8] = (bigEndian ? [0x4D, 0x4D, 0, 42] : [0x49, 0x49, 42, 0]) + u32(8)
        for (index, directory) in directories.enumerated() {
            var head = u16(directory.entries.count)
            var values: [UInt8] = []
            let valuesAt = offsets[index] + 2 + 12 * directory.entries.count + (directory.omitNext ? 0 : 4)
            for entry in directory.entries {
                let (type, count, bytes) = encoded(entry.value, offsets: offsets)
                head += u16(entry.tag) + u16(type) + u32(count)
                if bytes.count <= 4 {
                    head += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
                } else {
                    head += u32(valuesAt + values.count)
                    values += bytes
                    if bytes.count % 2 == 1 { values.append(0) }
                }
            }
            if !directory.omitNext { head += u32(directory.next.map { offsets[$0] } ?? 0) }
            out += head + values
        }
        return out
    }

    /// A GPS directory's entries for a point, with `area` as GPSAreaInformation (ASCII).
    public static func gps(latitude: (Int, Int, Int), longitude: (Int, Int, Int), area: String) -> [(tag: Int, value: Value)] {
        [
            (1, .ascii("N")), (2, .rationals([(latitude.0, 1), (latitude.1, 1), (latitude.2, 100)])),
            (3, .ascii("E")), (4, .rationals([(longitude.0, 1), (longitude.1, 1), (longitude.2, 100)])),
            (0x1C, .ascii(area)),
        ]
    }
}
