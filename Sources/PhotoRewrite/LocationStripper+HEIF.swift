/// `--strip-location` for HEIF, HEIC and AVIF (ISO/IEC 23008-12 on the ISO base media file
/// format), by edits that keep every byte in its place, so no offset (`iloc`) and no box size
/// changes and the pictures are their own bytes:
/// - each `Exif` item is written anew (`KeptExif`: orientation, date, camera, exposure) within
///   its own length, zeros after it (nothing of the old EXIF when even the fresh one does not
///   fit);
/// - each XMP item (`mime`, `application/rdf+xml`) becomes spaces;
/// - every byte of `mdat` and `idat` that no picture item uses becomes zero, and so does the
///   payload of `free`/`skip` boxes; item names and the handler's name become spaces;
/// - bytes after the last box go.
/// The edit is complete only because everything else is known: the boxes of `meta`, the item types (pictures, grids,
/// overlays, derived pictures, `Exif`, XMP, IPTC), the item properties kept and the auxiliary
/// picture kinds (alpha, depth, HDR gain maps) are allowlists; anything else (an item of
/// another kind, a property a picture needs that this does not know), an item whose data lies
/// outside `mdat`/`idat`, overlapping items, data in another file, or a box that runs past its
/// parent, is refused with the reason.
extension LocationStripper {
    static let heifBrands: Set<String> = ["heic", "heix", "heim", "heis", "mif1", "mif2", "miaf", "avif", "avci", "MiHE", "MiHB", "MA1A", "MA1B"]
    static let heifMetaBoxes: Set<String> = ["hdlr", "pitm", "iloc", "iinf", "iref", "iprp", "idat", "dinf", "grpl"]
    static let heifPictureItems: Set<String> = ["hvc1", "av01", "grid", "iden", "iovl", "hvt1", "tmap"]
    static let heifProperties: Set<String> = [
        "hvcC", "av1C", "ispe", "irot", "imir", "clap", "pixi", "colr", "auxC", "pasp", "clli", "mdcv", "cclv", "rloc", "lsel",
        "a1op", "a1lx", "amve",
    ]
    static let heifAuxiliaryKinds: Set<String> = [
        "urn:mpeg:hevc:2015:auxid:1", "urn:mpeg:hevc:2015:auxid:2", "urn:mpeg:mpegB:cicp:systems:auxiliary:alpha",
        "urn:mpeg:mpegB:cicp:systems:auxiliary:depth", "urn:com:apple:photo:2020:aux:hdrgainmap", "urn:com:apple:photo:2018:aux:portraiteffectsmatte",
        "urn:com:apple:photo:2018:aux:portraitsegmentationmatte", "urn:com:apple:photo:2019:aux:semanticskinmatte",
        "urn:com:apple:photo:2019:aux:semantichairmatte", "urn:com:apple:photo:2019:aux:semanticteethmatte",
        "urn:com:apple:photo:2020:aux:semanticskymatte", "urn:com:apple:photo:2020:aux:semanticglassesmatte",
        "urn:com:samsung:photo:2024:aux:hdrgainmap",
    ]
    /// Zeros written in place of what no picture uses, at most: beyond it the file is mostly
    /// something else than its pictures.
    static let heifMaxBlanked: Int64 = 16 << 20

    /// The 1-based indexes of the properties some item marks essential (ipma).
    static func essentialProperties(
        _ ipma: HEIFBox, bytes: (Int64, Int64) throws(Refusal) -> [UInt8],
        damaged: (String) -> Refusal
    ) throws(Refusal) -> Set<Int> {
        let data = try bytes(ipma.payload, ipma.end - ipma.payload)
        guard data.count >= 8 else { throw damaged("has a cut item property table") }
        let version = data[0]
        let wide = data[3] & 1 == 1
        var at = 4
        func take(_ n: Int) throws(Refusal) -> Int {
            guard at + n <= data.count else { throw damaged("has a cut item property table") }
            defer { at += n }
            return data[at..<at + n].reduce(0) { $0 << 8 | Int($1) }
        }
        var essential: Set<Int> = []
        for _ in 0..<(try take(4)) {
            _ = try take(version < 1 ? 2 : 4)
            for _ in 0..<(try take(1)) {
                let value = try take(wide ? 2 : 1)
                let flag = wide ? 0x8000 : 0x80
                if value & flag != 0 { essential.insert(value & (flag - 1)) }
            }
        }
        return essential
    }

