/// How a terminal shows real pixels, learnt by asking it (`TerminalReplies`), never from its name.
public enum PixelProtocol: String, Sendable, Equatable, CaseIterable {
    /// The kitty graphics protocol (kitty, Ghostty, WezTerm, Konsole): images over the cells,
    /// kept until deleted.
    case kitty
    /// DEC sixel (xterm -ti 340, foot, mlterm, WezTerm, …): pixels written into the cells,
    /// replaced by whatever is written there next.
    case sixel
}

/// A terminal's pixel protocol and the size of one of its cells in pixels.
public struct PixelGraphics: Sendable, Equatable {
    public var kind: PixelProtocol
    public var cellWidth: Int
    public var cellHeight: Int
    /// Inside tmux, the terminal around it: kitty pictures go through tmux's passthrough and
    /// show where Unicode placeholders are written (`KittyPlaceholders`).
    public var throughTmux: Bool

    public init(kind: PixelProtocol, cellWidth: Int, cellHeight: Int, throughTmux: Bool = false) {
        self.kind = kind
        self.cellWidth = cellWidth
        self.cellHeight = cellHeight
        self.throughTmux = throughTmux
    }

    /// Pictures are sent 1:1 (a picture pixel is a screen pixel), at most this many pixels: a
    /// preview over SSH must not cost megabytes per cursor move.
    public static let maxPixels = 480_000
}

/// A picture in real pixels over a rectangle of cells, its top-left at the rectangle's.
public struct PixelPicture: Sendable, Equatable {
    public var x: Int
    public var y: Int
    /// The cells the picture covers (its pixels rounded up to whole cells).
    public let columns: Int
    public let rows: Int
    public let width: Int
    public let height: Int
    /// RGB, three bytes a pixel, rows top to bottom.
    public let rgb: [UInt8]

    public init(x: Int, y: Int, columns: Int, rows: Int, width: Int, height: Int, rgb: [UInt8]) {
        precondition(rgb.count == width * height * 3, "three bytes per pixel")
        self.x = x
        self.y = y
        self.columns = columns
        self.rows = rows
        self.width = width
        self.height = height
        self.rgb = rgb
    }

    public var bounds: Rect { Rect(x: x, y: y, width: columns, height: rows) }

    /// The picture for a slow link: half as wide and half as high (each pixel the mean of a 2x2
    /// block), a quarter of the bytes, centred in the cells it had (`cellWidth` x `cellHeight`
    /// pixels a cell), so it lies within them. Nil when it is too small to halve.
    public func halved(cellWidth: Int, cellHeight: Int) -> PixelPicture? {
        let w = width / 2
        let h = height / 2
        guard w >= 8, h >= 8, cellWidth > 0, cellHeight > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: w * h * 3)
        rgb.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for y in 0..<h {
                    let top = 2 * y * width * 3
                    let bottom = top + width * 3
                    for x in 0..<w {
                        let left = 6 * x
                        for c in 0..<3 {
                            let sum =
                                Int(source[top + left + c]) + Int(source[top + left + 3 + c])
                                + Int(source[bottom + left + c]) + Int(source[bottom + left + 3 + c])
                            target[(y * w + x) * 3 + c] = UInt8((sum + 2) / 4)
                        }
                    }
                }
            }
        }
        let newColumns = (w + cellWidth - 1) / cellWidth
        let newRows = (h + cellHeight - 1) / cellHeight
        return PixelPicture(
            x: x + max(0, (columns - newColumns) / 2), y: y + max(0, (rows - newRows) / 2),
            columns: min(columns, newColumns), rows: min(rows, newRows), width: w, height: h, rgb: out)
    }
}

/// The kitty graphics protocol's escapes: the picture sent as RGB in base64 chunks of at most
/// 4096 bytes and shown at its cell, without moving the cursor (`C=1`) and with every answer
/// suppressed (`q=2`), so nothing arrives on the keyboard's input.
public enum KittyEncoder {
    public static let chunkSize = 4096

    /// What squeezes a picture's RGB before it goes in base64: a zlib stream (RFC 1950, the
    /// protocol's `o=z`), or nil when it cannot. The library links no zlib: the terminal's
    /// side hands it in.
    public typealias Compressor = @Sendable ([UInt8]) -> [UInt8]?

