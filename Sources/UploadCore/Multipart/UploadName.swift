/// The name a file is uploaded under.
public enum UploadName {
    /// `requested` if given, else the file's own name. When `requested` has no extension, the
    /// original's is kept (`holiday` for `IMG_1.jpg` becomes `holiday.jpg`), as the seed's rename field does.
    public static func resolve(originalFileName: String, requested: String?) throws(UploadInputError) -> String {
        guard let requested else { return originalFileName }
        let trimmed = requested.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .emptyUploadName }
        if fileExtension(of: trimmed) != nil { return trimmed }
        guard let ext = fileExtension(of: originalFileName) else { return trimmed }
        return trimmed + "." + ext
    }

    /// The extension after the last dot, ignoring a leading dot (`.bashrc` has none).
    public static func fileExtension(of name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : String(ext)
    }

    /// The last path component of a path, as a file's own name.
    public static func baseName(of path: String) -> String {
        let trimmed = path.hasSuffix("/") ? String(path.dropLast()) : path
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        return String(trimmed[trimmed.index(after: slash)...])
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
