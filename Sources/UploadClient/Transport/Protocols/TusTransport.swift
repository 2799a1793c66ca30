import Foundation
import NIOCore
import NIOHTTP1
import UploadCore
import UploadProtocols

extension HTTPUploadTransport {
    /// One attempt by tus, as `TusUploadMachine` decides.
    func sendTus(
        _ request: UploadRequest, _ prepared: Prepared, capabilities: TusCapabilities, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        var capabilities = capabilities
        let metadata: String
        do throws(TusFields.MetadataProblem) {
            metadata = try TusFields.metadata(
                request.formFields.map { ($0.name, $0.value) }
                    + [("filename", prepared.uploadName), ("filetype", prepared.media.mime)])
        } catch {
            return AttemptResult(outcome: .failed(UploadFailure(.other, error.description)), response: nil, bytesSent: 0)
        }
        guard !prepared.source.isPipe, let opened = prepared.source.openedAs, let length = prepared.source.size else {
            return await sendTusStream(request, prepared, metadata: metadata, capabilities: capabilities, eventLoop: eventLoop, observer: observer)
        }
        let layout = MultipartLayout.bare(contentType: prepared.media, fileSize: length)
        var machine = TusUploadMachine(
            endpoint: prepared.endpoint, file: opened, length: length, point: resume ? request.resume : nil,
            capabilities: capabilities, chunkSize: tusChunkSize, smallFile: Self.resumeThreshold,
            handedOut: request.uploadURL)
        // What earlier attempts to the origin showed of the link; what this one shows (the
        // machine's own view included: where a cut fell) is kept for later ones when it ends.
        let origin = origin(of: request.url)
        if let origin, let known = links.withLockedValue({ $0[origin] }) { machine.link = known }
        var decision = machine.start()
        // The file's SHA-256 ("already sent" by content), worked out as the chunks stream: one
        // digest across the chunks of the attempt, begun again when a chunk starts elsewhere
        // than where the last one ended (the server's offset, a chunk sent again).
        var digest: BodyDigest?
        var bytesSent: Int64 = 0
        // The first PATCH after a HEAD (a resumed upload) asks `100 Continue` first where the
        // answers are ours to read, and waits for it as curl does (a second, then the body goes):
        // a server may still be finishing the request that was cut (tuspyserver holds it up to
        // 30 s) and refuse this one at once, before its bytes go; one that ignores `Expect`
        // costs a second, not the answer timeout.
        var afterHead = false
        while true {
            relay(decision.reports, url: request.url, observer: observer)
            if let origin, !decision.reports.isEmpty {
                // What the origin showed of itself is remembered with what else it offers: its
                // next uploads go in chunks (of at most what one request may carry) at once.
                var learnt = capabilities
                for report in decision.reports {
                    switch report {
                    case .discardsCutRequests:
                        learnt.discardsCutRequests = true
                        learnt.cutAfter = machine.link.cutAfter
                    case .requestLimit(let bytes):
                        learnt.maxRequest = min(learnt.maxRequest ?? bytes, bytes)
                    default:
                        break
                    }
                }
                if learnt != capabilities {
                    support.learned(origin, .tus(learnt))
                    capabilities = learnt
                }
            }
            switch decision.next {
            case .finish(var result):
                if let origin { links.withLockedValue { $0[origin] = machine.link } }
                if result.outcome.isSuccess { prepared.content(digest?.fileHex, observer) }
                result.bytesSent = bytesSent
                return result
            case .request(.create(let total, let withBody)):
                var fields = baseHeaders(request.headers)
                fields.add(name: TusFields.resumable, value: TusFields.protocolVersion)
                fields.add(name: TusFields.length, value: String(total))
                if !metadata.isEmpty { fields.add(name: TusFields.metadata, value: metadata) }
                let result: AttemptResult
                if withBody {
                    fields.add(name: "Content-Type", value: TusFields.chunkType)
                    digest = fileDigest(length)
                    let streamer = makeStreamer(layout, prepared, pipePrefix: nil, digest: digest, eventLoop: eventLoop)
                    result = await send(
                        url: request.url, method: .POST, headers: fields, streamer: streamer,
                        progressTotal: total, eventLoop: eventLoop, observer: observer)
                } else {
                    result = await send(url: request.url, method: .POST, headers: fields, eventLoop: eventLoop, observer: .init())
                }
                bytesSent += result.bytesSent
                decision = machine.created(result)
            case .request(.head(let point)):
                afterHead = true
                let asked = clock.monotonic()
                let result = await send(
                    url: point.uploadURL, method: .HEAD, headers: resourceHeaders(point, request),
                    eventLoop: eventLoop, observer: .init())
                if result.response != nil { machine.link.answered(after: clock.monotonic() - asked) }
                decision = machine.headed(result)
            case .request(.patch(let point, let end)):
                digest = BodyDigest.continuing(digest, at: point.offset) { fileDigest(length) }
                var streamer = makeStreamer(layout, prepared, pipePrefix: nil, startOffset: point.offset, digest: digest, eventLoop: eventLoop)
                streamer.endOffset = end
                var fields = resourceHeaders(point, request)
                fields.add(name: "Content-Type", value: TusFields.chunkType)
                fields.add(name: TusFields.offset, value: String(point.offset))
                if afterHead, seesInterimAnswers(point.uploadURL) { fields.add(name: "Expect", value: "100-continue") }
                if let algorithm = TusChecksum.algorithm(for: capabilities) {
                    // The checksum extension: the chunk's own, read once before it goes.
                    do {
                        let source = prepared.source
                        let from = point.offset
                        let value = try await threadPool.runIfActive(eventLoop: eventLoop) {
                            try Self.checksum(algorithm, of: source, from..<end)
                        }.get()
                        fields.add(name: TusFields.checksum, value: value)
                    } catch {
                        decision = machine.patched(
                            AttemptResult(
                                outcome: .failed((error as? UploadFailure) ?? UploadFailure(.fileError, "cannot read the file to check it: \(error)")),
                                response: nil, bytesSent: 0))
                        continue
                    }
                }
                afterHead = false
                let began = clock.monotonic()
                let result = await send(
                    url: point.uploadURL, method: .PATCH, headers: fields, streamer: streamer,
                    progressBase: point.offset, progressTotal: length, eventLoop: eventLoop, observer: observer)
                machine.link.sent(result.bytesSent, in: clock.monotonic() - began)
                bytesSent += result.bytesSent
                decision = machine.patched(result)
            case .request(.delete(let point)):
                _ = await cancelOnServer(point, request, eventLoop: eventLoop)
                decision = machine.deleted()
            }
        }
    }

