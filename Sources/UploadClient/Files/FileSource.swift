import Foundation
import Glibc
import NIOCore
import NIOPosix
import UploadCore

/// An open file (or pipe) that upload bodies read from, in chunks, on a thread pool.
///
/// Regular files are read with `pread` at explicit offsets, so no shared file position exists
/// and a 307/308 resend can start again from offset 0. Pipes are read sequentially.
final class FileSource: Sendable {
    let fd: Int32
    let path: String
    let isPipe: Bool
    /// The size when the attempt began; the `Content-Length` is built from it.
    let size: Int64?
    let modificationTime: Double?

    private init(fd: Int32, path: String, isPipe: Bool, size: Int64?, modificationTime: Double?) {
        self.fd = fd
        self.path = path
        self.isPipe = isPipe
        self.size = size
        self.modificationTime = modificationTime
    }

    /// Opens a regular file for reading; fails with a reason a person can act on.
    static func open(path: String) throws(UploadFailure) -> FileSource {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw UploadFailure(.fileError, "cannot open \(path): \(String(cString: strerror(code)))", code: code)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw UploadFailure(.fileError, "cannot stat \(path): \(String(cString: strerror(code)))", code: code)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw UploadFailure(.fileError, "\(path) is not a regular file")
        }
        let mtime = Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
        return FileSource(fd: fd, path: path, isPipe: false, size: Int64(st.st_size), modificationTime: mtime)
    }

    /// Standard input, read to its end with no known length.
    static func standardInput() -> FileSource {
        FileSource(fd: dup(STDIN_FILENO), path: "stdin", isPipe: true, size: nil, modificationTime: nil)
    }

    deinit {
        close(fd)
    }

    /// Reads up to `count` bytes at `offset` (ignored for pipes); fewer bytes only at end of file.
    func read(offset: Int64, count: Int, allocator: ByteBufferAllocator) throws(UploadFailure) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: count)
        var filled = 0
        while filled < count {
            var failure: Int32 = 0
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - filled) { raw -> Int in
                let want = count - filled
                let got = isPipe
                    ? Glibc.read(fd, raw.baseAddress, want)
                    : pread(fd, raw.baseAddress, want, off_t(offset) + off_t(filled))
                if got < 0 { failure = errno; return 0 }
                return got
            }
            if failure == EINTR { continue }
            if failure != 0 {
                throw UploadFailure(.fileError, "cannot read \(path): \(String(cString: strerror(failure)))", code: failure)
            }
            if n == 0 { break }
            filled += n
            if isPipe { break }
        }
        return buffer
    }

    /// The file's current size and modification time, to notice it changing under an upload.
    func currentStat() -> (size: Int64, mtime: Double)? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return (Int64(st.st_size), Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
    }

    /// The open file's size and modification time to the nanosecond.
    func fingerprint() -> FileFingerprint? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return FileFingerprint(st)
    }

    /// The first bytes, for media-type sniffing.
    func prefix() throws(UploadFailure) -> [UInt8] {
        Array(try read(offset: 0, count: MediaSniffer.prefixLength, allocator: ByteBufferAllocator()).readableBytesView)
    }
}
