import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import UploadCore
import UploadProtocols

/// The upload endpoint's resumable side (draft-ietf-httpbis-resumable-upload, interop versions
/// 6, 8, 9 and 10): a `POST` with `Upload-Complete` creates an upload resource; `HEAD` says its offset,
/// `PATCH` appends, `DELETE` cancels, `OPTIONS` says the endpoint supports it. When the last byte
/// has arrived, the whole multipart body goes through the same `FormDataReceiver` a one-shot
/// upload does, and the answer is the endpoint's own (`200 {"filename": …}`).
extension UploadEndpoint {
    /// `POST` with `Upload-Complete`: the upload resource is the gate's (announced with `104`) or a
    /// new one; the request's content is its first bytes (all of them with `?1`).
    func create(
        _ request: Request, boundary: String, _ creation: UploadAdmission.Creation, facts: RequestFacts, line: inout RequestLogLine, bodyRead: inout Bool
    ) async throws(Refusal) -> Response {
        var fields = echo(creation.version)
        let digests = try DigestCheck(request.headers)
        let token: String
        if let announced = facts.announcedToken {
            token = announced
        } else {
            token = try makeResource(boundary: boundary, length: creation.length, client: facts.client, fields: fields).token
        }
        fields["Location"] = location(token, request)
        guard let lease = await resumable.acquire(token, fresh: true, interrupt: interrupter(facts), now: resumable.clock.wall()) else {
            throw Refusal(.conflict, "the upload resource was taken over by another request").adding(fields)
        }
        line.path += " → " + UploadAdmission.resourcePrefix + token
        let end = try await transfer(
            request.body, into: lease, complete: creation.complete, length: creation.length, digests: digests,
            fields: fields, line: &line, bodyRead: &bodyRead)
        switch end {
        case .appended(let offset):
            fields[ResumableFields.offset] = String(offset)
            fields[ResumableFields.complete] = ResumableFields.boolean(false)
            fields[ResumableFields.limit] = limit(expiresAt: lease.record.expiresAt).fieldValue
            return Self.empty(.created, fields)
        case .completed(let answer):
            fields[ResumableFields.complete] = ResumableFields.boolean(true)
            return Self.stored(answer, fields)
        }
    }

    /// `PATCH`: appends at the upload's offset (which the request must name).
    func append(
        _ request: Request, token: String, _ append: UploadAdmission.Append, facts: RequestFacts, line: inout RequestLogLine, bodyRead: inout Bool
    ) async throws(Refusal) -> Response {
        var fields = echo(append.version)
        let digests = try DigestCheck(request.headers)
        guard let lease = await resumable.acquire(token, interrupt: interrupter(facts), now: resumable.clock.wall()) else {
            throw ResumableRules.noSuchUpload(fields)
        }
        if ResumableRules.replaysAnswer(append, complete: lease.record.complete, offset: lease.offset), let answer = lease.record.answer {
            lease.release(offset: lease.offset)
            fields[ResumableFields.complete] = ResumableFields.boolean(true)
            return Self.stored(answer, fields)
        }
        if let refusal = ResumableRules.appendRefusal(append, complete: lease.record.complete, offset: lease.offset, fields: fields) {
            lease.release(offset: lease.offset)
            throw refusal
        }
        let end = try await transfer(
            request.body, into: lease, complete: append.complete, length: append.length, digests: digests,
            fields: fields, line: &line, bodyRead: &bodyRead)
        switch end {
        case .appended(let offset):
            fields[ResumableFields.offset] = String(offset)
            fields[ResumableFields.complete] = ResumableFields.boolean(false)
            return Self.empty(.noContent, fields)
        case .completed(let answer):
            fields[ResumableFields.complete] = ResumableFields.boolean(true)
            return Self.stored(answer, fields)
        }
    }

