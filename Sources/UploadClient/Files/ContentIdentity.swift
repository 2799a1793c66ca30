import Foundation
import UploadCore

/// A file's content identity: the SHA-256 of its bytes as they would be sent (after
/// `--strip-location`, the stripped bytes), the same digest an upload reports as it sends them
/// (`UploadEvent.content`). What "already sent" is matched by, whatever the file is called now.
public enum ContentIdentity {
    /// Reads the file once (blocking: call off any event loop) and returns its SHA-256 in
    /// lowercase hex and the number of bytes hashed.
    public static func sha256(of path: String, stripLocation: Bool = false) throws(UploadFailure) -> (hex: String, size: Int64) {
        var source = try FileSource.open(path: path)
        if stripLocation { source = try source.withoutLocation() }
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
