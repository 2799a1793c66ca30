import NIOCore
import UploadCore
import UploadProtocols

extension HTTPUploadTransport {
    /// One multipart `POST` and the redirects it is given, as `PlainUploadMachine` decides; the
    /// body is streamed from the file (or the pipe), or sent with its head in one write when it
    /// is held in memory (`inOneWrite`). nil: the first answer came from a tus server, which
    /// takes no multipart body (`plan` then says what next).
    func sendMultipart(
        _ request: UploadRequest, _ prepared: Prepared, inOneWrite: Bool, plan: inout AttemptPlan, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult? {
        let layout = prepared.layout(.random(), for: request)
        let inMemory = inMemoryDigests(layout, prepared, url: prepared.endpoint.url)
        let upFront = inMemory?.value
        var machine = PlainUploadMachine(endpoint: prepared.endpoint, headers: request.headers, canSendAgain: !prepared.source.isPipe)
        var next = machine.start()
        while true {
            let endpoint: Endpoint
            let headers: [RequestHeader]
            switch next {
            case .finish(let result):
                return result
            case .send(let to, let userHeaders):
                endpoint = to
                headers = userHeaders
            }
            if !machine.isFirstRequest { observer.redirected(endpoint.url) }
            observer.started(endpoint.url, layout.contentLength)
            var fields = uploadHeaders(headers, layout, idempotencyKey: request.idempotencyKey)
            Self.addDigestFields(&fields, content: upFront, want: digests)
            var result: AttemptResult
            var sent = upFront
            var content = inMemory?.fileHex
            if inOneWrite, exchanger.path(to: endpoint).direct, let preloaded = prepared.preloaded {
                // Head, file and tail in one write: no copy of the file into a buffer of its own.
                let allocator = ByteBufferAllocator()
                let pieces = [allocator.buffer(bytes: layout.head), preloaded, allocator.buffer(bytes: layout.tail)]
                result = await exchanger.exchange(Exchange(method: .POST, endpoint: endpoint, headers: fields, body: .buffers(pieces)),
                                                  eventLoop: eventLoop, observer: observer)
                content = content ?? inMemoryContent(prepared)
            } else {
                let streamer = makeStreamer(layout, prepared, pipePrefix: machine.isFirstRequest ? prepared.pipePrefix : nil,
                                            digest: upFront == nil ? streamDigest(layout, prepared, url: endpoint.url) : nil, eventLoop: eventLoop)
                result = await send(url: endpoint.url, method: .POST, headers: fields, streamer: streamer, eventLoop: eventLoop, observer: observer)
                sent = sent ?? streamer.digest?.value
                content = content ?? streamer.digest?.fileHex
            }
            if machine.isFirstRequest, plan.plainAnsweredAsTus(result) { return nil }
            if let content { observer.content(content) }
            next = machine.answered(await judged(result, sent: sent, url: endpoint.url, layout: layout, prepared))
        }
    }
}
