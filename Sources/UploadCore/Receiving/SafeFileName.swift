import Foundation

/// Turns a client-supplied file name into one that is safe to create inside the upload folder.
///
/// Only the last path component survives (`/` and `\` both separate); control and invisible
/// format characters (`InvisibleCharacters`: bidi overrides and the like), `..` and leading dots are removed; the result fits in 255 UTF-8 bytes with its extension kept.
/// An empty result gets a generated name. Nothing here can name a path outside the folder.
public enum SafeFileName {
    public static let maxBytes = 255

    public static func sanitize(_ raw: String, fallback: () -> String) -> String {
        let lastComponent =
            raw.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "/" || $0 == "\\" }).last
            .map(String.init) ?? ""
        var name = String(String.UnicodeScalarView(lastComponent.unicodeScalars.filter { !InvisibleCharacters.isHidden($0) }))
        while name.contains("..") {
            name = name.replacingOccurrences(of: "..", with: "")
        }
        name = String(name.drop { $0 == "." || $0 == " " })
        name = truncate(name, toBytes: maxBytes)
        if name.trimmingWhitespace().isEmpty { return fallback() }
        return name
    }

    /// `photo.jpg` → `photo-1.jpg`, `photo-2.jpg`, …, still within the byte limit.
    public static func numbered(_ name: String, _ n: Int) -> String {
        let suffix = "-\(n)"
        if let ext = UploadName.fileExtension(of: name) {
            let stem = String(name.dropLast(ext.count + 1))
            return truncate(stem, toBytes: maxBytes - suffix.utf8.count - ext.utf8.count - 1) + suffix + "." + ext
        }
        return truncate(name, toBytes: maxBytes - suffix.utf8.count) + suffix
    }

    /// Cuts a name to at most `limit` UTF-8 bytes on a character boundary, keeping a short extension.
    static func truncate(_ name: String, toBytes limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        if let ext = UploadName.fileExtension(of: name), ext.utf8.count <= 16 {
            let stem = String(name.dropLast(ext.count + 1))
            return cutCharacters(stem, limit - ext.utf8.count - 1) + "." + ext
        }
        return cutCharacters(name, limit)
    }

    private static func cutCharacters(_ s: String, _ limit: Int) -> String {
        var out = ""
        var used = 0
        for ch in s {
            let size = String(ch).utf8.count
            if used + size > limit { break }
            out.append(ch)
            used += size
        }
        return out
    }
}
