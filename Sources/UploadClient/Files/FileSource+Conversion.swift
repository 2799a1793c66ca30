import PhotoRewrite
import UploadCore

extension FileSource {
    /// The file as `--convert`/`--max-dimension`/`--max-bytes` send it: written again in
    /// memory (made again from the file on every attempt: the same bytes, so a retry or a
    /// resume goes on where it was), or this file when it already is what was asked. A photo that
    /// cannot be converted is not sent.
    func converted(_ settings: PhotoConversion, stripLocation: Bool) throws(UploadFailure) -> (FileSource, converted: Bool) {
        guard let size = openedAs?.size else { return (self, false) }
        let written: PhotoConverter.Converted?
        do {
            written = try PhotoConverter.convert(path: path, settings, stripLocation: stripLocation)
        } catch {
            throw UploadFailure(.fileError, "\(path): \(error.description)")
        }
        guard let written else { return (self, false) }
        return (editing([ByteEdit(range: 0..<size, replacement: written.bytes)]), true)
    }
}
