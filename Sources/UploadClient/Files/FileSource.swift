import PhotoRewrite
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
    /// Size and modification time when the attempt began (`nil` for a pipe); the
    /// `Content-Length` is built from this size.
    let openedAs: FileFingerprint?
    /// The bytes as sent when some are changed (`--strip-location`); nil: the file as it is.
    let edited: EditedFile?
    /// What is sent: the file's size, or the edited file's.
    var size: Int64? { edited?.size ?? openedAs?.size }

    private init(fd: Int32, path: String, isPipe: Bool, openedAs: FileFingerprint?, edited: EditedFile? = nil, base: FileSource? = nil) {
        self.fd = fd
        self.path = path
        self.isPipe = isPipe
        self.openedAs = openedAs
        self.edited = edited
        self.base = base
    }

    /// The source an edited view reads through: it owns the descriptor and lives as long as the view.
    private let base: FileSource?

    /// This file with `edits` applied to what is read, sharing its descriptor.
    func editing(_ edits: [ByteEdit]) -> FileSource {
        FileSource(
            fd: fd, path: path, isPipe: isPipe, openedAs: openedAs,
            edited: EditedFile(edits: edits, originalSize: openedAs?.size ?? 0), base: self)
    }

    /// Why a file cannot be sent.
    enum OpenError: Error {
        /// `open` or `fstat` failed with this errno.
        case system(call: String, code: Int32)
        /// A directory, FIFO, device or socket.
        case notARegularFile

        func failure(path: String) -> UploadFailure {
            switch self {
            case .system(let call, let code):
                UploadFailure(.fileError, "cannot \(call) \(path): \(String(cString: strerror(code)))", code: code)
            case .notARegularFile:
                UploadFailure(.fileError, "\(path) is not a regular file")
            }
        }
    }

    /// Opens a regular file for reading; fails with a reason a person can act on.
    static func open(path: String) throws(UploadFailure) -> FileSource {
        do {
            return try openRegular(path: path)
        } catch {
            throw error.failure(path: path)
        }
    }

    /// Opens a regular file for reading. O_NONBLOCK: opening a FIFO must not wait for a writer
    /// only to be refused (it has no effect on regular files).
    static func openRegular(path: String) throws(OpenError) -> FileSource {
        let fd = PathText.withCString(path) { Glibc.open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        guard fd >= 0 else { throw .system(call: "open", code: errno) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw .system(call: "stat", code: code)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw .notARegularFile
        }
        return FileSource(fd: fd, path: path, isPipe: false, openedAs: FileFingerprint(st))
    }

    /// Standard input, read to its end with no known length.
    static func standardInput() -> FileSource {
        FileSource(fd: dup(STDIN_FILENO), path: "stdin", isPipe: true, openedAs: nil)
    }

    deinit {
        if base == nil { close(fd) }
    }

    /// Reads up to `count` bytes at `offset` (ignored for pipes); fewer bytes only at end of file.
    /// An edited file reads its replacement bytes where they stand and the file's own elsewhere.
    func read(offset: Int64, count: Int, allocator: ByteBufferAllocator) throws(UploadFailure) -> ByteBuffer {
        guard let edited else { return try readFile(offset: offset, count: count, allocator: allocator) }
        var buffer = allocator.buffer(capacity: count)
        for piece in edited.pieces(at: offset, count: count) {
            switch piece {
            case .bytes(let bytes):
                buffer.writeBytes(bytes)
            case .file(let at, let n):
                var part = try readFile(offset: at, count: n, allocator: allocator)
                let got = part.readableBytes
                buffer.writeBuffer(&part)
                if got < n { return buffer }
            }
        }
        return buffer
    }

    private func readFile(offset: Int64, count: Int, allocator: ByteBufferAllocator) throws(UploadFailure) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: count)
        var filled = 0
        while filled < count {
            var failure: Int32 = 0
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - filled) { raw -> Int in
                let want = count - filled
                let got =
                    isPipe
                    ? Glibc.read(fd, raw.baseAddress, want)
                    : pread(fd, raw.baseAddress, want, off_t(offset) + off_t(filled))
                if got < 0 {
                    failure = errno
                    return 0
                }
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

    /// Hands `range` of what is sent to `body` in pieces read into one buffer used again and
    /// again (a fresh mebibyte for each piece cost a page fault every 4 KiB: most of a pass
    /// over a file in the page cache). An edited file goes through `read`.
    func scan(_ range: Range<Int64>, expected: Int64? = nil, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        guard edited == nil, !isPipe else {
            return try forEachPiece(range, expected: expected) { $0.withUnsafeReadableBytes(body) }
        }
        let size = 256 << 10
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
        defer { buffer.deallocate() }
        var at = range.lowerBound
        while at < range.upperBound {
            let want = Int(min(Int64(size), range.upperBound - at))
            let got = pread(fd, buffer.baseAddress, want, off_t(at))
            if got < 0 {
                let failure = errno
                if failure == EINTR { continue }
                throw UploadFailure(.fileError, "cannot read \(path): \(String(cString: strerror(failure)))", code: failure)
            }
            guard got > 0 else { throw sizeChanged(expected: expected ?? range.upperBound, endedAt: at) }
            body(UnsafeRawBufferPointer(rebasing: buffer[..<got]))
            at += Int64(got)
        }
    }

    /// The open file's size and modification time now, to notice it changing under an upload.
    func fingerprint() -> FileFingerprint? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return FileFingerprint(st)
    }

    /// The whole file, which must still hold `size` bytes: a byte more is asked for, so a file
    /// that grew shows without a second read. The upload then sends exactly these bytes.
    func readWhole(size: Int64) throws(UploadFailure) -> ByteBuffer {
        let content = try read(offset: 0, count: Int(size) + 1, allocator: ByteBufferAllocator())
        if content.readableBytes < Int(size) { throw sizeChanged(expected: size, endedAt: Int64(content.readableBytes)) }
        if content.readableBytes > Int(size) { throw sizeChanged(expected: size, endedAt: nil) }
        return content
    }

    /// The failure for a file whose size is no longer the one the body was laid out for:
    /// `endedAt` where a shrunk file ended, nil for one that grew.
    func sizeChanged(expected size: Int64, endedAt: Int64?) -> UploadFailure {
        guard let endedAt else { return UploadFailure(.fileError, "\(path) grew during the upload (it was \(size) bytes when the upload began)") }
        return UploadFailure(.fileError, "\(path) shrank during the upload (expected \(size) bytes, it ended at \(endedAt))")
    }

    /// The first bytes, for media-type sniffing.
    func prefix() throws(UploadFailure) -> [UInt8] {
        Array(try read(offset: 0, count: MediaSniffer.prefixLength, allocator: ByteBufferAllocator()).readableBytesView)
    }
}
