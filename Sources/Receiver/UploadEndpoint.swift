import Foundation
import Hummingbird
import NIOCore
import UploadCore

/// The seed server's contract: `POST <path>` with `multipart/form-data`, file in `<field>` →
/// stored → `200 {"filename": "<stored name>"}`. Every other outcome is a JSON
/// `{"error": "…"}` with the status that says what was wrong.
struct UploadEndpoint: HTTPResponder {
    typealias Context = BasicRequestContext

    let configuration: ReceiverConfiguration
    let store: UploadStore
    let log: @Sendable (RequestLogLine) -> Void

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        var line = RequestLogLine(method: request.method.rawValue, path: request.uri.path)
        let response: Response
        do {
            let stored = try await receive(request, line: &line)
            line.storedName = stored.name
            response = Self.json(.ok, ["filename": stored.name])
        } catch {
            let refusal = error
            response = Self.json(refusal.status, ["error": refusal.message])
            line.error = refusal.message
        }
        line.status = Int(response.status.code)
        line.duration = started.duration(to: .now)
        log(line)
        return response
    }

    private func receive(_ request: Request, line: inout RequestLogLine) async throws(Refusal) -> (name: String, size: Int64) {
        guard request.uri.path == configuration.path else {
            throw Refusal(.notFound, "no such endpoint: \(request.uri.path) (uploads go to POST \(configuration.path))")
        }
        guard request.method == .post else {
            throw Refusal(.methodNotAllowed, "\(request.method.rawValue) is not allowed here; use POST")
        }
        let contentType = request.headers[.contentType] ?? ""
        guard let parsed = ContentDisposition(parsing: contentType), parsed.type == "multipart/form-data" else {
            throw Refusal(.unsupportedMediaType, "expected multipart/form-data, got \(contentType.isEmpty ? "no Content-Type" : contentType)")
        }
        guard let boundary = parsed.parameters["boundary"], !boundary.isEmpty, boundary.utf8.count <= 70 else {
            throw Refusal(.badRequest, "the multipart Content-Type has no valid boundary")
        }
        if let declared = request.headers[.contentLength].flatMap({ Int64($0) }), declared > configuration.maxSize {
            throw Refusal(.contentTooLarge, "the upload is \(declared) bytes; the limit is \(configuration.maxSize)")
        }
        let receiver = FormDataReceiver(boundary: boundary, field: configuration.field, store: store, imagesOnly: configuration.imagesOnly)
        defer { line.bytes = receiver.bytesReceived }
        do {
            // The loop writes the file as the body arrives: blocking calls, so it runs on the
            // file-writing threads rather than the cooperative pool.
            return try await withTaskExecutorPreference(FileWritingExecutor.shared) {
                for try await buffer in request.body {
                    if receiver.bytesReceived + Int64(buffer.readableBytes) > configuration.maxSize {
                        receiver.abort()
                        throw ReceiveError.tooLarge(configuration.maxSize)
                    }
                    try receiver.consume(buffer)
                }
                return try receiver.finish()
            }
        } catch let error as ReceiveError {
            receiver.abort()
            throw Refusal(error)
        } catch {
            receiver.abort()
            throw Refusal(.badRequest, "the upload was interrupted: \(error)")
        }
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: String]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        if status == .methodNotAllowed { headers[.allow] = "POST" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// A request the receiver turns down, with the status and the message for the client.
struct Refusal: Error {
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
}
