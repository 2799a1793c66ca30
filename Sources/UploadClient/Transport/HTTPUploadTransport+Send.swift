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
        await send(url: url, method: method, headers: headers, body: streamer.map { .streamed($0) } ?? .none,
                   progressBase: progressBase, progressTotal: progressTotal, continueWait: continueWait, eventLoop: eventLoop, observer: observer)
    }

    /// One request with a body in memory (a chunk of a stream), by whichever carrier takes it.
    func send(
        url: String, method: HTTPMethod, headers: HTTPHeaders, bytes: ByteBuffer, progressBase: Int64 = 0, progressTotal: Int64? = nil,
        eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        await send(url: url, method: method, headers: headers, body: .buffers([bytes]),
                   progressBase: progressBase, progressTotal: progressTotal, eventLoop: eventLoop, observer: observer)
    }

    private func send(
        url: String, method: HTTPMethod, headers: HTTPHeaders, body: ExchangeBody,
        progressBase: Int64, progressTotal: Int64?, continueWait: TimeAmount? = nil, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        guard let endpoint = endpoints(url) else {
            return AttemptResult(outcome: .failed(UploadFailure(.other, UploadInputError.badURL(RedactedURL.display(url)).description)),
                                 response: nil, bytesSent: 0)
        }
        let exchange = Exchange(method: method, endpoint: endpoint, headers: headers, body: body,
                                progressBase: progressBase, progressTotal: progressTotal, continueWait: continueWait)
        return await exchanger.exchange(exchange, eventLoop: eventLoop, observer: observer)
    }
}