    /// One attempt of a stream (standard input) by tus, as `TusStreamMachine` decides: created
    /// with its length deferred, read a chunk at a time (each byte once: hashed as it is read),
    /// each chunk kept until the server has it, the last `PATCH` saying the length.
    func sendTusStream(
        _ request: UploadRequest, _ prepared: Prepared, metadata: String, capabilities: TusCapabilities, eventLoop: EventLoop,
        observer: AttemptObserver
    ) async -> AttemptResult {
        var machine = TusStreamMachine(endpoint: prepared.endpoint, capabilities: capabilities, chunkSize: tusChunkSize)
        var next = machine.start()
        // What was read of the pipe to tell its type is the stream's beginning.
        var stream = StreamWindow(readAlready: prepared.pipePrefix.map { Array($0.readableBytesView) } ?? [])
        var sent: Int64 = 0
        let source = prepared.source
        func resourceFields(_ uploadURL: String) -> HTTPHeaders {
            var fields = resourceHeaders(uploadURL, request)
            fields.add(name: TusFields.resumable, value: TusFields.protocolVersion)
            return fields
        }
        while true {
            switch next {
            case .finish(var result):
                if result.outcome.isSuccess, digests || prepared.convertedContent != nil { prepared.content(digests ? stream.sha256Hex : nil, observer) }
                result.bytesSent = sent
                return result
            case .request(.create):
                var fields = baseHeaders(request.headers)
                fields.add(name: TusFields.resumable, value: TusFields.protocolVersion)
                fields.add(name: TusFields.deferLength, value: "1")
                if !metadata.isEmpty { fields.add(name: TusFields.metadata, value: metadata) }
                let created = await send(url: request.url, method: .POST, headers: fields, eventLoop: eventLoop, observer: .init())
                next = machine.created(created)
                // The stream's bytes start going out; how many there are, its end says.
                if case .request = next { observer.started(request.url, nil) }
            case .request(.read(let from, let upTo)):
                stream.drop(before: from)
                do {
                    let want = upTo - stream.count
                    let piece = try await threadPool.runIfActive(eventLoop: eventLoop) { [stream] in try stream.readMore(from: source, want: want) }.get()
                    stream.append(piece)
                } catch {
                    next = .finish(
                        AttemptResult(
                            outcome: .failed((error as? UploadFailure) ?? UploadFailure(.fileError, "cannot read standard input: \(error)")),
                            response: nil, bytesSent: sent))
                    continue
                }
                next = machine.buffered(count: stream.count, ended: stream.ended)
            case .request(.head(let uploadURL)):
                next = machine.headed(await send(url: uploadURL, method: .HEAD, headers: resourceFields(uploadURL), eventLoop: eventLoop, observer: .init()))
            case .request(.patch(let uploadURL, let from, let to, let length)):
                var fields = resourceFields(uploadURL)
                fields.add(name: "Content-Type", value: TusFields.chunkType)
                fields.add(name: TusFields.offset, value: String(from))
                if let length { fields.add(name: TusFields.length, value: String(length)) }
                let result = await send(
                    url: uploadURL, method: .PATCH, headers: fields, bytes: stream.bytes(from, to),
                    progressBase: from, progressTotal: length, eventLoop: eventLoop, observer: observer)
                sent += result.bytesSent
                next = machine.patched(result)
            }
        }
    }

