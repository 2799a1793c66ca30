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
    let resumable: ResumableStore
    let connections: ConnectionRegistry
    let idempotency: IdempotencyKeys
    let log: @Sendable (RequestLogLine) -> Void

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        var line = RequestLogLine(method: request.method.rawValue, path: request.uri.path)
        var bodyRead = false
        let response: Response
        do {
            response = try await route(request, line: &line, bodyRead: &bodyRead)
        } catch {
            let refusal = error
            // A refusal before the whole body was read ends the connection: the rest of the body
            // is not worth reading, and Hummingbird would otherwise drain it to reach the next request.
            response = Response(refusal.answer(closing: !bodyRead))
            line.error = refusal.message
        }
        line.status = Int(response.status.code)
        line.duration = started.duration(to: .now)
        log(line)
        return response
    }

    private func route(_ request: Request, line: inout RequestLogLine, bodyRead: inout Bool) async throws(Refusal) -> Response {
        // `UploadGate` has already answered heads it refuses; this keeps the endpoint correct on its own.
        switch UploadAdmission.decide(request.head, configuration: configuration) {
        case .refuse(let refusal):
            throw refusal
        case .accept(.upload(let boundary, nil), _):
            var key: String?
            switch IdempotencyKeys.parse(request.headers[IdempotencyKeys.field]) {
            case .failure(let refusal)?: throw refusal
            case .success(let parsed)?: key = parsed
            case nil: break
            }
            let client = request.headers[ResumableHeaders.internalClient] ?? "unknown"
            if let key {
                let length = BoundedNumber.length(request.headers[.contentLength]).bytes
                let lookup = idempotency.begin(key, client: client, length: length)
                if case .completed(let answer, let first) = lookup {
                    // The same file again (a client that never heard the answer) gets the answer
                    // again; another file under the same key is refused, never silently dropped.
                    let again = try await fingerprint(of: request, boundary: boundary, line: &line, bodyRead: &bodyRead)
                    guard again == first else { throw IdempotencyKeys.otherBody("another file") }
                    line.error = "replayed the answer to Idempotency-Key \(key)"
                    return Response(IdempotencyKeys.replay(answer))
                }
                if let refusal = IdempotencyKeys.refusal(for: lookup) { throw refusal }
            }
            do {
                let stored = try await receive(request, boundary: boundary, fingerprinting: key != nil, line: &line, bodyRead: &bodyRead)
                line.storedName = stored.name
                let body = ["filename": stored.name]
                if let key { idempotency.end(key, client: client, answer: .init(status: 200, body: Self.json(body)), fingerprint: stored.fingerprint) }
                return Self.response(.ok, body)
            } catch {
                // An answer to the whole body is the key's for good; an upload cut short is not.
                if let key {
                    idempotency.end(key, client: client, answer: bodyRead ? .init(status: Int(error.status.code), body: Self.json(["error": error.message])) : nil)
                }
                throw error
            }
        case .accept(.upload(let boundary, let creation?), _):
            return try await create(request, boundary: boundary, creation, line: &line, bodyRead: &bodyRead)
        case .accept(.append(let token, let append), _):
            return try await self.append(request, token: token, append, line: &line, bodyRead: &bodyRead)
        case .accept(.offset(let token, let version), _):
            return try await offset(token, version: version)
        case .accept(.cancel(let token, let version), _):
            return try await cancel(token, version: version)
        case .accept(.answer(let token, let version), _):
            return try answer(token, version: version)
        case .accept(.options(let version), _):
            return options(version: version)
        }
    }

    /// The fingerprint of the file a repeated request carries, read without storing anything;
    /// nil when the body holds no acceptable file (as the first one's refused answer had none).
    private func fingerprint(of request: Request, boundary: String, line: inout RequestLogLine, bodyRead: inout Bool) async throws(Refusal) -> String? {
        do {
            return try await receive(request, boundary: boundary, keep: false, fingerprinting: true, line: &line, bodyRead: &bodyRead).fingerprint
        } catch where bodyRead {
            return nil
        }
    }

    private func receive(
        _ request: Request, boundary: String, keep: Bool = true, fingerprinting: Bool, line: inout RequestLogLine, bodyRead: inout Bool
    ) async throws(Refusal) -> (name: String, size: Int64, fingerprint: String?) {
        let receiver = FormDataReceiver(boundary: boundary, field: configuration.field, store: store, imagesOnly: configuration.imagesOnly,
                                        keepsContent: keep, fingerprinting: fingerprinting)
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
                bodyRead = true
                if keep {
                    let stored = try receiver.finish()
                    return (stored.name, stored.size, receiver.fingerprint)
                }
                let content = try receiver.located()
                return (content.name, content.length, receiver.fingerprint)
            }
        } catch let error as ReceiveError {
            receiver.abort()
            throw Refusal(error)
        } catch let interruption as ConnectionInterruption {
            receiver.abort()
            throw interruption.refusal
        } catch {
            receiver.abort()
            throw Refusal(.badRequest, "the upload was interrupted: \(error)")
        }
    }

    static func response(_ status: HTTPResponse.Status, _ object: [String: String]) -> Response {
        Response(JSONAnswer.make(status, object))
    }
}

extension Response {
    init(_ answer: (head: HTTPResponse, body: ByteBuffer)) {
        self.init(status: answer.head.status, headers: answer.head.headerFields, body: .init(byteBuffer: answer.body))
    }
}