    /// `HEAD` (and `GET` from version 9): the offset as it stands once any request still appending has been ended.
    func offset(_ token: String, version: Int?) async throws(Refusal) -> Response {
        var fields = echo(version)
        guard let lease = await resumable.acquire(token, interrupt: nil, now: resumable.clock.wall()) else { throw ResumableRules.noSuchUpload(fields) }
        let record = lease.record
        lease.release(offset: lease.offset)
        fields[ResumableFields.offset] = String(lease.offset)
        if ResumableFields.offsetAnswerSaysComplete(version) { fields[ResumableFields.complete] = ResumableFields.boolean(record.complete) }
        if let length = record.length { fields[ResumableFields.length] = String(length) }
        fields[ResumableFields.limit] = limit(expiresAt: record.expiresAt).fieldValue
        fields["Cache-Control"] = "no-store"
        return Self.empty(.noContent, fields)
    }

    /// `DELETE`: ends any request still appending, then removes the upload.
    func cancel(_ token: String, version: Int?) async throws(Refusal) -> Response {
        let fields = echo(version)
        guard let lease = await resumable.acquire(token, interrupt: nil, now: resumable.clock.wall()) else { throw ResumableRules.noSuchUpload(fields) }
        await onFileThreads { lease.remove() }
        return Self.empty(.noContent, fields)
    }

    /// `GET` on a completed upload before interop version 9: its final answer again, for a
    /// client that lost it.
    func answer(_ token: String, version: Int?) throws(Refusal) -> Response {
        var fields = echo(version)
        guard let snapshot = resumable.peek(token, now: resumable.clock.wall()) else { throw ResumableRules.noSuchUpload(fields) }
        guard let answer = snapshot.record.answer else {
            fields[ResumableFields.offset] = String(snapshot.offset)
            fields[ResumableFields.complete] = ResumableFields.boolean(false)
            throw Refusal(.conflict, "the upload is not complete: \(snapshot.offset) bytes so far").adding(fields)
        }
        fields[ResumableFields.complete] = ResumableFields.boolean(true)
        fields["Cache-Control"] = "no-store"
        return Self.stored(answer, fields)
    }

    /// `OPTIONS`: resumable uploads are supported here, within these limits.
    func options(version: Int?) -> Response {
        var fields = echo(version)
        if !ResumableFields.replaysByAppend(version) { fields["Accept-Patch"] = ResumableFields.partialUploadType }
        fields["Allow"] = "POST, OPTIONS"
        fields[ResumableFields.limit] = configuration.uploadLimit(maxAge: resumable.advertisedAge).fieldValue
        // RFC 9530 §4: this end checks a `Content-Digest` it is sent (and refuses a body that
        // does not match it), and answers `Repr-Digest` when asked: a client that knows this
        // before it sends works its digests out as the body goes, and one that does not
        // spends nothing on them for servers that would not look.
        fields[DigestFields.wantContent] = DigestFields.wantSHA256
        return Self.empty(.noContent, fields)
    }

    // MARK: moving the bytes

    enum TransferEnd {
        case appended(offset: Int64)
        case completed(StoredAnswer)
    }

