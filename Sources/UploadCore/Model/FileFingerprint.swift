import Glibc

/// A file's size and modification time (to the nanosecond) when an upload was queued.
///
/// An upload that starts later (after the agent restarted, or from a watch folder) compares the
/// file with its fingerprint first: if either changed, the upload fails with a reason instead of
/// sending bytes the user did not queue.
///
/// Two fingerprints are the same file when size and modification time agree: a file that was
/// only renamed, moved or given new permissions is still the file queued. The inode's change
/// time rides along where it was read: it is the one stamp no tool can set back (`touch -r`
/// and `cp -p` set the modification time), so where "this is the content sent before" must be
/// proven rather than assumed (the monitor's `✓`), it is compared too (`sameContent`).
public struct FileFingerprint: Sendable, Hashable, Codable {
    public let size: Int64
    public let modificationNanoseconds: Int64
    /// The inode's change time (ns since 1970), when it was read.
    public let changeNanoseconds: Int64?

    public init(size: Int64, modificationNanoseconds: Int64, changeNanoseconds: Int64? = nil) {
        self.size = size
        self.modificationNanoseconds = modificationNanoseconds
        self.changeNanoseconds = changeNanoseconds
    }

    public static func == (a: FileFingerprint, b: FileFingerprint) -> Bool {
        a.size == b.size && a.modificationNanoseconds == b.modificationNanoseconds
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(size)
        hasher.combine(modificationNanoseconds)
    }

    /// The fingerprint of the file at `path` now, following symbolic links; `nil` when it cannot be read.
    public static func of(path: String) -> FileFingerprint? {
        var st = stat()
        guard PathText.withCString(path, { stat($0, &st) }) == 0 else { return nil }
        return FileFingerprint(st)
    }

    public init(_ st: stat) {
        self.init(
            size: Int64(st.st_size),
            modificationNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
            changeNanoseconds: Int64(st.st_ctim.tv_sec) * 1_000_000_000 + Int64(st.st_ctim.tv_nsec)
        )
    }

    /// Why `current` is not the file that was queued, or `nil` when it is.
    public func change(to current: FileFingerprint) -> String? {
        if current.size != size {
            return "changed since it was queued (size \(size) → \(current.size) bytes); queue it again to send the new content"
        }
        if current.modificationNanoseconds != modificationNanoseconds {
            return "was modified since it was queued (same size, new modification time); queue it again to send the new content"
        }
        return nil
    }
}
