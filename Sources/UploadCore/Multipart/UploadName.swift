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

    /// The name a file at `path` is uploaded under by default: its own name, where a name that is
    /// not UTF-8 (`PathText`) is read as Latin-1, the usual reason it is not (`caf\xE9.jpg`
    /// goes as `café.jpg`).
    public static func uploadName(ofPath path: String) -> String {
        let name = baseName(of: path)
        guard name.unicodeScalars.contains(where: { PathText.escapedByte($0) != nil }) else { return name }
        return String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { scalar in
                    PathText.escapedByte(scalar).map { Unicode.Scalar($0) } ?? scalar
                }))
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
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