    /// Appends the request's content to the upload. With `complete`, the multipart body is then
    /// whole: the bytes kept from earlier requests are read back through a fresh
    /// `FormDataReceiver`, this request's content follows as it arrives, and the endpoint's
    /// answer is kept with the upload. An interrupted request keeps every byte it wrote.
    ///
    /// Digests (RFC 9530): this request's content is checked against its `Content-Digest` and,
    /// when it does not match, cut off again (the upload stays where it was); the whole upload is
    /// checked against the `Repr-Digest` any request claimed once it is complete (read back from
    /// the stream when earlier requests brought part of it), and a mismatch fails the upload as
    /// a refused body does. `Want-Repr-Digest` puts the upload's digest in the final answer.
    private func transfer(
        _ body: RequestBody, into lease: ResumableStore.Lease, complete: Bool, length stated: Int64?, digests: DigestCheck,
        fields: [String: String], line: inout RequestLogLine, bodyRead: inout Bool
    ) async throws(Refusal) -> TransferEnd {
        let configuration = self.configuration
        let store = self.store
        let start = lease.offset
        var received: Int64 = 0
        /// The last point a later request may skip to (see `FormDataReceiver.checkpoint`).
        var checkpoint: Int64?
        defer { line.bytes = received }
        var length = lease.record.length
        if let stated {
            if let length, length != stated {
                lease.release(offset: start)
                throw UploadAdmission.inconsistentLength("the upload's length is \(length) bytes; this request says \(stated)").adding(fields)
            }
            length = stated
        }
        let limit = min(length ?? configuration.maxSize, configuration.maxSize)
        // A refusal for a limit says all of them (draft -12, PR #3466).
        let limits = [ResumableFields.limit: self.limit(expiresAt: lease.record.expiresAt).fieldValue]
        do {
            let end = try await withTaskExecutorPreference(FileWritingExecutor.shared) { () async throws -> TransferEnd in
                if let stated, lease.record.length == nil { try lease.setLength(stated) }
                try lease.keepDigests(digests)
                let wholeDigests = lease.record.digests
                let writer = try lease.appender()
                // Hashed on threads of their own while this one parses and writes.
                let contentDigester = DigestPipeline(digests.contentAlgorithms)
                let wholeDigester = DigestPipeline(complete ? wholeDigests.representationAlgorithms : [])
                if !wholeDigester.isEmpty, start > 0 {
                    try writer.read(0..<start) { wholeDigester.feed($0) }
                }
                // The stream is parsed until it is split where the file part's bytes begin, and
                // whole in the request that completes it (the bytes before replayed first).
                let receiver =
                    complete || writer.bodyStart == nil
                    ? FormDataReceiver(
                        boundary: lease.record.boundary, field: configuration.field, store: store,
                        imagesOnly: configuration.imagesOnly, keepsContent: false)
                    : nil
                do {
                    if let receiver, start > 0 {
                        try Self.replay(writer, upTo: start, into: receiver, skippingTo: lease.record.checkpoint)
                    }
                    for try await buffer in body {
                        guard start + received + Int64(buffer.readableBytes) <= limit else {
                            throw limit == length
                                ? TransferFailure.beyondLength(length!)
                                : TransferFailure.refused(Refusal(ReceiveError.tooLarge(configuration.maxSize)).adding(limits))
                        }
                        // Parsed first: where the file part begins decides which file the bytes go to.
                        try receiver?.consume(buffer)
                        contentDigester.feed(buffer)
                        wholeDigester.feed(buffer)
                        try buffer.withUnsafeReadableBytes { bytes in
                            try writer.write(bytes, contentStart: receiver?.content?.start)
                        }
                        received += Int64(buffer.readableBytes)
                        if let point = receiver?.checkpoint { checkpoint = point }
                    }
                    try writer.close()
                } catch {
                    try? writer.close()
                    receiver?.abort()
                    throw error
                }
                let offset = start + received
                if let refusal = digests.contentRefusal(contentDigester.finalize()) {
                    receiver?.abort()
                    throw TransferFailure.rejectedContent(refusal)
                }
                guard complete, let receiver else {
                    lease.release(offset: offset, checkpoint: checkpoint)
                    return .appended(offset: offset)
                }
                if let length, offset != length { throw TransferFailure.endedShort(offset, length) }
                let whole = wholeDigester.finalize()
                do {
                    if let refusal = wholeDigests.representationRefusal(whole) { throw refusal }
                    let content = try receiver.located()
                    let name: String
                    do {
                        name = try lease.store(content, from: writer, into: store)
                    } catch {
                        throw ReceiveError.storage(String(describing: error))
                    }
                    let digestFields = wholeDigests.answerFields(whole)
                    let answer = StoredAnswer(status: 200, body: Self.json(["filename": name]), fields: digestFields.isEmpty ? nil : digestFields)
                    lease.complete(answer: answer, length: offset)
                    return .completed(answer)
                } catch {
                    // A refused upload keeps nothing, as a refused one-shot upload does: its
                    // bytes, its record and its answer go now, not at its age.
                    let refusal = (error as? Refusal) ?? (error as? ReceiveError).map(Refusal.init) ?? Refusal(.internalServerError, "\(error)")
                    lease.remove()
                    return .completed(StoredAnswer(status: Int(refusal.status.code), body: Self.json(["error": refusal.message])))
                }
            }
            bodyRead = true
            return end
        } catch {
            let failed = FailedAppend(error, start: start, received: received)
            bodyRead = failed.bodyRead
            switch failed.fate {
            case .keep(let offset):
                lease.release(offset: offset, checkpoint: checkpoint)
            case .remove:
                await onFileThreads { lease.remove() }
            case .cutBack(let offset):
                await onFileThreads {
                    if (try? lease.cutBack(to: offset)) != nil {
                        lease.release(offset: offset)
                    } else {
                        lease.remove()
                    }
                }
            }
            throw failed.refusal.adding(fields)
        }
    }

