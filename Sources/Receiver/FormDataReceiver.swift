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
final class FormDataReceiver {
    private enum Part {
        case undecided
        case file(BufferedFileWriter, name: String)
        case ignored
    }

    private var parser: MultipartStreamParser
    private let field: String
    private let store: UploadStore
    private let imagesOnly: Bool

    private var part: Part = .undecided
    private var sniffBuffer: [UInt8] = []
    private var sniffed = false
    private var completed: (writer: BufferedFileWriter, name: String)?
    private var failure: ReceiveError?
    private(set) var bytesReceived: Int64 = 0

    init(boundary: String, field: String, store: UploadStore, imagesOnly: Bool) {
        self.parser = MultipartStreamParser(boundary: boundary)
        self.field = field
        self.store = store
        self.imagesOnly = imagesOnly
    }

    deinit {
        abort()
    }

    func consume(_ buffer: ByteBuffer) throws(ReceiveError) {
        bytesReceived += Int64(buffer.readableBytes)
        if let failure { throw failure }
        do {
            try buffer.withUnsafeReadableBytes { raw in
                try parser.feed(raw) { event in
                    switch event {
                    case .partBegin(let headers): begin(headers)
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

    /// The body has ended: returns the stored name and size of the file part.
    func finish() throws(ReceiveError) -> (name: String, size: Int64) {
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
        do {
            try completed.writer.close()
            let stored = try store.commit(temporary: completed.writer.path, as: completed.name)
            self.completed = nil
            return (stored, completed.writer.written)
        } catch {
            fail(.storage(String(describing: error)))
            throw failure!
        }
    }

    /// Removes any temporary file; safe to call more than once.
    func abort() {
        if case .file(let writer, _) = part { store.discard(temporary: writer.path) }
        if let completed { store.discard(temporary: completed.writer.path) }
        part = .ignored
        completed = nil
    }

    private func fail(_ error: ReceiveError) {
        if failure == nil { failure = error }
        abort()
    }

    private func begin(_ headers: [String: String]) {
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
        do {
            part = .file(try store.createTemporary(), name: name)
        } catch {
            fail(.storage(String(describing: error)))
        }
    }

    private func body(_ bytes: UnsafeRawBufferPointer) {
        guard case .file(let writer, let name) = part else { return }
        if imagesOnly && !sniffed {
            sniffBuffer.append(contentsOf: bytes)
            if sniffBuffer.count >= MediaSniffer.prefixLength { flushSniffBuffer(writer, name: name) }
            return
        }
        do {
            try writer.write(bytes)
        } catch {
            fail(.storage(String(describing: error)))
        }
    }

    private func flushSniffBuffer(_ writer: BufferedFileWriter, name: String) {
        sniffed = true
        let media = MediaSniffer.detect(prefix: sniffBuffer, fileName: name)
        guard media.isImage else {
            fail(.notAnImage("'\(name)' is not an image (it looks like \(media.name))"))
            return
        }
        do {
            try sniffBuffer.withUnsafeBytes { try writer.write($0) }
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