    /// `Upload-Checksum` of `range` of what is sent.
    static func checksum(_ algorithm: String, of source: FileSource, _ range: Range<Int64>) throws -> String {
        guard var hasher = TusChecksum(algorithm) else { throw UploadFailure(.other, "no checksum algorithm \(algorithm)") }
        try source.forEachPiece(range) { piece in piece.withUnsafeReadableBytes { hasher.update($0) } }
        return hasher.fieldValue()
    }

    /// The file's digest alone (a tus body is the file; no tus server answers with a digest).
    private func fileDigest(_ length: Int64) -> BodyDigest? {
        digests && contentIdentity ? BodyDigest(length: length, fileLength: length, bodyToo: false) : nil
    }
}

/// The bytes of a stream the server does not have yet, from `start`, and whether the stream
/// ended; every byte is hashed once, as it enters the window (the content's SHA-256).
struct StreamWindow: Sendable {
    private(set) var start: Int64 = 0
    private var buffer: [UInt8] = []
    /// Bytes read from the stream but not in the window yet: what was read to tell its type, or
    /// what was read past a full chunk (a byte, to learn whether the stream ends there).
    private var ahead: [UInt8]
    private(set) var ended = false
    private var digest = Digester([.sha256])

    init(readAlready: [UInt8]) {
        ahead = readAlready
    }

    var count: Int { buffer.count }

    mutating func drop(before offset: Int64) {
        let n = Int(min(max(0, offset - start), Int64(buffer.count)))
        buffer.removeFirst(n)
        start += Int64(n)
    }

    /// The next `want` bytes of the stream (fewer only at its end), what was read beyond them,
    /// and whether the stream ends there: from what is ahead first, then from `source` (a pipe:
    /// each read may return fewer), then one byte more when nothing is ahead. Blocking: off the
    /// event loops.
    func readMore(from source: FileSource, want: Int) throws -> (bytes: [UInt8], ahead: [UInt8], ended: Bool) {
        var bytes = ahead
        let allocator = ByteBufferAllocator()
        while bytes.count < want {
            let piece = try source.read(offset: 0, count: min(want - bytes.count, 1 << 20), allocator: allocator)
            if piece.readableBytes == 0 { return (bytes, [], true) }
            bytes += piece.readableBytesView
        }
        if bytes.count > want { return (Array(bytes[..<want]), Array(bytes[want...]), false) }
        let peek = try source.read(offset: 0, count: 1, allocator: allocator)
        return (bytes, Array(peek.readableBytesView), peek.readableBytes == 0)
    }

    mutating func append(_ piece: (bytes: [UInt8], ahead: [UInt8], ended: Bool)) {
        digest.update(piece.bytes)
        buffer += piece.bytes
        ahead = piece.ahead
        ended = piece.ended
    }

    /// The stream's bytes `from..<to`, which must be in the window.
    func bytes(_ from: Int64, _ to: Int64) -> ByteBuffer {
        ByteBuffer(bytes: buffer[Int(from - start)..<Int(to - start)])
    }

    var sha256Hex: String { Digester.hex(digest.finalize()[.sha256] ?? []) }
}