    /// Feeds the first `count` bytes of the stream kept so far to `receiver`, stepping over
    /// the file's bytes up to `checkpoint` (where an earlier parser was inside the file part
    /// with nothing held back) instead of reading them again: up to the file's first bytes,
    /// then from the checkpoint on.
    private static func replay(_ stream: StreamAppender, upTo count: Int64, into receiver: FormDataReceiver, skippingTo checkpoint: Int64?) throws {
        var buffer = ByteBufferAllocator().buffer(capacity: 1 << 20)
        func feed(_ range: Range<Int64>) throws {
            guard !range.isEmpty else { return }
            try stream.read(range) { bytes in
                buffer.clear()
                buffer.writeBytes(bytes)
                try receiver.consume(buffer)
            }
        }
        do {
            var at: Int64 = 0
            if let checkpoint, let bodyStart = stream.bodyStart, checkpoint > bodyStart, checkpoint <= count {
                // The content's first bytes too, so its type is checked as in one piece.
                at = min(count, bodyStart + Int64(MediaSniffer.prefixLength))
                try feed(0..<at)
                if checkpoint > at, receiver.checkpoint != nil {
                    receiver.skipContent(to: checkpoint)
                    at = checkpoint
                }
            }
            try feed(at..<count)
        } catch let error as UploadStore.StoreError {
            throw ReceiveError.storage(String(describing: error))
        }
    }

    // MARK: pieces

    private func makeResource(boundary: String, length: Int64?, client: String, fields: [String: String]) throws(Refusal) -> ResumableRecord {
        do {
            return try resumable.create(boundary: boundary, length: length, client: client, now: resumable.clock.wall())
        } catch {
            switch error {
            case .full(let reason):
                throw Refusal(.serviceUnavailable, reason).adding(fields.merging(["Retry-After": "60"]) { a, _ in a })
            case .io(let reason):
                throw Refusal(.internalServerError, reason).adding(fields)
            }
        }
    }

    /// Ends the request on `request`'s connection (a newer request for its upload has come).
    private func interrupter(_ facts: RequestFacts) -> (@Sendable () -> Void)? {
        guard let id = facts.connection else { return nil }
        let connections = self.connections
        return { connections.interrupt(id, .superseded) }
    }

    private func location(_ token: String, _ request: Request) -> String {
        UploadAdmission.location(token, head: request.head, scheme: configuration.scheme)
    }

    /// Answers to a request that named an interop version carry it too.
    private func echo(_ version: Int?) -> [String: String] { ResumableRules.fields(echoing: version) }

    private func limit(expiresAt: Date) -> UploadLimit {
        configuration.uploadLimit(maxAge: resumable.remainingAge(expiresAt: expiresAt, now: resumable.clock.wall()))
    }

    private func onFileThreads(_ work: @escaping @Sendable () -> Void) async {
        await withTaskExecutorPreference(FileWritingExecutor.shared) { work() }
    }

    static func json(_ object: [String: String]) -> String {
        String(buffer: JSONAnswer.make(.ok, object).body)
    }

    static func empty(_ status: HTTPResponse.Status, _ fields: [String: String]) -> Response {
        var headers = HTTPFields()
        for (name, value) in fields { if let name = HTTPField.Name(name) { headers[name] = value } }
        if status != .noContent { headers[.contentLength] = "0" }
        return Response(status: status, headers: headers)
    }

    static func stored(_ answer: StoredAnswer, _ fields: [String: String]) -> Response {
        var headers = HTTPFields()
        for (name, value) in fields.merging(answer.fields ?? [:], uniquingKeysWith: { _, kept in kept }) {
            if let name = HTTPField.Name(name) { headers[name] = value }
        }
        headers[.contentType] = answer.status == 200 || answer.body.hasPrefix("{") ? "application/json; charset=utf-8" : "text/plain"
        let body = ByteBuffer(string: answer.body)
        headers[.contentLength] = String(body.readableBytes)
        return Response(status: .init(code: answer.status), headers: headers, body: .init(byteBuffer: body))
    }
}
