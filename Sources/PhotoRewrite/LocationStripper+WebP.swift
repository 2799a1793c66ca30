/// `--strip-location` for WebP (RIFF, Google's container specification): the file rebuilt from
/// the chunks that make the picture — `VP8X` (its flags rewritten), `ICCP`, `ANIM`, `ANMF`
/// (each frame rebuilt from its header, `ALPH` and `VP8 `/`VP8L`), `ALPH`, `VP8 `, `VP8L` —
/// and a fresh minimal `EXIF` chunk (`KeptExif`) when the photo had EXIF. Everything else goes:
/// `EXIF`, `XMP `, unknown chunks (inside frames too) and any bytes past the RIFF's end.
extension LocationStripper {
    static let webpKeptChunks: Set<String> = ["VP8X", "ICCP", "ANIM", "ANMF", "ALPH", "VP8 ", "VP8L"]
    static let webpFrameChunks: Set<String> = ["ALPH", "VP8 ", "VP8L"]

    static func isWebP(_ prefix: [UInt8]) -> Bool {
        prefix.count >= 12 && prefix[0..<4].elementsEqual("RIFF".utf8) && prefix[8..<12].elementsEqual("WEBP".utf8)
    }

    static func webp(size: Int64, read: (Int64, Int) -> [UInt8]) throws(Refusal) -> [Piece] {
        func damaged(_ why: String) -> Refusal {
            Refusal("the WebP \(why); its location cannot be removed with certainty, so it is not sent")
        }
        func le32(_ b: ArraySlice<UInt8>) -> Int64 {
            let i = b.startIndex
            return Int64(b[i]) | Int64(b[i + 1]) << 8 | Int64(b[i + 2]) << 16 | Int64(b[i + 3]) << 24
        }
        func le32Bytes(_ v: Int64) -> [UInt8] { [0, 8, 16, 24].map { UInt8(truncatingIfNeeded: v >> $0) } }

        /// The chunks from `start` to `end`: name, where the chunk begins, its payload's length.
        func chunks(from start: Int64, to end: Int64, in what: String) throws(Refusal) -> [(name: String, at: Int64, length: Int64)] {
            var found: [(String, Int64, Int64)] = []
            var at = start
            while at < end {
                guard at + 8 <= end else { throw damaged("has a cut chunk header at offset \(at) \(what)") }
                let header = read(at, 8)
                guard header.count == 8 else { throw damaged("ends inside a chunk header at offset \(at)") }
                guard header[0..<4].allSatisfy({ (0x20...0x7E).contains($0) }) else {
                    throw damaged("has a chunk with a malformed name at offset \(at)")
                }
                let length = le32(header[4..<8])
                let padded = length + (length & 1)
                guard at + 8 + padded <= end || (at + 8 + length == end) else {
                    throw damaged("has a chunk that runs past \(what == "" ? "its end" : "its frame") (offset \(at))")
                }
                found.append((String(decoding: header[0..<4], as: UTF8.self), at, length))
                at += 8 + padded
            }
            return found
        }
        /// A chunk's bytes as they go: its header, payload and padding byte (the file's, or a
        /// zero where the file's last chunk went without it).
        func whole(_ chunk: (name: String, at: Int64, length: Int64)) -> [Piece] {
            let end = chunk.at + 8 + chunk.length
            guard chunk.length & 1 == 1 else { return [.file(chunk.at..<end)] }
            return end + 1 <= riffEnd ? [.file(chunk.at..<end + 1)] : [.file(chunk.at..<end), .bytes([0])]
        }
        func length(_ pieces: [Piece]) -> Int64 {
            pieces.reduce(0) { total, piece in
                switch piece {
                case .file(let range): total + Int64(range.count)
                case .bytes(let bytes): total + Int64(bytes.count)
                }
            }
        }

        let head = read(0, 12)
        guard head.count == 12, isWebP(head) else { throw damaged("does not begin with RIFF…WEBP") }
        let riffEnd = 8 + le32(head[4..<8])
        guard riffEnd <= size else { throw damaged("is shorter than its RIFF header says (\(size) of \(riffEnd) bytes)") }
        let all = try chunks(from: 12, to: riffEnd, in: "")
        guard let first = all.first, ["VP8 ", "VP8L", "VP8X"].contains(first.name) else {
            throw damaged("does not begin with a VP8, VP8L or VP8X chunk")
        }

        var body: [Piece] = []
        func keep(_ pieces: [Piece]) { body += pieces }
        func add(_ bytes: [UInt8]) { body.append(.bytes(bytes)) }
        var exif: KeptExif?
        var flags: UInt8 = 0
        for chunk in all {
            switch chunk.name {
            case "VP8X":
                guard chunk.at == 12, chunk.length >= 10 else { throw damaged("has a VP8X chunk out of place or too short") }
                let payload = read(chunk.at + 8, Int(chunk.length))
                guard payload.count == Int(chunk.length) else { throw damaged("ends inside its VP8X chunk") }
                flags = payload[0]
                keep(whole(chunk))
            case "EXIF":
                if exif == nil {
                    var tiff = read(chunk.at + 8, Int(min(chunk.length, 1 << 20)))
                    if tiff.starts(with: Array("Exif\0\0".utf8)) { tiff.removeFirst(6) }
                    exif = KeptExif.read(tiff: tiff) ?? KeptExif()
                }
            case "ANMF":
                // A frame: 16 bytes of placement and timing, then its own chunks.
                guard chunk.length >= 16 else { throw damaged("has an ANMF frame shorter than its header") }
                let frameStart = chunk.at + 8
                let inner = try chunks(from: frameStart + 16, to: frameStart + chunk.length, in: "in a frame")
                let kept = inner.filter { webpFrameChunks.contains($0.name) }
                guard kept.contains(where: { $0.name == "VP8 " || $0.name == "VP8L" }) else {
                    throw damaged("has an animation frame without a picture")
                }
                if kept.count == inner.count {
                    keep(whole(chunk))
                } else {
                    let frame = [.file(frameStart..<frameStart + 16)] + kept.flatMap(whole)
                    add(Array("ANMF".utf8) + le32Bytes(length(frame)))
                    keep(frame)
                }
            default:
                if webpKeptChunks.contains(chunk.name) { keep(whole(chunk)) }
            }
        }
        let fresh = exif.map { $0.isEmpty ? [] : $0.tiff() } ?? []
        if !fresh.isEmpty {
            add(Array("EXIF".utf8) + le32Bytes(Int64(fresh.count)) + fresh + (fresh.count & 1 == 1 ? [0] : []))
        }
        // VP8X: the same canvas and picture flags (ICC, alpha, animation); XMP never, EXIF only
        // when a fresh one follows.
        if first.name == "VP8X" {
            let payload = read(first.at + 8, Int(first.length))
            var rewritten = Array("VP8X".utf8) + le32Bytes(10) + [(flags & 0b0011_0010) | (fresh.isEmpty ? 0 : 0x08)]
            rewritten += payload[1..<10]
            guard case .file(let range) = body.first, range.lowerBound == first.at else { throw damaged("has a VP8X chunk out of place") }
            body[0] = .bytes(rewritten)
        }
        return [.bytes(Array("RIFF".utf8) + le32Bytes(4 + length(body)) + Array("WEBP".utf8))] + body
    }
}
