import Foundation
import Hummingbird
import NIOCore

/// A request the receiver turns down, with the status and the message for the client.
struct Refusal: Error, Equatable {
    let status: HTTPResponse.Status
    let message: String

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    init(_ error: ReceiveError) {
        switch error {
        case .malformed(let m): self.init(.badRequest, m)
        case .missingField(let m): self.init(.badRequest, m)
        case .notAnImage(let m): self.init(.unsupportedMediaType, m)
        case .tooLarge(let limit): self.init(.contentTooLarge, "the upload is larger than the limit of \(limit) bytes")
        case .storage(let m): self.init(.internalServerError, m)
        }
    }

    /// The answer as it goes on the wire: `{"error": …}` with the headers its status needs.
    /// `closing` adds `Connection: close` (the connection ends after this answer).
    func answer(closing: Bool) -> (head: HTTPResponse, body: ByteBuffer) {
        var (head, body) = JSONAnswer.make(status, ["error": message])
        if status == .methodNotAllowed { head.headerFields[.allow] = "POST" }
        if status == .serviceUnavailable { head.headerFields[.retryAfter] = "1" }
        if closing { head.headerFields[.connection] = "close" }
        return (head, body)
    }
}

/// Every answer of the receiver is a small JSON object.
enum JSONAnswer {
    static func make(_ status: HTTPResponse.Status, _ object: [String: String]) -> (head: HTTPResponse, body: ByteBuffer) {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        var head = HTTPResponse(status: status)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.contentLength] = String(data.count)
        return (head, ByteBuffer(bytes: data))
    }
}
