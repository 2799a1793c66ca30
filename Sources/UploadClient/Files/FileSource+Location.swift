import PhotoRewrite
import NIOCore
import UploadCore

extension FileSource {
    /// The file as `--strip-location` sends it: the same bytes but for its location (worked out
    /// again from the file on every attempt, so a retry or a resume makes the same body). A file
    /// whose location cannot be removed safely is not sent.
    func withoutLocation() throws(UploadFailure) -> FileSource {
        guard let size = openedAs?.size else { return self }
        let edits: [ByteEdit]
        do {
            edits = try LocationStripper.edits(size: size) { offset, count in
                (try? self.read(offset: offset, count: count, allocator: ByteBufferAllocator())).map { Array($0.readableBytesView) } ?? []
            }
        } catch {
            throw UploadFailure(.fileError, "\(path): \(error.description)")
        }
        return edits.isEmpty ? self : editing(edits)
    }
}
