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
                let from = (y * w + x) * 3, to = (dy * outWidth + dx) * 3
                out[to] = rgb[from]
                out[to + 1] = rgb[from + 1]
                out[to + 2] = rgb[from + 2]
            }
        }
        return RGBImage(width: outWidth, height: outHeight, rgb: out)
    }
}
