import Foundation

/// Pixels as 8-bit RGB, rows top to bottom, no padding.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public let rgb: [UInt8]

    public init(width: Int, height: Int, rgb: [UInt8]) {
        precondition(width >= 0 && height >= 0 && rgb.count == width * height * 3, "three bytes per pixel")
        self.width = width
        self.height = height
        self.rgb = rgb
    }

    public func pixel(_ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
        let i = (y * width + x) * 3
        return (rgb[i], rgb[i + 1], rgb[i + 2])
    }

    /// The picture scaled down to fit `boxWidth` x `boxHeight`, aspect kept, each output pixel
    /// the average of the pixels it covers (a picture that fits already is returned as it is).
    public func fitted(_ boxWidth: Int, _ boxHeight: Int) -> RGBImage {
        guard width > 0, height > 0, boxWidth > 0, boxHeight > 0, width > boxWidth || height > boxHeight else { return self }
        let scale = min(Double(boxWidth) / Double(width), Double(boxHeight) / Double(height))
        let outWidth = max(1, Int(Double(width) * scale))
        let outHeight = max(1, Int(Double(height) * scale))
        var out = [UInt8](repeating: 0, count: outWidth * outHeight * 3)
        rgb.withUnsafeBufferPointer { source in
            for oy in 0..<outHeight {
                let y0 = oy * height / outHeight
                let y1 = max(y0 + 1, (oy + 1) * height / outHeight)
                for ox in 0..<outWidth {
                    let x0 = ox * width / outWidth
                    let x1 = max(x0 + 1, (ox + 1) * width / outWidth)
                    var r = 0
                    var g = 0
                    var b = 0
                    for y in y0..<y1 {
                        var i = (y * width + x0) * 3
                        for _ in x0..<x1 {
                            r += Int(source[i])
                            g += Int(source[i + 1])
                            b += Int(source[i + 2])
                            i += 3
                        }
                    }
                    let n = (y1 - y0) * (x1 - x0)
                    let o = (oy * outWidth + ox) * 3
                    out[o] = UInt8(r / n)
                    out[o + 1] = UInt8(g / n)
                    out[o + 2] = UInt8(b / n)
                }
            }
        }
        return RGBImage(width: outWidth, height: outHeight, rgb: out)
    }

    /// The picture turned upright as EXIF `orientation` says (all eight values).
    public func upright(_ orientation: Orientation) -> RGBImage {
        guard orientation != .up else { return self }
        let (w, h) = (width, height)
        let outWidth = orientation.swapsSides ? h : w
        let outHeight = orientation.swapsSides ? w : h
        var out = [UInt8](repeating: 0, count: rgb.count)
        for y in 0..<h {
            for x in 0..<w {
                let (dx, dy): (Int, Int)
                switch orientation {
                case .up: (dx, dy) = (x, y)
                case .upMirrored: (dx, dy) = (w - 1 - x, y)
                case .down: (dx, dy) = (w - 1 - x, h - 1 - y)
                case .downMirrored: (dx, dy) = (x, h - 1 - y)
                case .leftMirrored: (dx, dy) = (y, x)
                case .right: (dx, dy) = (h - 1 - y, x)
                case .rightMirrored: (dx, dy) = (h - 1 - y, w - 1 - x)
                case .left: (dx, dy) = (y, w - 1 - x)
                }
                let from = (y * w + x) * 3
                let to = (dy * outWidth + dx) * 3
                out[to] = rgb[from]
                out[to + 1] = rgb[from + 1]
                out[to + 2] = rgb[from + 2]
            }
        }
        return RGBImage(width: outWidth, height: outHeight, rgb: out)
    }
}
