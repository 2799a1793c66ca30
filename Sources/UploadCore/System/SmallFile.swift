import Foundation
import Glibc

/// A small file a person names for the tool to read (a header file, a netrc file, a list):
/// read whole, from a regular file or a pipe (`-H @<(pass show token)`, a FIFO), with the
/// reason it cannot be said as it is — it does not exist, may not be read, is a directory —
/// never a vague "missing or unreadable".
public enum SmallFile {
    /// More than this is no file of this kind.
    public static let limit = 1 << 20

    public static func read(_ path: String) throws(SmallFileProblem) -> Data {
        let fd = PathText.withCString(path) { Glibc.open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            let code = errno
            switch code {
            case ENOENT, ENOTDIR: throw SmallFileProblem(reason: "it does not exist")
            case EACCES, EPERM: throw SmallFileProblem(reason: "it may not be read (permission denied)")
            default: throw SmallFileProblem(reason: "it cannot be opened: \(String(cString: strerror(code)))")
            }
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw SmallFileProblem(reason: "it cannot be read: \(String(cString: strerror(errno)))") }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: throw SmallFileProblem(reason: "it is a directory")
        case S_IFREG, S_IFIFO, S_IFCHR: break
        default: throw SmallFileProblem(reason: "it is not a file or a pipe")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw SmallFileProblem(reason: "it cannot be read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { return data }
            data.append(contentsOf: buffer[0..<n])
            if data.count > limit { throw SmallFileProblem(reason: "it is larger than \(ByteFormat.bytes(Int64(limit))), which no such file is") }
        }
    }
}

/// Why a small file could not be read, said as the end of a sentence about it.
public struct SmallFileProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
