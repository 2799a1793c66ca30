import Foundation
import Glibc

/// Replaces a file whole, so that a reader sees the old contents or the new, never half: the
/// new contents go to a file beside it, created with `mode` from the start (a secret is never
/// readable by others, not even for a moment), then renamed over it.
public enum FileReplacement {
    /// The file that could not be replaced, and why.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// The name the new contents are written under first: `<path>.<pid>.tmp`.
    public static func temporaryPath(for path: String, pid: Int32 = getpid()) -> String {
        path + ".\(pid).tmp"
    }

    /// The process that was writing `name` when it is such a temporary file (a crash leaves
    /// one behind), or nil.
    public static func writer(ofTemporary name: String) -> Int32? {
        guard name.hasSuffix(".tmp") else { return nil }
        let stem = name.dropLast(4)
        guard let dot = stem.lastIndex(of: "."), stem.index(after: dot) < stem.endIndex else { return nil }
        return Int32(stem[stem.index(after: dot)...]).flatMap { $0 > 0 ? $0 : nil }
    }

    public static func write(_ data: Data, to path: String, mode: mode_t = 0o600) throws(Failure) {
        let temporary = temporaryPath(for: path)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(path: path, reason: "cannot write it: \(String(cString: strerror(errno)))") }
        var written = 0
        var failure: Int32 = 0
        data.withUnsafeBytes { bytes in
            while written < bytes.count {
                let count = Glibc.write(fd, bytes.baseAddress! + written, bytes.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                written += count
            }
        }
        close(fd)
        guard failure == 0 else {
            unlink(temporary)
            throw Failure(path: path, reason: "cannot write it: \(String(cString: strerror(failure)))")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(path: path, reason: "cannot replace it: \(reason)")
        }
    }
}
