import Foundation
import Glibc
import UploadCore

/// Files in the upload folder: no name (or a temporary one) while the part streams in, then a
/// final, never-overwriting name. Only names produced by `SafeFileName` are ever joined to the folder.
struct UploadStore: Sendable {
    static let temporaryPrefix = ".uploadmon-partial-"
    /// `O_TMPFILE`, which Swift does not import (a macro of glibc's fcntl.h under _GNU_SOURCE):
    /// `__O_TMPFILE | O_DIRECTORY`, 020000000 on x86-64 and arm64 alike.
    static let tmpFile: Int32 = 0o20000000 | O_DIRECTORY
    let directory: String
    /// Whether new files start without a name (`O_TMPFILE`) and get one by `linkat` through
    /// /proc/self/fd: one directory operation per stored file instead of three (create, link,
    /// unlink), the inode allocated outside the directory's lock, and nothing left behind by a
    /// receiver that is killed. Found out once, when the store is made; otherwise named files.
    let anonymous: Bool

    /// `anonymousFiles`: nil finds out; false keeps to named files (tests of the fallback).
    init(directory: String, anonymousFiles: Bool? = nil) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        anonymous = anonymousFiles ?? Self.anonymousFilesWork(in: directory)
    }

    /// Creates a new file for one part: without a name where the folder allows, else a
    /// temporary name (O_EXCL).
    func createTemporary() throws -> BufferedFileWriter {
        if anonymous {
            let fd = Self.openNameless(in: directory)
            if fd >= 0 { return BufferedFileWriter(fd: fd, path: "/proc/self/fd/\(fd)", shownAs: "a new file in \(directory)", anonymous: true) }
        }
        let path = directory + "/" + Self.temporaryPrefix + UUID().uuidString
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StoreError.io("cannot create a file in \(directory): \(String(cString: strerror(errno)))") }
        return BufferedFileWriter(fd: fd, path: path)
    }

    /// Stores what `writer` wrote under its final name (see `commit(temporary:as:)`) and closes it.
    func commit(_ writer: BufferedFileWriter, as safeName: String) throws -> String {
        guard writer.anonymous else {
            do { try writer.close() } catch {
                unlink(writer.path)
                throw error
            }
            return try commit(temporary: writer.path, as: safeName)
        }
        defer { try? writer.close() }
        try writer.flush()
        // AT_SYMLINK_FOLLOW on the /proc link names the open file itself.
        return try link(as: safeName) { linkat(AT_FDCWD, writer.path, AT_FDCWD, $0, AT_SYMLINK_FOLLOW) }
    }

    /// Gives the finished temporary file its final name, adding `-1`, `-2`, … when the name is
    /// taken. `link` fails instead of replacing, so an existing file is never overwritten.
    func commit(temporary path: String, as safeName: String) throws -> String {
        defer { unlink(path) }
        return try link(as: safeName) { Glibc.link(path, $0) }
    }

    private func link(as safeName: String, _ linking: (String) -> Int32) throws -> String {
        for n in 0..<10_000 {
            let name = n == 0 ? safeName : SafeFileName.numbered(safeName, n)
            if linking(directory + "/" + name) == 0 { return name }
            if errno != EEXIST {
                throw StoreError.io("cannot store \(name): \(String(cString: strerror(errno)))")
            }
        }
        throw StoreError.io("too many files named like \(safeName)")
    }

    /// Drops an unfinished file: a nameless one goes with its descriptor, a named one is removed.
    func discard(_ writer: BufferedFileWriter) {
        if !writer.anonymous { unlink(writer.path) }
        writer.abandon()
    }

    /// A new file in `directory` without a name (a descriptor, or -1 with errno).
    private static func openNameless(in directory: String) -> Int32 {
        Glibc.open(directory, tmpFile | O_WRONLY | O_CLOEXEC, 0o644)
    }

    /// Whether this folder takes nameless files that `linkat` can name (Linux 3.11+, a file
    /// system with O_TMPFILE, /proc mounted). Tried for real with a probe file.
    static func anonymousFilesWork(in directory: String) -> Bool {
        let fd = openNameless(in: directory)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        let probe = directory + "/" + temporaryPrefix + "probe-" + UUID().uuidString
        guard linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, probe, AT_SYMLINK_FOLLOW) == 0 else { return false }
        unlink(probe)
        return true
    }

    /// Removes partial files a receiver killed mid-upload left behind (a clean stop or an
    /// aborted upload removes its own). Only those untouched for `age`: another receiver
    /// sharing the folder may be writing a fresh one. Returns the names removed.
    func removeLeftovers(untouchedFor age: Double, now: Date) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(Self.temporaryPrefix) {
            var st = stat()
            let path = directory + "/" + name
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
                now.timeIntervalSince1970 - Double(st.st_mtim.tv_sec) >= age
            else { continue }
            if unlink(path) == 0 { removed.append(name) }
        }
        return removed.sorted()
    }

    enum StoreError: Error, CustomStringConvertible {
        case io(String)
        var description: String {
            switch self {
            case .io(let message): message
            }
        }
    }
}

/// Collects small writes from the multipart parser into large `write(2)` calls; large pieces
/// (the usual case: most of a received chunk) go to the file directly, without a copy.
final class BufferedFileWriter {
    static let capacity = 256 * 1024
    static let directThreshold = 64 * 1024
    let fd: Int32
    /// The file's name, or for a nameless file its /proc/self/fd link.
    let path: String
    /// How errors name the file.
    let shownAs: String
    /// Whether the file has no name yet (`O_TMPFILE`).
    let anonymous: Bool
    private var buffer: UnsafeMutableRawBufferPointer
    private var used = 0
    private(set) var written: Int64 = 0
    private var closed = false

    init(fd: Int32, path: String, shownAs: String? = nil, anonymous: Bool = false) {
        self.fd = fd
        self.path = path
        self.shownAs = shownAs ?? path
        self.anonymous = anonymous
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

    /// Closes the file without writing what is still buffered (it is being thrown away).
    func abandon() {
        guard !closed else { return }
        closed = true
        used = 0
        Glibc.close(fd)
    }

    func close() throws {
        guard !closed else { return }
        try flush()
        closed = true
        guard Glibc.close(fd) == 0 else { throw UploadStore.StoreError.io("cannot close \(shownAs): \(String(cString: strerror(errno)))") }
    }

    private func writeFully(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw UploadStore.StoreError.io("cannot write \(shownAs): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }
}
