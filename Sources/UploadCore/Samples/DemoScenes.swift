import Foundation

/// The demo's sample pictures as scenes a preview can show: a sunrise, a sunset over the sea,
/// a city at night, mountains. Each is a pixel function over the picture's size, cheap enough
/// for the 200 MB sample (a column's values are worked out once).
public enum DemoScene: Sendable, CaseIterable {
    case sunrise, sunsetSea, cityNight, mountains, smile

    public func pixels(width: Int, height: Int) -> (Int, Int) -> (UInt8, UInt8, UInt8) {
        let w = Double(width)
        let h = Double(height)
        func mix(_ a: (Double, Double, Double), _ b: (Double, Double, Double), _ t: Double) -> (UInt8, UInt8, UInt8) {
            let t = min(1, max(0, t))
            return (UInt8(a.0 + (b.0 - a.0) * t), UInt8(a.1 + (b.1 - a.1) * t), UInt8(a.2 + (b.2 - a.2) * t))
        }
        func hash(_ a: Int, _ b: Int) -> UInt32 {
            var v = UInt32(truncatingIfNeeded: a &* 73_856_093 ^ b &* 19_349_663)
            v ^= v >> 13
            v = v &* 0x5BD1_E995
            v ^= v >> 15
            return v
        }
        switch self {
        case .sunrise:
            return { x, y in
                let u = Double(x) / w
                let v = Double(y) / h
                let dx = (u - 0.5) * w / h
                let dy = v - 0.62
                if dx * dx + dy * dy < 0.012 && v < 0.62 { return (255, 214, 90) }
                if v < 0.62 { return mix((40, 70, 150), (250, 150, 80), v / 0.62) }
                return mix((70, 110, 50), (30, 60, 25), (v - 0.62) / 0.38)
            }
        case .sunsetSea:
            return { x, y in
                let u = Double(x) / w
                let v = Double(y) / h
                let dx = (u - 0.68) * w / h
                let dy = v - 0.55
                if dx * dx + dy * dy < 0.01 && v < 0.58 { return (255, 140, 40) }
                if v < 0.58 { return mix((90, 40, 110), (240, 90, 60), v / 0.58) }
                // The sea, with the sun's reflection breaking into bands.
                let band = Int((v - 0.58) * h / max(1, h / 120)) % 2 == 0
                if abs(u - 0.68) < 0.05 + (v - 0.58) * 0.2, band { return (230, 120, 50) }
                return mix((40, 40, 90), (10, 15, 40), (v - 0.58) / 0.42)
            }
        case .cityNight:
            let buildingWidth = max(1, width / 16)
            let heights = (0...16).map { 0.35 + Double(hash($0, 7) % 1000) / 1000 * 0.45 }
            return { x, y in
                let v = Double(y) / h
                let building = x / buildingWidth
                let top = 1 - heights[min(building, heights.count - 1)]
                if v >= top {
                    // Lit windows in a grid, a few dark; the gap between buildings a shade darker.
                    let inBuilding = x % buildingWidth
                    if inBuilding < buildingWidth / 12 { return (30, 32, 48) }
                    let cellX = inBuilding * 6 / buildingWidth
                    let cellY = Int(v * 30)
                    let lit = cellX % 2 == 1 && cellY % 2 == 1 && hash(building * 97 + cellX, cellY) % 4 != 0
                    return lit ? (255, 215, 110) : (70, 75, 100)
                }
                if hash(x / max(1, width / 300), y / max(1, height / 200)) % 300 == 0 { return (240, 240, 255) }
                return mix((3, 5, 25), (20, 28, 70), v)
            }
        case .mountains:
            let ridge = (0..<width).map { x -> Double in
                let u = Double(x) / w
                return 0.3 + 0.12 * abs(sin(u * 6.3)) + 0.08 * abs(sin(u * 17 + 1)) + 0.03 * abs(sin(u * 53))
            }
            return { x, y in
                let v = Double(y) / h
                let peak = ridge[x]
                if v < peak { return mix((120, 170, 230), (200, 225, 250), v / peak) }
                if v < peak + 0.05 { return (245, 245, 250) }
                if v < 0.78 { return mix((110, 100, 95), (80, 75, 70), (v - peak) / max(0.01, 0.78 - peak)) }
                return mix((90, 150, 60), (50, 100, 40), (v - 0.78) / 0.22)
            }
        case .smile:
            return { x, y in
                let u = Double(x) / w - 0.5
                let v = Double(y) / h - 0.5
                let r = (u * u + v * v).squareRoot()
                let eye =
                    ((u - 0.15) * (u - 0.15) + (v + 0.12) * (v + 0.12)).squareRoot() < 0.06
                    || ((u + 0.15) * (u + 0.15) + (v + 0.12) * (v + 0.12)).squareRoot() < 0.06
                let mouth = v > 0.05 && abs(r - 0.25) < 0.04
                if r < 0.42 { return eye || mouth ? (60, 40, 20) : (255, 205, 60) }
                return (70, 160, 220)
            }
        }
    }
}
