import Foundation
import Glibc
import NIOCore
import UploadCore

/// Why a request's body could not be stored.
enum ReceiveError: Error, Equatable {
    case malformed(String)
    case missingField(String)
    case notAnImage(String)
    case tooLarge(Int64)
    case storage(String)
}

/// Feeds one request's body through `MultipartStreamParser` and streams the wanted file part
/// into a temporary file. The upload counts as complete only when the file part ended at a
/// delimiter and the closing delimiter was seen.
///
/// With `keepsContent: false` it writes nothing: it finds where the file part's bytes lie in
/// the stream (`content`), checks them as usual, and leaves storing them to whoever keeps the
/// stream (a resumable upload, whose bytes are already on disk and need not be written twice).
final class FormDataReceiver {
    private enum Part {
        case undecided
        /// The wanted file part; `writer` is nil when the content is not kept here.
        case file(BufferedFileWriter?, name: String)
        case ignored
    }

    /// Where the file part's bytes are in the stream.
    struct Content: Equatable {
        var name: String
        var start: Int64
        var length: Int64
    }

    private var parser: MultipartStreamParser
    private let field: String
    private let store: UploadStore
    private let imagesOnly: Bool

    private var part: Part = .undecided
    private var sniffBuffer: [UInt8] = []
    private var sniffed = false
    private var completed: (writer: BufferedFileWriter?, name: String)?
    private var failure: ReceiveError?
    private(set) var bytesReceived: Int64 = 0
    private let keepsContent: Bool
    /// The file part's place in the stream, from the moment it begins (its length grows).
    private(set) var content: Content?
    /// The stored file the file part is compared with, byte for byte, as it arrives (a repeat
    /// of an Idempotency-Key: the same file gets the first answer again, another is refused);
    /// nil when not comparing. Nothing costs the first upload anything: only a repeat reads.
    private let comparedWith: String?
    private var comparison: (fd: Int32, at: Int64, differs: Bool)?

    init(boundary: String, field: String, store: UploadStore, imagesOnly: Bool, keepsContent: Bool = true, comparingWith stored: String? = nil) {
        self.parser = MultipartStreamParser(boundary: boundary)
        self.field = field
        self.store = store
        self.imagesOnly = imagesOnly
        self.keepsContent = keepsContent
        self.comparedWith = stored
    }

    /// With `comparingWith`, once the body has ended: whether its file part is the stored file,
    /// byte for byte and to its length (false too when the stored file could not be read).
    var matchesStoredFile: Bool {
        guard let comparison, !comparison.differs else { return false }
        var st = stat()
        return fstat(comparison.fd, &st) == 0 && Int64(st.st_size) == comparison.at
    }

    deinit {
        abort()
        if let comparison { close(comparison.fd) }
    }

    func consume(_ buffer: ByteBuffer) throws(ReceiveError) {
        bytesReceived += Int64(buffer.readableBytes)
        if let failure { throw failure }
        do {
            try buffer.withUnsafeReadableBytes { raw in
                try parser.feed(raw) { event in
                    switch event {
                    case .partBegin(let headers, let start): begin(headers, at: start)
                    case .body(let bytes): body(bytes)
                    case .partEnd: partEnded()
                    }
                    if let failure { throw failure }
                }
            }
        } catch let error as ReceiveError {
            fail(error)
        } catch {
            fail(.malformed("the multipart body is malformed: \(error)"))
        }
        if let failure { throw failure }
    }

    /// A point in the stream from which a later receiver may skip ahead (`skipContent`): the
    /// parser is inside the wanted file part with nothing held back (and the content's type
    /// already checked); nil otherwise.
    var checkpoint: Int64? {
        guard failure == nil, case .file = part, parser.canSkipBody, !imagesOnly || sniffed else { return nil }
        return parser.position
    }

    /// Steps over the file part's content up to `position`, which an earlier receiver of the
    /// same stream reached as its `checkpoint`: those bytes are counted, not read again.
    func skipContent(to position: Int64) {
        guard let here = checkpoint, position > here else { return }
        parser.skipBody(position - here)
        content?.length += position - here
        bytesReceived += position - here
    }

