import Foundation

/// A server's "not this format" for a photo that `--convert` could have written as it wants:
/// `415 Unsupported Media Type`, or a refusal (400, 406, 422) whose words or `Accept` name
/// JPEG. What `send` names the flag for, and the monitor offers to resend converted.
public enum FormatRefusal {
    /// The photo formats `--convert` writes again (a GIF is not: it is refused whole).
    static let convertible: Set<String> = ["heic", "heif", "hif", "avif", "webp", "png"]

    /// The format the server would take `name` in, when `response` refused it for its format
    /// and converting would answer it; nil otherwise (a refusal for another reason, a photo
    /// already written as the server asks, a file that is not a photo).
    public static func wanted(name: String, response: UploadResponse, conversion: PhotoConversion?) -> PhotoConversion.Format? {
        let ext = (name as NSString).pathExtension.lowercased()
        guard convertible.contains(ext) else { return nil }
        let accept = (response.header("Accept") ?? "").lowercased()
        let said = String(decoding: response.body.prefix(4096), as: UTF8.self).lowercased()
        let namesJPEG = accept.contains("image/jpeg") || said.contains("jpeg") || said.contains("jpg")
        switch response.status {
        case 415:
            break
        case 400, 406, 422:
            guard namesJPEG || (said.contains("unsupported") && (said.contains("format") || said.contains("type"))) else { return nil }
        default:
            return nil
        }
        // WebP where the server lists it and not JPEG; JPEG otherwise (what every form takes).
        let format: PhotoConversion.Format = accept.contains("image/webp") && !namesJPEG && ext != "webp" ? .webp : .jpeg
        guard conversion?.format != format else { return nil }
        return format
    }

    /// `send`'s closing line when some photos were refused for their format: the files and the
    /// flag that would have sent them. Nil when none were.
    public static func hint(_ tracker: TransferTracker, conversion: PhotoConversion?) -> String? {
        var refused: [(name: String, format: PhotoConversion.Format, status: Int)] = []
        for id in tracker.order {
            guard let state = tracker[id], case .answered = state.outcome, let response = state.response,
                let format = wanted(name: state.name, response: response, conversion: conversion)
            else { continue }
            refused.append((state.name, format, response.status))
        }
        guard let first = refused.first else { return nil }
        let format = refused.contains { $0.format == .jpeg } ? PhotoConversion.Format.jpeg : first.format
        let names = refused.prefix(3).map { InvisibleCharacters.escaped($0.name) }.joined(separator: ", ") + (refused.count > 3 ? ", …" : "")
        let what = refused.count == 1 ? "1 photo was" : "\(refused.count) photos were"
        let them = refused.count == 1 ? "it" : "them"
        return "\(what) refused for its format (\(names)): --convert \(format.rawValue) sends \(them) as \(format == .jpeg ? "JPEG" : "WebP")"
    }
}
