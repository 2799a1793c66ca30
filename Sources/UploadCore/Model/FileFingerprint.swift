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
            modificationNanoseconds: Self.nanoseconds(st.st_mtim),
            changeNanoseconds: Self.nanoseconds(st.st_ctim)
        )
    }

    /// A file time in nanoseconds since 1970, held at the ends of `Int64` (years before 1678
    /// or after 2262, which `touch -d` can set and ext4 keeps up to 2446) rather than
    /// overflowing: such a file once crashed `send`.
    static func nanoseconds(_ time: timespec) -> Int64 {
        let (whole, overflow) = Int64(time.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return time.tv_sec < 0 ? .min : .max }
        let (sum, past) = whole.addingReportingOverflow(Int64(time.tv_nsec))
        return past ? .max : sum
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
