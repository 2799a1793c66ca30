import Foundation

/// An ICC profile for a picture described by code points instead of a profile (ITU-T H.273, as
/// HEIF's and AVIF's `nclx` colour box gives them): an iPhone's HEIC says "Display P3 primaries,
/// the sRGB curve" that way. A JPEG or WebP written from it without a profile would be read as
/// sRGB, its colours washed out; with this profile it stays Display P3.
///
/// The profile is ICC v2 (read by every viewer and browser): a display class, a matrix (the
/// primaries adapted to the D50 connection space with the Bradford transform, as ICC.1 Annex E
/// asks) and one tone curve shared by the three channels.
public enum ColourProfile {
    /// What a colour description asks of a written photo.
    public enum Need: Equatable, Sendable {
        /// sRGB or unspecified: no profile (sRGB is what a photo without one is read as).
        case none
        /// This profile, to keep the colours.
        case profile([UInt8], name: String)
        /// Colours this writer cannot keep (an HDR curve): the photo is not converted.
        case refused(String)
    }

    /// The chromaticities (x, y) of red, green, blue and white for the primaries code points
    /// written by cameras and encoders.
    static let primaries: [Int: (name: String, rgbw: [(Double, Double)])] = [
        1: ("BT.709", [(0.640, 0.330), (0.300, 0.600), (0.150, 0.060), (0.3127, 0.3290)]),
        5: ("BT.601 625", [(0.640, 0.330), (0.290, 0.600), (0.150, 0.060), (0.3127, 0.3290)]),
        6: ("BT.601 525", [(0.630, 0.340), (0.310, 0.595), (0.155, 0.070), (0.3127, 0.3290)]),
        9: ("BT.2020", [(0.708, 0.292), (0.170, 0.797), (0.131, 0.046), (0.3127, 0.3290)]),
        11: ("DCI-P3", [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060), (0.314, 0.351)]),
        12: ("Display P3", [(0.680, 0.320), (0.265, 0.690), (0.150, 0.060), (0.3127, 0.3290)]),
    ]

    /// A stored value (0…1) to linear light, for the transfer code points a photo can use.
    static func curve(_ transfer: Int) -> ((Double) -> Double)? {
        switch transfer {
        case 2, 13: { v in v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4) }  // sRGB (and unspecified)
        case 1, 6, 14, 15: { v in v < 0.081 ? v / 4.5 : pow((v + 0.099) / 1.099, 1 / 0.45) }  // BT.709 / BT.601 / BT.2020
        case 4: { v in pow(v, 2.2) }
        case 5: { v in pow(v, 2.8) }
        case 8: { v in v }
        default: nil
        }
    }

    /// What a picture with these code points (0: not given) needs when written again.
    public static func need(primaries: Int, transfer: Int) -> Need {
        if transfer == 16 || transfer == 18 {
            return .refused("an HDR photo (\(transfer == 16 ? "PQ" : "HLG") curve) is not converted: as JPEG or WebP its colours would be wrong")
        }
        let sRGBLike: Set<Int> = [0, 1, 2, 6, 13, 14, 15]
        if [0, 1, 2].contains(primaries), sRGBLike.contains(transfer) { return .none }
        guard let known = Self.primaries[primaries == 0 || primaries == 2 ? 1 : primaries] else {
            return .refused("its colours are described by primaries \(primaries), which this converter does not know; send it as it is")
        }
        guard let curve = curve(transfer == 0 ? 13 : transfer) else {
            return .refused("its colours use transfer curve \(transfer), which this converter does not know; send it as it is")
        }
        let name = primaries == 12 && [0, 2, 13].contains(transfer) ? "Display P3" : "\(known.name) (transfer \(transfer))"
        return .profile(icc(rgbw: known.rgbw, curve: curve, description: name), name: name)
    }

    /// The ICC v2 profile: header, tag table, then the tags' data, each on four bytes.
    static func icc(rgbw: [(Double, Double)], curve: (Double) -> Double, description: String) -> [UInt8] {
        let columns = adaptedColumns(rgbw)
        var tags: [(signature: String, data: [UInt8])] = [
            ("desc", descriptionTag(description)),
            ("cprt", textTag("No copyright, use freely")),
            ("wtpt", xyzTag(d50)),
            ("rXYZ", xyzTag(columns[0])), ("gXYZ", xyzTag(columns[1])), ("bXYZ", xyzTag(columns[2])),
        ]
        var table = [UInt8]("curv".utf8) + [0, 0, 0, 0] + be32(1024)
        for i in 0..<1024 {
            let linear = min(1, max(0, curve(Double(i) / 1023)))
            table += be16(UInt16((linear * 65535).rounded()))
        }
        tags.append(("rTRC", table))
        let count = tags.count + 2  // gTRC and bTRC share rTRC's data
        var data: [UInt8] = []
        var entries: [UInt8] = []
        var offset = 128 + 4 + 12 * count
        for tag in tags {
            entries += Array(tag.signature.utf8) + be32(offset) + be32(tag.data.count)
            var padded = tag.data
            while padded.count % 4 != 0 { padded.append(0) }
            data += padded
            if tag.signature == "rTRC" {
                for shared in ["gTRC", "bTRC"] { entries += Array(shared.utf8) + be32(offset) + be32(tag.data.count) }
            }
            offset += padded.count
        }
        var header = [UInt8](repeating: 0, count: 128)
        func put(_ bytes: [UInt8], at: Int) { header.replaceSubrange(at..<at + bytes.count, with: bytes) }
        put(be32(128 + 4 + entries.count + data.count), at: 0)
        put([0x02, 0x10, 0, 0], at: 8)
        put(Array("mntrRGB XYZ ".utf8), at: 12)
        put(be16(2026) + be16(1) + be16(1), at: 24)  // a fixed date: the same photo writes the same bytes
        put(Array("acsp".utf8), at: 36)
        put(xyz(d50), at: 68)
        return header + be32(count) + entries + data
    }

    /// The ICC connection space's white (D50).
    static let d50 = (0.9642, 1.0, 0.8249)

    /// The XYZ of red, green and blue (white at Y = 1), adapted from the picture's white to D50.
    static func adaptedColumns(_ rgbw: [(Double, Double)]) -> [(Double, Double, Double)] {
        func xyz(_ c: (Double, Double)) -> [Double] { [c.0 / c.1, 1, (1 - c.0 - c.1) / c.1] }
        let p = Matrix(columns: [xyz(rgbw[0]), xyz(rgbw[1]), xyz(rgbw[2])])
        let white = xyz(rgbw[3])
        let scale = p.inverse * white
        let toXYZ = Matrix(columns: (0..<3).map { c in p.column(c).map { $0 * scale[c] } })
        let bradford = Matrix(rows: [[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])
        let from = bradford * white
        let to = bradford * [d50.0, d50.1, d50.2]
        let gains = Matrix(rows: [[to[0] / from[0], 0, 0], [0, to[1] / from[1], 0], [0, 0, to[2] / from[2]]])
        let adapted = bradford.inverse * gains * bradford * toXYZ
        return (0..<3).map { c in
            let v = adapted.column(c)
            return (v[0], v[1], v[2])
        }
    }

    static func descriptionTag(_ text: String) -> [UInt8] {
        let ascii = Array(text.utf8) + [0]
        return Array("desc".utf8) + [0, 0, 0, 0] + be32(ascii.count) + ascii + be32(0) + be32(0) + [0, 0, 0] + [UInt8](repeating: 0, count: 67)
    }

    static func textTag(_ text: String) -> [UInt8] { Array("text".utf8) + [0, 0, 0, 0] + Array(text.utf8) + [0] }
    static func xyzTag(_ v: (Double, Double, Double)) -> [UInt8] { Array("XYZ ".utf8) + [0, 0, 0, 0] + xyz(v) }
    static func xyz(_ v: (Double, Double, Double)) -> [UInt8] { s15(v.0) + s15(v.1) + s15(v.2) }
    static func s15(_ v: Double) -> [UInt8] { be32(Int(Int32((v * 65536).rounded()))) }
    static func be32(_ v: Int) -> [UInt8] {
        let u = UInt32(truncatingIfNeeded: v)
        return [UInt8(u >> 24), UInt8(u >> 16 & 0xFF), UInt8(u >> 8 & 0xFF), UInt8(u & 0xFF)]
    }
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func be16(_ v: Int) -> [UInt8] { be16(UInt16(v)) }

    /// A 3×3 matrix, enough for the adaptation.
    struct Matrix {
        var m: [[Double]]
        init(rows: [[Double]]) { m = rows }
        init(columns: [[Double]]) { m = (0..<3).map { r in columns.map { $0[r] } } }
        func column(_ c: Int) -> [Double] { m.map { $0[c] } }
        static func * (a: Matrix, b: Matrix) -> Matrix {
            Matrix(rows: (0..<3).map { r in (0..<3).map { c in (0..<3).reduce(0) { $0 + a.m[r][$1] * b.m[$1][c] } } })
        }
        static func * (a: Matrix, v: [Double]) -> [Double] { a.m.map { row in zip(row, v).reduce(0) { $0 + $1.0 * $1.1 } } }
        var inverse: Matrix {
            let (a, b, c, d, e, f, g, h, i) = (m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[2][0], m[2][1], m[2][2])
            let det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
            return Matrix(rows: [
                [(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det],
                [(f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det],
                [(d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det],
            ])
        }
    }
}
