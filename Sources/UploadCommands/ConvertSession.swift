import Foundation
import Glibc
import Synchronization
import PhotoRewrite
import UploadCore

/// `uploadmon convert`: writes photos into a folder as `send` would send them with the same
/// options (`--convert`, `--max-dimension`, `--max-bytes`, `--strip-location`), to look at
/// before sending, or to time the conversion alone.
public struct ConvertSession: Sendable {
    public var files: [String]
    public var outputDirectory: String
    public var conversion: PhotoConversion
    public var stripLocation: Bool

    public init(files: [String], outputDirectory: String, conversion: PhotoConversion, stripLocation: Bool) {
        self.files = files
        self.outputDirectory = outputDirectory
        self.conversion = conversion
        self.stripLocation = stripLocation
    }

    /// Writes each file, saying a line for each on `output` and each refusal on `errors`; 0 when
    /// every file was written, 1 when some could not be, 64 when nothing could start.
    public func run(output: @Sendable (String) -> Void, errors: @Sendable (String) -> Void) -> Int32 {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: outputDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
            errors("uploadmon convert: \(outputDirectory) is not a folder")
            return 64
        }
        // One photo per core at a time (each conversion is one thread's work), said in the
        // order the files were given as soon as those before them are done.
        let said = Mutex(Said(lines: Array(repeating: nil, count: files.count)))
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            let file = files[index]
            let name = conversion.sentName(UploadName.uploadName(ofPath: file))
            let target = outputDirectory + "/" + name
            let line: Said.Line
            do {
                let (bytes, words) = try written(file)
                try write(bytes, to: target)
                line = .done(InvisibleCharacters.escaped("\(file) → \(target): \(words), \(ByteFormat.bytes(Int64(bytes.count)))"))
            } catch {
                line = .failed(InvisibleCharacters.escaped("\(file): \(error)"))
            }
            said.withLock { said in
                said.lines[index] = line
                while said.next < said.lines.count, let ready = said.lines[said.next] {
                    switch ready {
                    case .done(let text): output(text)
                    case .failed(let text):
                        said.failed += 1
                        errors(text)
                    }
                    said.lines[said.next] = nil
                    said.next += 1
                }
            }
        }
        return said.withLock { $0.failed } == 0 ? 0 : 1
    }

    /// What the conversions said, kept until those before them were said.
    struct Said: Sendable {
        enum Line: Sendable {
            case done(String)
            case failed(String)
        }
        var lines: [Line?]
        var next = 0
        var failed = 0
    }

    struct Refused: Error, CustomStringConvertible { let description: String }

    /// The bytes `send` would send for `file`, and what was done in words.
    func written(_ file: String) throws -> ([UInt8], String) {
        let settings = conversion
        if let converted = try PhotoConverter.convert(path: file, settings, stripLocation: stripLocation) {
            return (converted.bytes, "\(converted.format == .webp ? "WebP" : "JPEG") \(converted.width) x \(converted.height) q\(converted.quality)")
        }
        guard let data = FileManager.default.contents(atPath: file) else { throw Refused(description: "cannot read it") }
        let original = [UInt8](data)
        guard stripLocation else { return (original, "already what was asked: as it is") }
        let edits = try LocationStripper.edits(size: Int64(original.count)) { offset, count in
            Array(original[Int(min(offset, Int64(original.count)))..<Int(min(offset + Int64(count), Int64(original.count)))])
        }
        let edited = EditedFile(edits: edits, originalSize: Int64(original.count))
        var bytes: [UInt8] = []
        for piece in edited.pieces(at: 0, count: Int(edited.size)) {
            switch piece {
            case .bytes(let replacement): bytes += replacement
            case .file(let offset, let count): bytes += original[Int(offset)..<min(original.count, Int(offset) + count)]
            }
        }
        return (bytes, "already what was asked: without its location")
    }

    /// Writes a new file; one already there is not overwritten.
    func write(_ bytes: [UInt8], to path: String) throws {
        let fd = PathText.withCString(path) { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        guard fd >= 0 else {
            throw Refused(description: errno == EEXIST ? "\(path) exists; not overwritten" : "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw Refused(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
            done += n
        }
    }
}