    static func isHEIF(_ prefix: [UInt8]) -> Bool {
        guard prefix.count >= 12, prefix[4..<8].elementsEqual("ftyp".utf8) else { return false }
        return heifBrands.contains(String(decoding: prefix[8..<12], as: UTF8.self))
    }

    struct HEIFBox {
        let type: String
        let start: Int64, payload: Int64, end: Int64
    }

    static func heif(size: Int64, read: (Int64, Int) -> [UInt8]) throws(Refusal) -> [ByteEdit] {
        func damaged(_ why: String) -> Refusal {
            Refusal("the HEIF file \(why); its location cannot be removed with certainty, so it is not sent")
        }
        func number(_ bytes: ArraySlice<UInt8>) -> Int64 { bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) } }
        /// `a + b` for offsets and lengths read from the file: a negative value (an 8-byte field
        /// past Int64) or a sum past Int64 is refused, never computed.
        func sum(_ a: Int64, _ b: Int64, _ what: @autoclosure () -> String) throws(Refusal) -> Int64 {
            let (total, overflow) = a.addingReportingOverflow(b)
            guard a >= 0, b >= 0, !overflow else { throw damaged("has \(what()) past any file's size") }
            return total
        }
        func bytes(_ at: Int64, _ count: Int64) throws(Refusal) -> [UInt8] {
            guard count >= 0, count <= 64 << 20 else { throw damaged("has a box too large to read (offset \(at))") }
            let got = read(at, Int(count))
            guard got.count == Int(count) else { throw damaged("ends inside a box (offset \(at))") }
            return got
        }
        func boxes(from start: Int64, to end: Int64, _ what: String) throws(Refusal) -> [HEIFBox] {
            var found: [HEIFBox] = []
            var at = start
            while at < end {
                guard at + 8 <= end else { throw damaged("has a cut box header at offset \(at) in \(what)") }
                let head = try bytes(at, 8)
                var length = number(head[0..<4])
                let type = String(decoding: head[4..<8], as: UTF8.self)
                var payload = at + 8
                if length == 1 {
                    guard at + 16 <= end else { throw damaged("has a cut box header at offset \(at)") }
                    length = number(try bytes(at + 8, 8)[0...])
                    payload = at + 16
                } else if length == 0 {
                    length = end - at
                }
                // `length` may be anything an 8-byte field holds: compared with what is left,
                // never added to an offset before it is known to fit.
                guard length >= payload - at, length <= end - at else { throw damaged("has a box '\(type)' that runs past \(what) (offset \(at))") }
                found.append(HEIFBox(type: type, start: at, payload: payload, end: at + length))
                at += length
            }
            return found
        }

        // Top level.
        let top = try boxes(from: 0, to: size, "the file")
        guard top.first?.type == "ftyp" else { throw damaged("does not begin with ftyp") }
        var meta: HEIFBox?
        var unknownTopLevel: [HEIFBox] = []
        var dataAreas: [Range<Int64>] = []  // mdat payloads: where item data may lie
        var edits: [ByteEdit] = []
        var blanked: Int64 = 0
        func blank(_ range: Range<Int64>, with replacement: [UInt8]? = nil) throws(Refusal) {
            guard !range.isEmpty else { return }
            let bytes = replacement ?? [UInt8](repeating: 0, count: range.count)
            if replacement == nil {
                blanked += Int64(range.count)
                guard blanked <= heifMaxBlanked else { throw damaged("holds more than 16 MB that no picture uses") }
            }
            edits.append(ByteEdit(range: range, replacement: bytes))
        }
        for box in top {
            switch box.type {
            case "ftyp": break
            case "meta":
                guard meta == nil else { throw damaged("has two meta boxes") }
                meta = box
            case "mdat": dataAreas.append(box.payload..<box.end)
            case "free", "skip": try blank(box.payload..<box.end)
            default:
                // Another top-level box (a phone's trailer such as Samsung's `sefd`, a `uuid`, an
                // image sequence's `moov`): no picture item lies in it (item data must be in
                // mdat or idat), so it goes: cut when nothing follows, else zeros.
                unknownTopLevel.append(box)
            }
        }
        guard let meta else { throw damaged("has no meta box") }
        // The unknown boxes at the end are cut (nothing refers to bytes past the last known box);
        // those between known boxes become zeros.
        let lastKnownEnd = top.filter { box in !unknownTopLevel.contains { $0.start == box.start } }.map(\.end).max() ?? 0
        for box in unknownTopLevel {
            if box.start >= lastKnownEnd {
                edits.append(ByteEdit(range: box.start..<box.end, replacement: []))
            } else {
                try blank(box.payload..<box.end)
            }
        }

        // meta (a full box: version and flags first).
        var items: [UInt32: (type: String, contentType: String?)] = [:]
        var locations: [UInt32: [Range<Int64>]] = [:]
        var idat: Range<Int64>?
        var ilocBox: HEIFBox?
        var essential: Set<Int> = []
        var unknownProperties: [(index: Int, box: HEIFBox)] = []
        var seenInMeta: Set<String> = []
        for box in try boxes(from: meta.payload + 4, to: meta.end, "meta") {
            guard heifMetaBoxes.contains(box.type) else { throw damaged("has a box '\(box.type)' in meta this tool does not know") }
            // Each of these once (ISO/IEC 23008-12 §9.2): a reader that takes the first of two
            // `iloc`s (or merges them) would find items where the rewrite, reading another, did not.
            guard seenInMeta.insert(box.type).inserted else { throw damaged("has two '\(box.type)' boxes in meta") }
            switch box.type {
            case "hdlr":
                // version/flags, pre_defined, handler_type, 3 reserved, then the name.
                let data = try bytes(box.payload, box.end - box.payload)
                guard data.count >= 20, data[8..<12].elementsEqual("pict".utf8) else { throw damaged("is not a picture (its handler is not 'pict')") }
                // The name becomes spaces and whatever follows its end zeros (no reader needs
                // it, and an item could be located there): the box keeps its length.
                if data.count > 20 {
                    let nameEnd = data[20...].firstIndex(of: 0) ?? data.count - 1
                    try blank(
                        box.payload + 20..<box.end,
                        with: [UInt8](repeating: 0x20, count: nameEnd - 20)
                            + [UInt8](repeating: 0, count: data.count - nameEnd))
                }
            case "idat": idat = box.payload..<box.end
            case "iloc": ilocBox = box
            case "iinf":
                let head = try bytes(box.payload, 6)
                let first = box.payload + (head[0] == 0 ? 6 : 8)
                for entry in try boxes(from: first, to: box.end, "iinf") {
                    guard entry.type == "infe" else { throw damaged("has a box '\(entry.type)' among its item descriptions") }
                    let data = try bytes(entry.payload, entry.end - entry.payload)
                    guard data.count >= 4, data[0] == 2 || data[0] == 3 else {
                        throw damaged("describes an item in an old form (infe version \(data.first ?? 0))")
                    }
                    let idLength = data[0] == 2 ? 2 : 4
                    guard data.count >= 4 + idLength + 2 + 4 else { throw damaged("has a cut item description") }
                    let id = UInt32(number(data[4..<4 + idLength]))
                    let typeAt = 4 + idLength + 2
                    let type = String(decoding: data[typeAt..<typeAt + 4], as: UTF8.self)
                    let nameAt = typeAt + 4
                    guard let nameEnd = data[nameAt...].firstIndex(of: 0) else { throw damaged("has an item name without its end") }
                    if nameEnd > nameAt {
                        try blank(entry.payload + Int64(nameAt)..<entry.payload + Int64(nameEnd), with: [UInt8](repeating: 0x20, count: nameEnd - nameAt))
                    }
                    var contentType: String?
                    if type == "mime" {
                        guard let end = data[(nameEnd + 1)...].firstIndex(of: 0) else { throw damaged("has a mime item without its content type") }
                        contentType = String(decoding: data[(nameEnd + 1)..<end], as: UTF8.self)
                    }
                    let known = heifPictureItems.contains(type) || type == "Exif" || type == "iptc" || (type == "mime" && contentType == "application/rdf+xml")
                    guard known else {
                        throw damaged("has an item of a kind this tool does not know ('\(type)'\(contentType.map { ", \($0)" } ?? ""))")
                    }
                    guard items[id] == nil else { throw damaged("describes item \(id) twice") }
                    items[id] = (type, contentType)
                }
            case "iprp":
                var seenInProperties: Set<String> = []
                for child in try boxes(from: box.payload, to: box.end, "iprp") {
                    guard seenInProperties.insert(child.type).inserted else { throw damaged("has two '\(child.type)' boxes among its item properties") }
                    switch child.type {
                    case "ipma":
                        essential = try essentialProperties(child, bytes: bytes, damaged: damaged)
                    case "ipco":
                        for (index, property) in try boxes(from: child.payload, to: child.end, "ipco").enumerated() {
                            guard heifProperties.contains(property.type) else {
                                // Unknown: its content goes (zeros), unless a picture cannot be
                                // shown without it.
                                unknownProperties.append((index + 1, property))
                                continue
                            }
                            if property.type == "auxC" {
                                let data = try bytes(property.payload, property.end - property.payload)
                                let urn = String(decoding: data.dropFirst(4).prefix { $0 != 0 }, as: UTF8.self)
                                guard heifAuxiliaryKinds.contains(urn) else {
                                    throw damaged("has an auxiliary picture of a kind this tool does not know ('\(urn)')")
                                }
                            }
                        }
                    default: throw damaged("has a box '\(child.type)' among its item properties")
                    }
                }
            case "dinf":
                // Data in this file only: every data reference is self-contained (flags 1).
                for dref in try boxes(from: box.payload, to: box.end, "dinf") where dref.type == "dref" {
                    for entry in try boxes(from: dref.payload + 8, to: dref.end, "dref") {
                        let flags = try bytes(entry.payload, 4)
                        guard entry.type == "url ", flags[3] & 1 == 1 else { throw damaged("refers to data outside itself") }
                    }
                }
            default: break
            }
        }

        for (index, property) in unknownProperties {
            guard !essential.contains(index) else {
                throw damaged("has an item property '\(property.type)' this tool does not know, which its pictures need")
            }
            try blank(property.payload..<property.end)
        }

        // Where each item's bytes are (iloc).
        guard let iloc = ilocBox else { throw damaged("has no item locations (iloc)") }
        let data = try bytes(iloc.payload, iloc.end - iloc.payload)
        var at = 0
        func take(_ count: Int) throws(Refusal) -> Int64 {
            guard count >= 0, at + count <= data.count else { throw damaged("has a cut item location table") }
            defer { at += count }
            return number(data[at..<at + count])
        }
        let version = try take(1)
        _ = try take(3)
        guard version <= 2 else { throw damaged("has an item location table of version \(version)") }
        let sizes = try take(2)
        let offsetSize = Int(sizes >> 12 & 0xF)
        let lengthSize = Int(sizes >> 8 & 0xF)
        let baseSize = Int(sizes >> 4 & 0xF)
        let indexSize = version >= 1 ? Int(sizes & 0xF) : 0
        let count = try take(version < 2 ? 2 : 4)
        for _ in 0..<count {
            let id = UInt32(try take(version < 2 ? 2 : 4))
            let method = version >= 1 ? try take(2) & 0xF : 0
            guard try take(2) == 0 else { throw damaged("refers to data outside itself (item \(id))") }
            let base = try take(baseSize)
            let extents = try take(2)
            let start = method == 1 ? try sum(idat?.lowerBound ?? 0, base, "item \(id) at an offset") : base
            var ranges: [Range<Int64>] = []
            for _ in 0..<extents {
                if indexSize > 0 { _ = try take(indexSize) }
                let offset = try take(offsetSize)
                let length = try take(lengthSize)
                switch method {
                case 0:
                    guard length > 0 else { throw damaged("has item \(id) running to the end of the file") }
                    let from = try sum(start, offset, "item \(id) at an offset")
                    ranges.append(from..<(try sum(from, length, "item \(id) running")))
                case 1:
                    guard idat != nil, length > 0 else { throw damaged("has item \(id) in an idat it does not have") }
                    let from = try sum(start, offset, "item \(id) at an offset")
                    ranges.append(from..<(try sum(from, length, "item \(id) running")))
                default:
                    guard let item = items[id], heifPictureItems.contains(item.type) else {
                        throw damaged("builds item \(id) out of other items")
                    }
                }
            }
            let areas = dataAreas + (idat.map { [$0] } ?? [])
            for range in ranges where !areas.contains(where: { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }) {
                throw damaged("has item \(id) outside its data boxes")
            }
            guard locations[id] == nil else { throw damaged("locates item \(id) twice") }
            locations[id] = ranges
        }
        for id in locations.keys where items[id] == nil { throw damaged("locates item \(id), which it does not describe") }
        // A metadata item the rewrite cannot find cannot be rewritten: where a reader would find
        // its bytes is not known, so nothing is sent.
        for (id, item) in items.sorted(by: { $0.key < $1.key }) where !heifPictureItems.contains(item.type) && locations[id] == nil {
            throw damaged("describes a metadata item (\(id), '\(item.type)') without saying where its bytes are")
        }

        // The new content of the metadata items, written over their own bytes.
        var used: [Range<Int64>] = []
        for (id, ranges) in locations.sorted(by: { $0.key < $1.key }) {
            used += ranges
            guard let item = items[id], !heifPictureItems.contains(item.type) else { continue }
            var old: [UInt8] = []
            for range in ranges { old += try bytes(range.lowerBound, Int64(range.count)) }
            var fresh: [UInt8]
            if item.type == "Exif" {
                var kept: KeptExif?
                if old.count >= 4 {
                    let start = 4 + Int(number(old[0..<4]))
                    if start >= 4, start < old.count {
                        var tiff = Array(old[start...])
                        if tiff.starts(with: Array("Exif\0\0".utf8)) { tiff.removeFirst(6) }
                        kept = KeptExif.read(tiff: tiff)
                    }
                }
                fresh = [0, 0, 0, 6] + Array("Exif\0\0".utf8) + (kept.map { $0.tiff() } ?? [])
                if fresh.count > old.count || kept?.isEmpty != false { fresh = [] }
            } else if item.type == "iptc" {
                fresh = []  // IPTC (cities, places, people): zeros
            } else {
                // XMP: whitespace, which an XML reader takes for an empty document.
                fresh = [UInt8](repeating: 0x20, count: old.count)
            }
            fresh += [UInt8](repeating: 0, count: old.count - fresh.count)
            var offset = 0
            for range in ranges {
                try blank(range, with: Array(fresh[offset..<offset + range.count]))
                offset += range.count
            }
        }
        // What no item uses in the data boxes: zeros.
        used.sort { $0.lowerBound < $1.lowerBound }
        for (a, b) in zip(used, used.dropFirst()) where a.overlaps(b) {
            throw damaged("has items that share bytes (offset \(b.lowerBound))")
        }
        for area in dataAreas + (idat.map { [$0] } ?? []) {
            var cursor = area.lowerBound
            for range in used where range.upperBound > area.lowerBound && range.lowerBound < area.upperBound {
                try blank(cursor..<range.lowerBound)
                cursor = range.upperBound
            }
            try blank(cursor..<area.upperBound)
        }
        return edits.sorted { $0.range.lowerBound < $1.range.lowerBound }
    }
}
