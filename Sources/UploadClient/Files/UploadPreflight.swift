import Glibc
import UploadCore

/// Checks a request before it is queued, so bad input is refused with a clear reason and
/// nothing is sent: the endpoint, the file's existence and type, and (unless any file is
/// allowed) that its content is an image.
public enum UploadPreflight {
    /// Returns the file's size (`nil` for standard input).
    public static func check(_ request: UploadRequest) throws(UploadInputError) -> Int64? {
        try inspect(request)?.size
    }

    /// Like `check`, and returns the size and modification time the file had when it was
    /// checked (`nil` for standard input), from the same `fstat`.
    public static func inspect(_ request: UploadRequest) throws(UploadInputError) -> FileFingerprint? {
        try Destination.validate(request.url)
        guard case .file(let path) = request.source else { return nil }
        let source: FileSource
        do throws(FileSource.OpenError) {
            source = try FileSource.openRegular(path: path)
        } catch {
            switch error {
            case .notARegularFile: throw .notARegularFile(path: path)
            case .system(_, let code): throw .cannotRead(path: path, reason: String(cString: strerror(code)))
            }
        }
        let prefix: [UInt8]
        do {
            prefix = try source.prefix()
        } catch {
            throw .cannotRead(path: path, reason: error.code.map { String(cString: strerror($0)) } ?? error.message)
        }
        _ = try acceptedMediaType(prefix: prefix, path: path, request: request)
        return source.openedAs
    }

    /// The media type the part is sent as; refused unless it is an image or any file is allowed.
    /// The one rule both the preflight and each attempt apply (the file may change in between).
    static func acceptedMediaType(prefix: [UInt8], path: String, request: UploadRequest) throws(UploadInputError) -> MediaType {
        let media = MediaSniffer.detect(prefix: prefix, fileName: request.uploadName)
        if !request.allowAnyFile && !media.isImage {
            throw .notAnImage(path: path, looksLike: media.name)
        }
        return media
    }
}