    /// `over`: the cells the picture is stretched over (kitty scales it), else 1:1.
    /// `compress`: sent compressed where that is smaller (a photo's RGB, about a third).
    public static func show(_ picture: PixelPicture, over cells: (columns: Int, rows: Int)? = nil, compress: Compressor? = nil) -> [UInt8] {
        var keys = "a=T,f=24,s=\(picture.width),v=\(picture.height),C=1,q=2,"
        if let cells { keys += "c=\(cells.columns),r=\(cells.rows)," }
        return Array("\u{1B}[\(picture.y + 1);\(picture.x + 1)H".utf8) + Array(chunks(picture.rgb, keys: keys, compress: compress).joined())
    }

    /// `rgb` in base64 as graphics commands of at most `chunkSize` payload bytes each: the first
    /// carries `keys` (and `o=z` when `compress` made it smaller), the others `continuation`;
    /// each says whether more follow (`m=`).
    public static func chunks(_ rgb: [UInt8], keys: String, continuation: String = "", compress: Compressor? = nil) -> [[UInt8]] {
        var keys = keys
        var data = rgb
        if let squeezed = compress?(rgb), squeezed.count < rgb.count {
            keys += "o=z,"
            data = squeezed
        }
        let payload = Base64.encode(data)
        var out: [[UInt8]] = []
        var offset = 0
        repeat {
            let end = min(payload.count, offset + chunkSize)
            out.append(
                Array("\u{1B}_G\(out.isEmpty ? keys : continuation)m=\(end < payload.count ? 1 : 0);".utf8)
                    + payload[offset..<end] + Array("\u{1B}\\".utf8))
            offset = end
        } while offset < payload.count
        return out
    }

    /// Deletes every picture on screen and frees its data (`d=A`): the monitor shows one at a time.
    public static let removeAll = Array("\u{1B}_Ga=d,d=A,q=2\u{1B}\\".utf8)
}

/// DEC sixel: the picture quantised to 240 colours (the 6x6x6 cube and a 24-step grey ramp,
/// with ordered dithering so gradients do not band), six pixel rows a band, each colour's row
/// run-length encoded. Pixels map 1:1 (raster attributes `"1;1;W;H`).
public enum SixelEncoder {
    static let cubeLevels = [0, 95, 135, 175, 215, 255]

    /// The palette: 216 cube colours, then 24 greys (8, 18, …, 238).
    public static let palette: [RGB] = {
        var colours: [RGB] = []
        for r in cubeLevels { for g in cubeLevels { for b in cubeLevels { colours.append(RGB(UInt8(r), UInt8(g), UInt8(b))) } } }
        for i in 0..<24 {
            let v = UInt8(8 + 10 * i)
            colours.append(RGB(v, v, v))
        }
        return colours
    }()

