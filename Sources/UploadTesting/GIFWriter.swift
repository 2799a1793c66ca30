import Foundation

/// Writes GIFs for tests: 8-bit indexes and a 256-colour palette, frames with their placement,
/// interlaced or not, a transparent index. The LZW stream is the "uncompressed" form every
/// decoder reads (a clear code every 254 pixels keeps the codes 9 bits wide), so no encoder
/// library is needed.
public enum GIFWriter {
    public struct Frame {
        public var left = 0, top = 0, width: Int, height: Int
        public var indexes: [UInt8]
        public var interlaced = false
        public var transparent: UInt8?

        public init(width: Int, height: Int, indexes: [UInt8], left: Int = 0, top: Int = 0, interlaced: Bool = false, transparent: UInt8? = nil) {
            self.width = width
            self.height = height
            self.indexes = indexes
            self.left = left
            self.top = top
            self.interlaced = interlaced
            self.transparent = transparent
        }
    }

    public static func gif(width: Int, height: Int, palette: [(UInt8, UInt8, UInt8)], frames: [Frame]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        var out = Array("GIF89a".utf8) + le16(width) + le16(height) + [0xF7, 0, 0]
        for i in 0..<256 {
            let c = i < palette.count ? palette[i] : (0, 0, 0)
            out += [c.0, c.1, c.2]
        }
        if frames.count > 1 { out += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1, 0, 0, 0] }
        for frame in frames {
            out += [0x21, 0xF9, 4, frame.transparent == nil ? 0 : 1, 10, 0, frame.transparent ?? 0, 0]
            out += [0x2C] + le16(frame.left) + le16(frame.top) + le16(frame.width) + le16(frame.height) + [frame.interlaced ? 0x40 : 0]
            var rows = Array(0..<frame.height)
            if frame.interlaced {
                rows = [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: frame.height, by: step)) }
            }
            var codes: [Int] = [256]
            var sinceClear = 0
            for y in rows {
                for x in 0..<frame.width {
                    if sinceClear == 254 {
                        codes.append(256)
                        sinceClear = 0
                    }
                    codes.append(Int(frame.indexes[y * frame.width + x]))
                    sinceClear += 1
                }
            }
            codes.append(257)
            var data: [UInt8] = []
            var buffer = 0
            var bits = 0
            for code in codes {
                buffer |= code << bits
                bits += 9
                while bits >= 8 {
                    data.append(UInt8(buffer & 0xFF))
                    buffer >>= 8
                    bits -= 8
                }
            }
            if bits > 0 { data.append(UInt8(buffer & 0xFF)) }
            out.append(8)
            var at = 0
            while at < data.count {
                let n = min(255, data.count - at)
                out.append(UInt8(n))
                out += data[at..<at + n]
                at += n
            }
            out.append(0)
        }
        out.append(0x3B)
        return out
    }
}