    /// The body has ended: returns the stored name and size of the file part.
    func finish() throws(ReceiveError) -> (name: String, size: Int64) {
        let completed = try ended()
        guard let writer = completed.writer else { preconditionFailure("a receiver that keeps no content stores none") }
        do {
            let stored = try store.commit(writer, as: completed.name)
            self.completed = nil
            return (stored, writer.written)
        } catch {
            fail(.storage(String(describing: error)))
            throw failure!
        }
    }

    /// The body has ended (`keepsContent: false`): where the file part's bytes are.
    func located() throws(ReceiveError) -> Content {
        _ = try ended()
        completed = nil
        return content!
    }

    private func ended() throws(ReceiveError) -> (writer: BufferedFileWriter?, name: String) {
        if let failure { throw failure }
        guard let completed else {
            if case .file = part {
                fail(.malformed("the body ended before the '\(field)' part was complete"))
            } else {
                fail(.missingField("no file in the form field '\(field)'"))
            }
            throw failure!
        }
        guard parser.isComplete else {
            fail(.malformed("the body ended without the closing boundary"))
            throw failure!
        }
        return completed
    }

    /// Removes any temporary file; safe to call more than once.
    func abort() {
        if case .file(let writer?, _) = part { store.discard(writer) }
        if let writer = completed?.writer { store.discard(writer) }
        part = .ignored
        completed = nil
    }

    private func fail(_ error: ReceiveError) {
        if failure == nil { failure = error }
        abort()
    }

    private func begin(_ headers: [String: String], at start: Int64) {
        let disposition = headers["content-disposition"].flatMap(ContentDisposition.init(parsing:))
        guard completed == nil, let disposition, disposition.name == field else {
            part = .ignored
            return
        }
        guard let filename = disposition.filename else {
            fail(.missingField("the form field '\(field)' holds text, not a file"))
            return
        }
        let name = SafeFileName.sanitize(filename) { "upload-\(UInt32.random(in: 0...UInt32.max))" }
        content = Content(name: name, start: start, length: 0)
        if let comparedWith {
            let fd = PathText.withCString(comparedWith) { open($0, O_RDONLY | O_CLOEXEC) }
            comparison = (fd, 0, fd < 0)
        }
        guard keepsContent else {
            part = .file(nil, name: name)
            return
        }
        do {
            part = .file(try store.createTemporary(), name: name)
        } catch {
            fail(.storage(String(describing: error)))
        }
    }

    private func body(_ bytes: UnsafeRawBufferPointer) {
        guard case .file(let writer, let name) = part else { return }
        content?.length += Int64(bytes.count)
        if let current = comparison, !current.differs { compare(bytes, at: current) }
        if imagesOnly && !sniffed {
            sniffBuffer.append(contentsOf: bytes)
            if sniffBuffer.count >= MediaSniffer.prefixLength { flushSniffBuffer(writer, name: name) }
            return
        }
        do {
            try writer?.write(bytes)
        } catch {
            fail(.storage(String(describing: error)))
        }
    }

    /// Compares the next bytes of the file part with the stored file at the same place.
    private func compare(_ bytes: UnsafeRawBufferPointer, at current: (fd: Int32, at: Int64, differs: Bool)) {
        var stored = [UInt8](repeating: 0, count: bytes.count)
        var filled = 0
        while filled < bytes.count {
            let n = stored.withUnsafeMutableBytes { pread(current.fd, $0.baseAddress! + filled, bytes.count - filled, off_t(current.at) + off_t(filled)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            filled += n
        }
        let same = filled == bytes.count && stored.withUnsafeBytes { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
        comparison = (current.fd, current.at + Int64(bytes.count), !same)
    }

    private func flushSniffBuffer(_ writer: BufferedFileWriter?, name: String) {
        sniffed = true
        let media = MediaSniffer.detect(prefix: sniffBuffer, fileName: name)
        guard media.isImage else {
            fail(.notAnImage("'\(name)' is not an image (it looks like \(media.name))"))
            return
        }
        do {
            if let writer { try sniffBuffer.withUnsafeBytes { try writer.write($0) } }
        } catch {
            fail(.storage(String(describing: error)))
        }
        sniffBuffer = []
    }

    private func partEnded() {
        if case .file(let writer, let name) = part {
            if imagesOnly && !sniffed { flushSniffBuffer(writer, name: name) }
            if failure == nil { completed = (writer, name) }
        }
        if failure == nil { part = .undecided }
    }
}