    /// Nearest palette entry for every 5-bit-per-channel colour.
    static let nearest: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 32 * 32 * 32)
        for r in 0..<32 {
            for g in 0..<32 {
                for b in 0..<32 {
                    let rgb = RGB(UInt8(r * 255 / 31), UInt8(g * 255 / 31), UInt8(b * 255 / 31))
                    let index = PictureEncoder.palette256(rgb) - 16
                    table[(r << 10) | (g << 5) | b] = UInt8(index)
                }
            }
        }
        return table
    }()

    /// 4x4 Bayer matrix, centred on zero, in steps of a sixteenth of the cube's spacing.
    static let bayer: [Int] = [0, 8, 2, 10, 12, 4, 14, 6, 3, 11, 1, 9, 15, 7, 13, 5].map { ($0 - 8) * 40 / 16 }

    /// Palette indices of every pixel.
    public static func quantise(_ picture: PixelPicture) -> [UInt8] {
        var indices = [UInt8](repeating: 0, count: picture.width * picture.height)
        indices.withUnsafeMutableBufferPointer { indices in
            picture.rgb.withUnsafeBufferPointer { rgb in
                nearest.withUnsafeBufferPointer { nearest in
                    for y in 0..<picture.height {
                        for x in 0..<picture.width {
                            let p = (y * picture.width + x) * 3
                            let d = bayer[(y & 3) * 4 + (x & 3)]
                            let r = max(0, min(255, Int(rgb[p]) + d)) >> 3
                            let g = max(0, min(255, Int(rgb[p + 1]) + d)) >> 3
                            let b = max(0, min(255, Int(rgb[p + 2]) + d)) >> 3
                            indices[y * picture.width + x] = nearest[(r << 10) | (g << 5) | b]
                        }
                    }
                }
            }
        }
        return indices
    }

    public static func bytes(_ picture: PixelPicture) -> [UInt8] {
        let width = picture.width
        let height = picture.height
        var out = Array("\u{1B}[\(picture.y + 1);\(picture.x + 1)H\u{1B}P0;0;0q\"1;1;\(width);\(height)".utf8)
        let indices = quantise(picture)
        var used = [Bool](repeating: false, count: palette.count)
        for index in indices { used[Int(index)] = true }
        for (i, colour) in palette.enumerated() where used[i] {
            out += Array("#\(i);2;\(Int(colour.r) * 100 / 255);\(Int(colour.g) * 100 / 255);\(Int(colour.b) * 100 / 255)".utf8)
        }
        out.reserveCapacity(out.count + width * height / 2)
        // One row of sixels per colour present in the band; reset after each, so the buffer is
        // clean for the next band.
        var sixels = [UInt8](repeating: 0, count: palette.count * width)
        var lastX = [Int](repeating: -1, count: palette.count)
        var present: [Int] = []
        sixels.withUnsafeMutableBufferPointer { sixels in
            indices.withUnsafeBufferPointer { indices in
                var bandStart = 0
                while bandStart < height {
                    present.removeAll(keepingCapacity: true)
                    for row in 0..<min(6, height - bandStart) {
                        let bit = UInt8(1 << row)
                        let base = (bandStart + row) * width
                        for x in 0..<width {
                            let colour = Int(indices[base + x])
                            if lastX[colour] < 0 { present.append(colour) }
                            sixels[colour * width + x] |= bit
                            if x > lastX[colour] { lastX[colour] = x }
                        }
                    }
                    for (n, colour) in present.enumerated() {
                        out.append(UInt8(ascii: "#"))
                        appendDecimal(colour, to: &out)
                        let row = colour * width
                        var x = 0
                        let end = lastX[colour]
                        while x <= end {
                            let value = sixels[row + x]
                            var run = 1
                            while x + run <= end && sixels[row + x + run] == value { run += 1 }
                            let character = 63 + value
                            if run > 3 {
                                out.append(UInt8(ascii: "!"))
                                appendDecimal(run, to: &out)
                                out.append(character)
                            } else {
                                for _ in 0..<run { out.append(character) }
                            }
                            x += run
                        }
                        for x in 0...end { sixels[row + x] = 0 }
                        lastX[colour] = -1
                        if n < present.count - 1 { out.append(UInt8(ascii: "$")) }
                    }
                    out.append(UInt8(ascii: "-"))
                    bandStart += 6
                }
            }
        }
        out += Array("\u{1B}\\".utf8)
        return out
    }

    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, to: &out) }
        out.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
}

/// Standard base64 (RFC 4648, with padding), for the kitty protocol's payloads.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> [UInt8] {
        let count = (bytes.count + 2) / 3 * 4
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            bytes.withUnsafeBufferPointer { input in
                alphabet.withUnsafeBufferPointer { table in
                    var i = 0
                    var o = 0
                    while i + 3 <= input.count {
                        let v = Int(input[i]) << 16 | Int(input[i + 1]) << 8 | Int(input[i + 2])
                        out[o] = table[v >> 18 & 63]
                        out[o + 1] = table[v >> 12 & 63]
                        out[o + 2] = table[v >> 6 & 63]
                        out[o + 3] = table[v & 63]
                        i += 3
                        o += 4
                    }
                    let rest = input.count - i
                    if rest > 0 {
                        let v = Int(input[i]) << 16 | (rest == 2 ? Int(input[i + 1]) << 8 : 0)
                        out[o] = table[v >> 18 & 63]
                        out[o + 1] = table[v >> 12 & 63]
                        out[o + 2] = rest == 2 ? table[v >> 6 & 63] : UInt8(ascii: "=")
                        out[o + 3] = UInt8(ascii: "=")
                    }
                }
            }
            initialized = count
        }
    }
}
