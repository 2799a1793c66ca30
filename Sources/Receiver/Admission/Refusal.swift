import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import UploadCore
import UploadProtocols

/// A request the receiver turns down, with the status and the message for the client.
struct Refusal: Error, Equatable {
    let status: HTTPResponse.Status
    let message: String
    /// Header fields the answer carries besides the usual ones (`Upload-Offset` on a 409, …).
    var fields: [String: String] = [:]
    /// A problem type of the resumable-upload draft: the body is then `application/problem+json`
    /// (RFC 9457) with the message as `detail` and `members` alongside.
    var problem: ResumableFields.Problem?
    var members: [String: Int64] = [:]

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    init(_ problem: ResumableFields.Problem, _ status: HTTPResponse.Status, _ message: String, members: [String: Int64] = [:]) {
        self.init(status, message)
        self.problem = problem
        self.members = members
    }

    func adding(_ fields: [String: String]) -> Refusal {
        var copy = self
        copy.fields.merge(fields) { _, new in new }
        return copy
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
        var (head, body) =
            problem.map { problem in
                var line = JSONLine()
                line["type"] = .string(problem.type)
                line["title"] = .string(problem.title)
                line["detail"] = .string(message)
                for (key, value) in members { line[key] = .int(value) }
                return JSONAnswer.make(status, line, contentType: "application/problem+json")
            } ?? JSONAnswer.make(status, ["error": message])
        if status == .methodNotAllowed, fields["Allow"] == nil { head.headerFields[.allow] = "POST" }
        for (name, value) in fields {
            if let name = HTTPField.Name(name) { head.headerFields[name] = value }
        }
        if status == .serviceUnavailable { head.headerFields[.retryAfter] = "1" }
        if closing { head.headerFields[.connection] = "close" }
        return (head, body)
    }
}

/// Every answer of the receiver is a small JSON object.
enum JSONAnswer {
    static func make(_ status: HTTPResponse.Status, _ object: [String: String]) -> (head: HTTPResponse, body: ByteBuffer) {
        // Every answer to an upload comes this way: JSONLine writes it without JSONSerialization's
        // boxing of a [String: Any] (a twentieth of the receiver's CPU for small files).
        var line = JSONLine()
        for (key, value) in object { line[key] = .string(value) }
        return make(status, line, contentType: "application/json; charset=utf-8")
    }

    static func make(_ status: HTTPResponse.Status, _ line: JSONLine, contentType: String) -> (head: HTTPResponse, body: ByteBuffer) {
        answer(status, ByteBuffer(string: line.text), contentType: contentType)
    }

    private static func answer(_ status: HTTPResponse.Status, _ body: ByteBuffer, contentType: String) -> (head: HTTPResponse, body: ByteBuffer) {
        var head = HTTPResponse(status: status)
        head.headerFields[.contentType] = contentType
        head.headerFields[.contentLength] = String(body.readableBytes)
        return (head, body)
    }
}
