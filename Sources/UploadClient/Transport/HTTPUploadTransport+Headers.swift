import NIOHTTP1
import UploadCore

// The fields every request starts from: the user's (`-H`), ours, and the upload's own.
extension HTTPUploadTransport {
    /// The headers of a request that carries the whole upload: the user's, the body's type and
    /// the upload's `Idempotency-Key` (unless the user gave one).
    func uploadHeaders(_ headers: [RequestHeader], _ layout: MultipartLayout, idempotencyKey: String?) -> HTTPHeaders {
        var fields = baseHeaders(headers)
        fields.replaceOrAdd(name: "Content-Type", value: layout.contentTypeHeader)
        if let key = idempotencyKey, fields["Idempotency-Key"].isEmpty {
            fields.add(name: "Idempotency-Key", value: "\"\(key)\"")
        }
        return fields
    }

    /// The user's headers (`-H`) and our User-Agent; the body's own headers are set per request.
    func baseHeaders(_ headers: [RequestHeader]) -> HTTPHeaders {
        var httpHeaders = HTTPHeaders()
        for header in headers where header.name.lowercased() != "content-type" && header.name.lowercased() != "content-length" {
            httpHeaders.add(name: header.name, value: header.value)
        }
        if httpHeaders["User-Agent"].isEmpty {
            httpHeaders.add(name: "User-Agent", value: "uploadmon/\(UploadmonVersion.current)")
        }
        return httpHeaders
    }
}
