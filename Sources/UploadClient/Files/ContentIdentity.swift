import Foundation
import UploadCore

/// A file's content identity: the SHA-256 of its bytes as they would be sent (after
/// `--strip-location`, the stripped bytes), the same digest an upload reports as it sends them
/// (`UploadEvent.content`). What "already sent" is matched by, whatever the file is called now.
public enum ContentIdentity {
    /// Reads the file once (blocking: call off any event loop) and returns its SHA-256 in
    /// lowercase hex and the number of bytes hashed.
    ///
    /// With a `conversion` that changes anything, the digest names the original's bytes and
    /// the settings (`converted`) instead: what a converted photo is known by, found without
    /// converting it.
    public static func sha256(of path: String, stripLocation: Bool = false, conversion: PhotoConversion? = nil) throws(UploadFailure) -> (
        hex: String, size: Int64
    ) {
        if let conversion, conversion.changesAnything {
            let original = try sha256(of: FileSource.open(path: path))
            return (converted(original: original.hex, conversion, stripLocation: stripLocation), original.size)
        }
        var source = try FileSource.open(path: path)
        if stripLocation { source = try source.withoutLocation() }
        return try sha256(of: source)
    }

    /// The identity of a photo converted with `conversion` (and stripped or not) from a file
    /// whose bytes have SHA-256 `original`: conversion is deterministic from the two, so the
    /// same photo sent with the same settings is known, however the file is named now.
    public static func converted(original: String, _ conversion: PhotoConversion, stripLocation: Bool) -> String {
        let text = "uploadmon converted photo 1\n\(conversion.identityText)\nstrip-location=\(stripLocation)\n\(original.lowercased())"
        var digester = Digester([.sha256])
        digester.update(Array(text.utf8))
        return Digester.hex(digester.finalize()[.sha256] ?? [])
    }

    /// The SHA-256 of what `source` reads, and its size.
    static func sha256(of source: FileSource) throws(UploadFailure) -> (hex: String, size: Int64) {
        let path = source.path
        guard let size = source.size else { throw UploadFailure(.fileError, "\(path) has no size to hash (a pipe)") }
        var digester = Digester([.sha256])
        do {
            try source.hash(0..<size, into: &digester) { false }
        } catch let failure as UploadFailure {
            throw failure
        } catch {
            throw UploadFailure(.fileError, "cannot read \(path): \(error)")
        }
        let bytes = digester.finalize()[.sha256] ?? []
        return (Digester.hex(bytes), size)
    }
}
