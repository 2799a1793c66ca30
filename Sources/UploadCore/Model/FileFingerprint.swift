import Glibc

/// A file's size and modification time (to the nanosecond) when an upload was queued.
///
/// An upload that starts later (after the agent restarted, or from a watch folder) compares the
/// file with its fingerprint first: if either changed, the upload fails with a reason instead of
/// sending bytes the user did not queue.
public struct FileFingerprint: Sendable, Hashable, Codable {
    public let size: Int64
    public let modificationNanoseconds: Int64

    public init(size: Int64, modificationNanoseconds: Int64) {
        self.size = size
        self.modificationNanoseconds = modificationNanoseconds
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
            modificationNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
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
