/// uploadmon's one PNG writer: 8-bit RGB, optionally Adam7-interlaced, with chunks of the
/// caller's before the image data (eXIf, tEXt…). Without a compressor the zlib stream is made
/// of "stored" blocks (no image library needed: the demo's samples); with one (tests and
/// benchmarks pass zlib's), rows are filtered as libpng does, each with the filter that makes
/// its bytes smallest, so files compress as real ones do.
public enum PNGEncoder {
    /// How the file is written: interlacing and the chunks before the image data.
    public struct Options {
        public var interlaced: Bool
        /// Chunks written before the image data, in order.
        public var chunks: [(type: String, data: [UInt8])]
        /// Turns the filtered rows into a zlib stream; nil: stored blocks, rows unfiltered.
        public var deflate: (([UInt8]) -> [UInt8])?

        public init(interlaced: Bool = false, chunks: [(type: String, data: [UInt8])] = [], deflate: (([UInt8]) -> [UInt8])? = nil) {
            self.interlaced = interlaced
            self.chunks = chunks
            self.deflate = deflate
        }
    }

    /// `pixel(x, y)` gives the RGB colour of each pixel.
    public static func encode(width: Int, height: Int, options: Options = Options(), pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        var rgb: [UInt8] = []
        rgb.reserveCapacity(width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let (r, g, b) = pixel(x, y)
                rgb.append(r)
                rgb.append(g)
                rgb.append(b)
            }
        }
        return encode(rgb: rgb, width: width, height: height, options: options)
    }

    /// `rgb`: rows top to bottom, 3 bytes per pixel, no padding.
    public static func encode(rgb: [UInt8], width: Int, height: Int, options: Options = Options()) -> [UInt8] {
        precondition(width > 0 && height > 0, "a PNG needs at least one pixel")
        precondition(rgb.count == width * height * 3, "3 bytes per pixel")
        let filtered = options.deflate != nil
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height + (options.interlaced ? 7 * height : 0))
        rgb.withUnsafeBufferPointer { pixels in
            for pass in options.interlaced ? Self.adam7 : [Pass(x: 0, y: 0, dx: 1, dy: 1)] {
                let columns = (width - pass.x + pass.dx - 1) / pass.dx
                let rows = (height - pass.y + pass.dy - 1) / pass.dy
                guard columns > 0, rows > 0 else { continue }
                var previous = [UInt8](repeating: 0, count: columns * 3)
                var row = [UInt8](repeating: 0, count: columns * 3)
                for r in 0..<rows {
                    let y = pass.y + r * pass.dy
                    for c in 0..<columns {
                        let at = (y * width + pass.x + c * pass.dx) * 3
                        row[c * 3] = pixels[at]
                        row[c * 3 + 1] = pixels[at + 1]
                        row[c * 3 + 2] = pixels[at + 2]
                    }
                    if filtered {
                        Self.appendFiltered(row, above: previous, to: &raw)
                    } else {
                        raw.append(0)
                        raw += row
                    }
                    swap(&previous, &row)
                }
            }
        }
        var png = signature
        png += header(width: width, height: height, interlaced: options.interlaced)
        for extra in options.chunks { png += chunk(extra.type, extra.data) }
        png += chunk("IDAT", options.deflate?(raw) ?? zlibStored(raw))
        png += chunk("IEND", [])
        return png
    }

    struct Pass {
        let x, y, dx, dy: Int
    }

    /// The seven passes of Adam7: where each starts and its steps.
    static let adam7 = [
        Pass(x: 0, y: 0, dx: 8, dy: 8), Pass(x: 4, y: 0, dx: 8, dy: 8), Pass(x: 0, y: 4, dx: 4, dy: 8), Pass(x: 2, y: 0, dx: 4, dy: 4),
        Pass(x: 0, y: 2, dx: 2, dy: 4), Pass(x: 1, y: 0, dx: 2, dy: 2), Pass(x: 0, y: 1, dx: 1, dy: 2),
    ]

    /// The row under the filter (of the five) whose bytes, read as signed, sum smallest in
    /// magnitude: libpng's heuristic.
    static func appendFiltered(_ row: [UInt8], above: [UInt8], to raw: inout [UInt8]) {
        let bpp = 3
        var best: [UInt8] = []
        var bestCost = Int.max
        var candidate = [UInt8](repeating: 0, count: row.count)
        for filter in 0..<5 {
            var cost = 0
            for i in 0..<row.count {
                let a = i >= bpp ? Int(row[i - bpp]) : 0
                let b = Int(above[i])
                let c = i >= bpp ? Int(above[i - bpp]) : 0
                let predicted: Int =
                    switch filter {
                    case 0: 0
                    case 1: a
                    case 2: b
                    case 3: (a + b) / 2
                    default: paeth(a, b, c)
                    }
                let value = UInt8(truncatingIfNeeded: Int(row[i]) - predicted)
                candidate[i] = value
                cost += value < 128 ? Int(value) : 256 - Int(value)
            }
            if cost < bestCost {
                bestCost = cost
                best = [UInt8(filter)] + candidate
            }
        }
        raw += best
    }

    static func paeth(_ a: Int, _ b: Int, _ c: Int) -> Int {
        let p = a + b - c
        let pa = abs(p - a)
        let pb = abs(p - b)
        let pc = abs(p - c)
        return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// The IHDR chunk: 8-bit truecolour, deflate, adaptive filtering, Adam7 or no interlace.
    static func header(width: Int, height: Int, interlaced: Bool = false, colourType: UInt8 = 2) -> [UInt8] {
        chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, colourType, 0, 0, interlaced ? 1 : 0])
    }

    /// 8-bit RGBA (`rgba`: 4 bytes per pixel, rows top to bottom), rows unfiltered: pictures
    /// with transparency, for tests.
    public static func encode(rgba: [UInt8], width: Int, height: Int, deflate: (([UInt8]) -> [UInt8])? = nil) -> [UInt8] {
        precondition(width > 0 && height > 0 && rgba.count == width * height * 4, "4 bytes per pixel")
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 4 + 1) * height)
        for y in 0..<height {
            raw.append(0)
            raw += rgba[(y * width * 4)..<((y + 1) * width * 4)]
        }
        return signature + header(width: width, height: height, colourType: 6)
            + chunk("IDAT", deflate?(raw) ?? zlibStored(raw)) + chunk("IEND", [])
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(CRC32.checksum(typeBytes + data))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        [0x78, 0x01] + storedBlocks(data, final: true) + bigEndian(Adler32.checksum(data))
    }

    /// `data` as deflate "stored" blocks of at most 65,535 bytes; the last one says it ends the
    /// stream when `final` (empty data is one empty block).
    static func storedBlocks(_ data: [UInt8], final: Bool) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        repeat {
            let count = min(65535, data.count - offset)
            out.append(final && offset + count == data.count ? 1 : 0)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<offset + count]
            offset += count
        } while offset < data.count
        return out
    }

    package static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// CRC-32 (ISO 3309), as PNG chunks carry it.
public enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func checksum<C: Sequence<UInt8>>(_ bytes: C) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
