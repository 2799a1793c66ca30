import Foundation
import Glibc

/// Appends to a resumable upload's stream: to the part file until the file part's bytes begin,
/// then to the body file. Its file calls block.
final class StreamAppender {
    private var head: BufferedFileWriter?
    private var body: BufferedFileWriter?
    let partPath: String
    let bodyPath: String
    /// Where the next byte goes in the stream.
    private(set) var position: Int64
    /// Where the body file begins in the stream; nil until the stream is split.
    private(set) var bodyStart: Int64?

    init(partPath: String, bodyPath: String, offset: Int64) throws {
        self.partPath = partPath
        self.bodyPath = bodyPath
        position = offset
        var part = stat()
        var split = stat()
        guard stat(partPath, &part) == 0 else { throw UploadStore.StoreError.io("\(partPath) is gone") }
        if stat(bodyPath, &split) == 0, Int64(part.st_size) <= offset {
            bodyStart = Int64(part.st_size)
            body = try Self.open(bodyPath, at: offset - Int64(part.st_size))
        } else {
            unlink(bodyPath)
            head = try Self.open(partPath, at: offset)
        }
    }

    /// Appends `bytes`; `contentStart` is where the file part's bytes begin once that is known:
    /// they and all after them go to the body file.
    func write(_ bytes: UnsafeRawBufferPointer, contentStart: Int64?) throws {
        var bytes = bytes
        if let head, let start = contentStart, start >= position, start <= position + Int64(bytes.count) {
            let before = Int(start - position)
            try head.write(UnsafeRawBufferPointer(rebasing: bytes[0..<before]))
            try head.close()
            self.head = nil
            let fd = Glibc.open(bodyPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw UploadStore.StoreError.io("cannot create \(bodyPath): \(String(cString: strerror(errno)))") }
            body = BufferedFileWriter(fd: fd, path: bodyPath)
            bodyStart = start
            position = start
            bytes = UnsafeRawBufferPointer(rebasing: bytes[before...])
        }
        guard let writer = body ?? head else { throw UploadStore.StoreError.io("\(partPath) is closed") }
        try writer.write(bytes)
        position += Int64(bytes.count)
    }

    /// Flushes and closes; later calls do nothing (and `write` fails).
    func close() throws {
        defer {
            head = nil
            body = nil
        }
        try head?.close()
        try body?.close()
    }

    /// Reads `range` of the stream, in pieces of at most 1 MiB.
    func read(_ range: Range<Int64>, _ each: (UnsafeRawBufferPointer) throws -> Void) throws {
        try head?.flush()
        try body?.flush()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        let split = bodyStart ?? .max
        // A range may begin past the split (a replay that stepped over the file's bytes): then
        // it lies in the body file alone.
        let part = range.lowerBound..<max(range.lowerBound, min(range.upperBound, split))
        if !part.isEmpty { try Self.read(partPath, range: part, buffer: buffer, each) }
        let body = max(range.lowerBound, split)..<max(range.upperBound, split)
        if !body.isEmpty { try Self.read(bodyPath, range: body.lowerBound - split..<body.upperBound - split, buffer: buffer, each) }
    }

    /// Copies `range` of the stream whose files begin at the given stream offsets into `writer`.
    static func copy(from files: [(path: String, start: Int64)], range: Range<Int64>, into writer: BufferedFileWriter) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        for (index, file) in files.enumerated() where file.start < range.upperBound {
            let end = index + 1 < files.count ? min(files[index + 1].start, range.upperBound) : range.upperBound
            let from = max(file.start, range.lowerBound)
            guard end > from else { continue }
            try read(file.path, range: from - file.start..<end - file.start, buffer: buffer) { try writer.write($0) }
        }
    }

    private static func read(
        _ path: String, range: Range<Int64>, buffer: UnsafeMutableRawBufferPointer,
        _ each: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UploadStore.StoreError.io("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        var at = range.lowerBound
        while at < range.upperBound {
            let wanted = Int(min(Int64(buffer.count), range.upperBound - at))
            let n = pread(fd, buffer.baseAddress, wanted, off_t(at))
            guard n > 0 else { throw UploadStore.StoreError.io("\(path) ended at \(at) bytes, before \(range.upperBound)") }
            try each(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            at += Int64(n)
        }
    }

    private static func open(_ path: String, at offset: Int64) throws -> BufferedFileWriter {
        let fd = Glibc.open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UploadStore.StoreError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
        guard ftruncate(fd, off_t(offset)) == 0, lseek(fd, off_t(offset), SEEK_SET) == offset else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw UploadStore.StoreError.io("cannot position \(path): \(reason)")
        }
        return BufferedFileWriter(fd: fd, path: path)
    }
}
