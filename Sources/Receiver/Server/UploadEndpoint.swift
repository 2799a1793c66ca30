import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import UploadCore

/// The seed server's contract: `POST <path>` with `multipart/form-data`, file in `<field>` →
/// stored → `200 {"filename": "<stored name>"}`. Every other outcome is a JSON
/// `{"error": "…"}` with the status that says what was wrong.
struct UploadEndpoint: HTTPResponder {
    typealias Context = ReceiverContext

    let configuration: ReceiverConfiguration
    let store: UploadStore
    let resumable: ResumableStore
    let connections: ConnectionRegistry
    let idempotency: IdempotencyKeys
    let log: @Sendable (RequestLogLine) -> Void

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = resumable.clock.monotonic()
        var line = RequestLogLine(method: request.method.rawValue, path: request.uri.path)
        var bodyRead = false
        // Taken for every request, so that the next request finds its own.
        let facts = connections.nextRequest(on: context.connection)
        let response: Response
        do {
            response = try await route(request, facts: facts, line: &line, bodyRead: &bodyRead)
        } catch {
            let refusal = error
            // A refusal before the whole body was read ends the connection: the rest of the body
            // is not worth reading, and Hummingbird would otherwise drain it to reach the next request.
            response = Response(refusal.answer(closing: !bodyRead))
            line.error = refusal.message
        }
        line.status = Int(response.status.code)
        line.duration = .seconds(resumable.clock.monotonic() - started)
        log(line)
        return response
    }

    private func route(_ request: Request, facts: RequestFacts, line: inout RequestLogLine, bodyRead: inout Bool) async throws(Refusal) -> Response {
        // `UploadGate` has already answered heads it refuses; this keeps the endpoint correct on its own.
        switch UploadAdmission.decide(request.head, configuration: configuration) {
        case .refuse(let refusal):
            throw refusal
        case .accept(.upload(let boundary, nil), _):
            return try await upload(request, boundary: boundary, facts: facts, line: &line, bodyRead: &bodyRead)
        case .accept(.upload(let boundary, let creation?), _):
            return try await create(request, boundary: boundary, creation, facts: facts, line: &line, bodyRead: &bodyRead)
        case .accept(.append(let token, let append), _):
            return try await self.append(request, token: token, append, facts: facts, line: &line, bodyRead: &bodyRead)
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

    /// An ordinary upload, under its `Idempotency-Key` if it has one (`IdempotentUpload` says the steps).
    private func upload(
        _ request: Request, boundary: String, facts: RequestFacts, line: inout RequestLogLine, bodyRead: inout Bool
    ) async throws(Refusal) -> Response {
        let digests = try DigestCheck(request.headers)
        var key: String?
        switch IdempotencyKeys.parse(request.headers[IdempotencyKeys.field]) {
        case .failure(let refusal)?: throw refusal
        case .success(let parsed)?: key = parsed
        case nil: break
        }
        if let key {
            let length = BoundedNumber.length(request.headers[.contentLength]).bytes
            let lookup = idempotency.begin(key, client: facts.client, length: length, now: resumable.clock.wall())
            switch IdempotentUpload.start(lookup, directory: store.directory, exists: { FileFingerprint.of(path: $0) != nil }) {
            case .receive:
                break
            case .compare(let path, let answer):
                let same = try await sameFile(request, boundary: boundary, as: path, line: &line, bodyRead: &bodyRead)
                let replay = try IdempotentUpload.compared(sameFile: same, answer: answer).get()
                line.error = "replayed the answer to Idempotency-Key \(key)"
                return Response(IdempotencyKeys.replay(replay))
            case .forgetAndRetake:
                idempotency.end(key, client: facts.client, answer: nil, now: resumable.clock.wall())
                let retaken = idempotency.begin(key, client: facts.client, length: length, now: resumable.clock.wall())
                if let refusal = IdempotentUpload.retaken(retaken) { throw refusal }
            case .refuse(let refusal):
                throw refusal
            }
        }
        let outcome: Result<(name: String, size: Int64, same: Bool, digests: [DigestFields.Algorithm: [UInt8]]), Refusal>
        do {
            outcome = .success(try await receive(request, boundary: boundary, digests: digests, line: &line, bodyRead: &bodyRead))
        } catch {
            outcome = .failure(error)
        }
        if let key {
            let kept = IdempotentUpload.kept(outcome.map(\.name), bodyRead: bodyRead)
            idempotency.end(key, client: facts.client, answer: kept.answer, stored: kept.stored, now: resumable.clock.wall())
        }
        let stored = try outcome.get()
        line.storedName = stored.name
        var response = Self.response(.ok, ["filename": stored.name])
        for (name, value) in digests.answerFields(stored.digests) { response.headers[HTTPField.Name(name)!] = value }
        return response
    }

    /// Whether a repeated request's file part is the file stored at `path`, read without storing
    /// anything (a body that holds no acceptable file is not).
    private func sameFile(_ request: Request, boundary: String, as path: String, line: inout RequestLogLine, bodyRead: inout Bool) async throws(Refusal) -> Bool
    {
        do {
            return try await receive(request, boundary: boundary, keep: false, comparingWith: path, line: &line, bodyRead: &bodyRead).same
        } catch  where bodyRead {
            return false
        }
    }

    /// Receives the body through a `FormDataReceiver`. With digests claimed (`Content-Digest`,
    /// `Repr-Digest`: for one request they cover the same bytes), what arrived is checked before
    /// anything is stored; the digests computed come back for the answer.
    private func receive(
        _ request: Request, boundary: String, digests: DigestCheck = DigestCheck(), keep: Bool = true, comparingWith stored: String? = nil,
        line: inout RequestLogLine, bodyRead: inout Bool
    ) async throws(Refusal) -> (name: String, size: Int64, same: Bool, digests: [DigestFields.Algorithm: [UInt8]]) {
        let receiver = FormDataReceiver(
            boundary: boundary, field: configuration.field, store: store, imagesOnly: configuration.imagesOnly,
            keepsContent: keep, comparingWith: stored)
        defer { line.bytes = receiver.bytesReceived }
        do {
            // The loop writes the file as the body arrives: blocking calls, so it runs on the
            // file-writing threads rather than the cooperative pool.
            return try await withTaskExecutorPreference(FileWritingExecutor.shared) {
                let digester = DigestPipeline(digests.contentAlgorithms.union(digests.representationAlgorithms))
                for try await buffer in request.body {
                    if receiver.bytesReceived + Int64(buffer.readableBytes) > configuration.maxSize {
                        receiver.abort()
                        throw ReceiveError.tooLarge(configuration.maxSize)
                    }
                    digester.feed(buffer)
                    try receiver.consume(buffer)
                }
                bodyRead = true
                let computed = digester.finalize()
                if let refusal = digests.contentRefusal(computed) ?? digests.representationRefusal(computed) { throw refusal }
                if keep {
                    let stored = try receiver.finish()
                    return (stored.name, stored.size, false, computed)
                }
                let content = try receiver.located()
                return (content.name, content.length, receiver.matchesStoredFile, computed)
            }
        } catch let refusal as Refusal {
            receiver.abort()
            throw refusal
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
