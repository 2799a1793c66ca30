import Foundation

extension PNGEncoder {
    /// Writes a large valid PNG quickly: the image repeats a band of `bandRows` rows, so every
    /// IDAT chunk holds the same bytes and its CRC is computed once, and the zlib Adler-32 of the
    /// whole stream is combined from the band's (RFC 1950 checksums compose). A 200 MB demo
    /// image takes well under a second this way instead of many in a debug build.
    /// `height` is rounded up to a whole number of bands. Returns the file size.
    @discardableResult
    public static func writeBanded(
        to path: String, width: Int, height: Int, bandRows: Int,
        pixel: (Int, Int) -> (UInt8, UInt8, UInt8)
    ) throws -> Int64 {
        precondition(width > 0 && height > 0 && bandRows > 0, "a PNG needs at least one pixel")
        let bands = (height + bandRows - 1) / bandRows
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * bandRows)
        for y in 0..<bandRows {
            raw.append(0)
            for x in 0..<width {
                let (r, g, b) = pixel(x, y)
                raw.append(r)
                raw.append(g)
                raw.append(b)
            }
        }
        let bandAdler = Adler32.checksum(raw)
        var total = Adler32.initial
        for _ in 0..<bands { total = Adler32.combine(total, bandAdler, secondLength: raw.count) }

        guard
            let file = FileHandle(forWritingAtPath: path)
                ?? {
                    _ = FileManager.default.createFile(atPath: path, contents: nil)
                    return FileHandle(forWritingAtPath: path)
                }()
        else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path]) }
        defer { try? file.close() }
        try file.truncate(atOffset: 0)
        var written: Int64 = 0
        func emit(_ bytes: [UInt8]) throws {
            try file.write(contentsOf: bytes)
            written += Int64(bytes.count)
        }
        try emit(signature)
        try emit(header(width: width, height: bands * bandRows))
        try emit(chunk("IDAT", [0x78, 0x01]))
        if bands > 1 {
            let middle = chunk("IDAT", storedBlocks(raw, final: false))
            for _ in 0..<(bands - 1) { try emit(middle) }
        }
        try emit(chunk("IDAT", storedBlocks(raw, final: true) + bigEndian(total)))
        try emit(chunk("IEND", []))
        return written
    }

    /// The size `writeBanded` gives a file, without writing it (to tell a finished file from a
    /// partial one): signature, IHDR, the zlib header chunk, one chunk per band (stored blocks of
    /// at most 65,535 bytes, 5 header bytes each), the Adler-32, IEND.
    public static func bandedFileSize(width: Int, height: Int, bandRows: Int) -> Int64 {
        let bands = (height + bandRows - 1) / bandRows
        let bandRaw = (width * 3 + 1) * bandRows
        let blocks = (bandRaw + 65534) / 65535
        let bandChunk = 12 + bandRaw + 5 * blocks
        return Int64(8 + 25 + 14 + bands * bandChunk + 4 + 12)
    }
}

/// Adler-32 (RFC 1950), with the combination rule that gives the checksum of A+B from those of A and B.
public enum Adler32 {
    static let modulus: UInt64 = 65521
    public static let initial: UInt32 = 1

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt64 = 1
        var b: UInt64 = 0
        var index = 0
        while index < bytes.count {
            // 5552 bytes is the most that can be summed before the 32-bit-safe reduction is due.
            let end = min(bytes.count, index + 5552)
            for i in index..<end {
                a += UInt64(bytes[i])
                b += a
            }
            a %= modulus
            b %= modulus
            index = end
        }
        return UInt32(b << 16 | a)
    }

    /// The checksum of `first` followed by `second`, where `second` covered `secondLength` bytes.
    public static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int) -> UInt32 {
        let m = modulus
        let len = UInt64(secondLength) % m
        let a1 = UInt64(first & 0xFFFF)
        let b1 = UInt64(first >> 16)
        let a2 = UInt64(second & 0xFFFF)
        let b2 = UInt64(second >> 16)
        let a = (a1 + a2 + m - 1) % m
        let b = (b1 + b2 + (len * ((a1 + m - 1) % m)) % m) % m
        return UInt32(b << 16 | a)
    }
}
