import NIOCore
import NIOHTTP1
import UploadCore

// Requests to URLs kept as text (an upload resource in a `ResumePoint`), handed to the
// exchanger: this client's own HTTP/1 connections where they can carry them, AsyncHTTPClient
// otherwise (`Carriers`).
extension HTTPUploadTransport {
    /// One request, its body streamed (or none), by whichever carrier takes it.
    func send(
        url: String, method: HTTPMethod, headers: HTTPHeaders, streamer: BodyStreamer? = nil,
        progressBase: Int64 = 0, progressTotal: Int64? = nil, continueWait: TimeAmount? = nil, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        await send(
            url: url, method: method, headers: headers, body: streamer.map { .streamed($0) } ?? .none,
            progressBase: progressBase, progressTotal: progressTotal, continueWait: continueWait, eventLoop: eventLoop, observer: observer)
    }

    /// One request with a body in memory (a chunk of a stream), by whichever carrier takes it.
    func send(
        url: String, method: HTTPMethod, headers: HTTPHeaders, bytes: ByteBuffer, progressBase: Int64 = 0, progressTotal: Int64? = nil,
        eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        await send(
            url: url, method: method, headers: headers, body: .buffers([bytes]),
            progressBase: progressBase, progressTotal: progressTotal, eventLoop: eventLoop, observer: observer)
    }

    private func send(
        url: String, method: HTTPMethod, headers: HTTPHeaders, body: ExchangeBody,
        progressBase: Int64, progressTotal: Int64?, continueWait: TimeAmount? = nil, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        guard let endpoint = endpoints(url) else {
            return AttemptResult(
                outcome: .failed(UploadFailure(.other, UploadInputError.badURL(RedactedURL.display(url)).description)),
                response: nil, bytesSent: 0)
        }
        let exchange = Exchange(
            method: method, endpoint: endpoint, headers: headers, body: body,
            progressBase: progressBase, progressTotal: progressTotal, continueWait: continueWait)
        return await exchanger.exchange(exchange, eventLoop: eventLoop, observer: observer)
    }

    /// One request carrying the upload's body: head, file and tail in one write where the file
    /// is held in memory and the path is direct (`inOneWrite`: no copy of the file into a buffer
    /// of its own), else streamed from the file (or the pipe, after `pipePrefix`) with its
    /// digests worked out on the way. Gives the result, the body's digest as sent (the one
    /// worked out up front in `inMemory`, or the streamed one), and the file's content digest.
    func sendBody(
        _ method: HTTPMethod, to endpoint: Endpoint, fields: HTTPHeaders, layout: MultipartLayout, _ prepared: Prepared,
        inOneWrite: Bool, inMemory: BodyDigest?, pipePrefix: ByteBuffer?, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> (result: AttemptResult, sent: [UInt8]?, content: String?) {
        let upFront = inMemory?.value
        if inOneWrite, exchanger.path(to: endpoint).direct, let preloaded = prepared.preloaded {
            let allocator = ByteBufferAllocator()
            let pieces = [allocator.buffer(bytes: layout.head), preloaded, allocator.buffer(bytes: layout.tail)].filter { $0.readableBytes > 0 }
            let result = await exchanger.exchange(
                Exchange(method: method, endpoint: endpoint, headers: fields, body: .buffers(pieces)),
                eventLoop: eventLoop, observer: observer)
            return (result, upFront, inMemory?.fileHex ?? inMemoryContent(prepared))
        }
        let streamer = makeStreamer(
            layout, prepared, pipePrefix: pipePrefix,
            digest: upFront == nil ? streamDigest(layout, prepared, url: endpoint.url) : nil, eventLoop: eventLoop)
        let result = await exchanger.exchange(
            Exchange(method: method, endpoint: endpoint, headers: fields, body: .streamed(streamer)),
            eventLoop: eventLoop, observer: observer)
        return (result, upFront ?? streamer.digest?.value, inMemory?.fileHex ?? streamer.digest?.fileHex)
    }
}
