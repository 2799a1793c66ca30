/// What a photo is made into before it is sent (`--convert`, `--quality`, `--max-dimension`,
/// `--max-bytes`): plain data, kept with the upload in the agent's journal so a retry or a
/// resume makes the same bytes again.
public struct PhotoConversion: Sendable, Hashable, Codable {
    /// The format written.
    public enum Format: String, Sendable, Hashable, Codable, CaseIterable {
        case jpeg, webp
        /// The photo's own format: written again only when it must be resized or made smaller.
        case keep

        /// The extension a file of this format is named with.
        public var fileExtension: String? {
            switch self {
            case .jpeg: "jpg"
            case .webp: "webp"
            case .keep: nil
            }
        }
    }

    public var format: Format
    /// 1-100, the encoder's quality (the largest that fits when `maxBytes` is given).
    public var quality: Int
    /// The longest side in pixels, after the photo is turned upright; nil: the photo's own.
    public var maxDimension: Int?
    /// The largest the written photo may be; nil: no limit.
    public var maxBytes: Int64?

    /// cjpeg's, Pillow's and most exporters' default.
    public static let defaultQuality = 85
    /// The lowest quality `maxBytes` may go down to before the photo is refused: below it a
    /// photo shows its blocks.
    public static let lowestQuality = 30

    public init(format: Format = .keep, quality: Int = Self.defaultQuality, maxDimension: Int? = nil, maxBytes: Int64? = nil) {
        self.format = format
        self.quality = quality
        self.maxDimension = maxDimension
        self.maxBytes = maxBytes
    }

    /// The settings as the identity of a converted photo names them (`ContentIdentity.converted`):
    /// every one that changes the bytes written, in a fixed spelling.
    public var identityText: String {
        "format=\(format.rawValue) quality=\(quality) max-dimension=\(maxDimension ?? 0) max-bytes=\(maxBytes ?? 0)"
    }

    /// What becomes of one photo: sent as it is, written again (in this format, at about this
    /// size), or refused with the reason.
    public enum Outcome: Sendable, Equatable {
        case asItIs
        case written(Format, width: Int?, height: Int?)
        case refused(String)
    }

    /// What these settings make of a photo in `source` format (as `ImageProbe` names it: "JPEG",
    /// "PNG", "WebP", "HEIC", "AVIF", "GIF"…), of these upright dimensions and file size: the
    /// converter's own decision, and what the monitor's preview says will leave.
    public func outcome(source: String, width: Int?, height: Int?, fileSize: Int64) -> Outcome {
        let target: Format
        switch (format, source) {
        case (.jpeg, _), (.keep, "JPEG"): target = .jpeg
        case (.webp, _), (.keep, "WebP"): target = .webp
        default: target = .keep
        }
        let sameFormat = (target == .jpeg && source == "JPEG") || (target == .webp && source == "WebP")
        let longest = max(width ?? 0, height ?? 0)
        let fitsSize = maxDimension.map { longest > 0 && longest <= $0 } ?? true
        let fitsBytes = maxBytes.map { fileSize <= $0 } ?? true
        if (sameFormat || format == .keep) && fitsSize && fitsBytes { return .asItIs }
        guard ["JPEG", "PNG", "WebP", "HEIC", "AVIF", "GIF"].contains(source) else {
            return .refused("\(source) files are not converted; send it as it is or convert it first")
        }
        guard target != .keep else {
            return .refused("a \(source) photo cannot be written again in its own format; add --convert jpeg or --convert webp")
        }
        guard let width, let height, let maxDimension else { return .written(target, width: width, height: height) }
        let fitted = Self.fitted(width: width, height: height, within: maxDimension)
        return .written(target, width: fitted.width, height: fitted.height)
    }

    /// `width`×`height` scaled to fit a `side`×`side` square (never enlarged), rounded as the
    /// decoders' `um_fit` rounds.
    public static func fitted(width: Int, height: Int, within side: Int) -> (width: Int, height: Int) {
        var scale = 1.0
        if width > side { scale = Double(side) / Double(width) }
        if Double(height) * scale > Double(side) { scale = Double(side) / Double(height) }
        let w = min(side, max(1, Int(Double(width) * scale + 0.5)))
        let h = min(side, max(1, Int(Double(height) * scale + 0.5)))
        return (w, h)
    }

    /// Whether anything is asked at all (`--convert keep` alone changes nothing).
    public var changesAnything: Bool { format != .keep || maxDimension != nil || maxBytes != nil }

    /// The name a photo called `name` is sent as: its extension follows the format written
    /// (`IMG_1234.HEIC` → `IMG_1234.jpg`); a name that already says the format keeps its own
    /// spelling (`a.JPEG` stays).
    public func sentName(_ name: String) -> String {
        guard let wanted = format.fileExtension else { return name }
        let dot = name.lastIndex(of: ".")
        let stem = dot.map { name[..<$0] }.map(String.init) ?? name
        let current = dot.map { name[name.index(after: $0)...].lowercased() }
        let same: Set<String> = format == .jpeg ? ["jpg", "jpeg", "jpe", "jfif"] : [wanted]
        if let current, same.contains(current), !stem.isEmpty { return name }
        return (stem.isEmpty ? name : stem) + "." + wanted
    }

    /// Refuses settings no photo can be written with, naming the option.
    public func validate() throws(RangeError) {
        guard (1...100).contains(quality) else { throw RangeError(message: "--quality \(quality) is out of range: from 1 to 100") }
        if let maxDimension, !(16...65_500).contains(maxDimension) {
            throw RangeError(message: "--max-dimension \(maxDimension) is out of range: from 16 to 65500 pixels")
        }
        if let maxBytes, maxBytes < 1024 || maxBytes > BoundedNumber.maxBytes {
            throw RangeError(message: "--max-bytes \(maxBytes) is out of range: at least 1 KiB (e.g. 500k, 2MB)")
        }
    }

    /// The settings in words, for dry runs and the monitor ("JPEG q85, at most 2048 px, 2 MB").
    public var words: String {
        var parts: [String] = []
        switch format {
        case .jpeg: parts.append("as JPEG q\(quality)")
        case .webp: parts.append("as WebP q\(quality)")
        case .keep: break
        }
        if let maxDimension { parts.append("at most \(maxDimension) px") }
        if let maxBytes { parts.append("at most \(ByteFormat.bytes(maxBytes))") }
        return parts.joined(separator: ", ")
    }
}
