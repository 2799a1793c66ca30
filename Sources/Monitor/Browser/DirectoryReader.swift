import Glibc
import UploadCore

/// Reads a directory for the browser: one `readdir` pass and one `fstatat` per entry, no content
/// reads (images are told by extension here; the upload's preflight sniffs the bytes).
/// Never throws: an unreadable directory comes back as a listing with an error.
public enum DirectoryReader {
    /// The listing of `path`, folders first, with `select` (a name) selected when it is there.
    public static func read(_ path: String, select: String? = nil) -> DirectoryListing {
        guard let dir = PathText.withCString(path, { opendir($0) }) else {
            return DirectoryListing(path: path, entries: [], error: "cannot open \(path): \(String(cString: strerror(errno)))", select: select)
        }
        defer { closedir(dir) }
        let fd = dirfd(dir)
        var entries: [DirectoryEntry] = []
        while let raw = readdir(dir) {
            // Bytes, not text: a name that is not UTF-8 keeps its bytes (`PathText`).
            let name = withUnsafeBytes(of: raw.pointee.d_name) { buffer in PathText.decode(buffer.prefix { $0 != 0 }) }
            if name == "." || name == ".." { continue }
            entries.append(entry(named: name, in: fd))
        }
        return DirectoryListing(path: path, entries: sorted(entries), select: select)
    }

    static func entry(named name: String, in fd: Int32) -> DirectoryEntry {
        var info = stat()
        if PathText.withCString(name, { fstatat(fd, $0, &info, 0) }) != 0 {
            let reason = errno == ELOOP ? "symlink loop" : errno == ENOENT ? "broken symlink" : String(cString: strerror(errno))
            // Listed when its name looks like an image, so the user sees why it cannot be sent.
            return DirectoryEntry(name: name, kind: .brokenLink(reason: reason), isImage: MediaSniffer.type(forFileName: name)?.isImage ?? false)
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            return DirectoryEntry(name: name, kind: .directory)
        case S_IFREG:
            let isImage = MediaSniffer.type(forFileName: name)?.isImage ?? false
            let fingerprint = FileFingerprint(info)
            return DirectoryEntry(
                name: name, kind: .file, size: Int64(info.st_size), isImage: isImage,
                modified: fingerprint.modificationNanoseconds, changed: fingerprint.changeNanoseconds ?? 0)
        default:
            return DirectoryEntry(name: name, kind: .other(what: describe(info.st_mode)))
        }
    }

    /// What a file that is neither a regular file nor a directory is, in words.
    static func describe(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    /// Directories first, then by name, case-insensitively, as file managers sort. Each name is
    /// lowered once, not once per comparison (it matters at 100,000 entries).
    static func sorted(_ entries: [DirectoryEntry]) -> [DirectoryEntry] {
        var keyed = entries.map { (key: $0.name.lowercased(), entry: $0) }
        keyed.sort { a, b in
            if a.entry.isDirectory != b.entry.isDirectory { return a.entry.isDirectory }
            return a.key != b.key ? a.key < b.key : a.entry.name < b.entry.name
        }
        return keyed.map(\.entry)
    }

    /// The parent of `path` ("/" stays "/").
    public static func parent(of path: String) -> String {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    public static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
