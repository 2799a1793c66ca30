import Foundation
import Glibc
import UploadCore

/// Files in the upload folder: a temporary name while the part streams in, then a final,
/// never-overwriting name. Only names produced by `SafeFileName` are ever joined to the folder.
struct UploadStore: Sendable {
    static let temporaryPrefix = ".uploadmon-partial-"
    let directory: String

    init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
    }

    /// Creates a new temporary file (O_EXCL) for one part.
    func createTemporary() throws -> BufferedFileWriter {
        let path = directory + "/" + Self.temporaryPrefix + UUID().uuidString
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreError.io("cannot create a file in \(directory): \(String(cString: strerror(errno)))") }
        return BufferedFileWriter(fd: fd, path: path)
    }

    /// Gives the finished temporary file its final name, adding `-1`, `-2`, … when the name is
    /// taken. `link` fails instead of replacing, so an existing file is never overwritten.
    func commit(temporary path: String, as safeName: String) throws -> String {
        for n in 0..<10_000 {
            let name = n == 0 ? safeName : SafeFileName.numbered(safeName, n)
            if link(path, directory + "/" + name) == 0 {
                unlink(path)
                return name
            }
            if errno != EEXIST {
                let reason = String(cString: strerror(errno))
                unlink(path)
                throw StoreError.io("cannot store \(name): \(reason)")
            }
        }
        unlink(path)
        throw StoreError.io("too many files named like \(safeName)")
    }

    func discard(temporary path: String) {
        unlink(path)
    }

    /// Removes partial files a receiver killed mid-upload left behind (a clean stop or an
    /// aborted upload removes its own). Only those untouched for `age`: another receiver
    /// sharing the folder may be writing a fresh one. Returns the names removed.
    func removeLeftovers(untouchedFor age: Double, now: Date = Date()) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(Self.temporaryPrefix) {
            var st = stat()
            let path = directory + "/" + name
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
                  now.timeIntervalSince1970 - Double(st.st_mtim.tv_sec) >= age else { continue }
            if unlink(path) == 0 { removed.append(name) }
        }
        return removed.sorted()
    }

    enum StoreError: Error, CustomStringConvertible {
        case io(String)
        var description: String {
            switch self { case .io(let message): message }
        }
    }
}

/// Collects small writes from the multipart parser into large `write(2)` calls; large pieces
/// (the usual case: most of a received chunk) go to the file directly, without a copy.
final class BufferedFileWriter {
    static let capacity = 256 * 1024
    static let directThreshold = 64 * 1024
    let fd: Int32
    let path: String
    private var buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    private(set) var written: Int64 = 0
    private var closed = false

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        self.buffer = .allocate(byteCount: Self.capacity, alignment: 16)
    }

    deinit {
        if !closed { Glibc.close(fd) }
        buffer.deallocate()
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        if used + bytes.count > Self.capacity || bytes.count >= Self.directThreshold { try flush() }
        if bytes.count >= Self.directThreshold {
            try writeFully(bytes)
        } else {
            UnsafeMutableRawBufferPointer(rebasing: buffer[used..<used + bytes.count]).copyMemory(from: bytes)
            used += bytes.count
        }
        written += Int64(bytes.count)
    }

    func flush() throws {
        guard used > 0 else { return }
        try writeFully(UnsafeRawBufferPointer(rebasing: buffer[0..<used]))
        used = 0
    }

    func close() throws {
        try flush()
        closed = true
        guard Glibc.close(fd) == 0 else { throw UploadStore.StoreError.io("cannot close \(path): \(String(cString: strerror(errno)))") }
    }

    private func writeFully(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw UploadStore.StoreError.io("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }
}
