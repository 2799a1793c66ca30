import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import UploadCore

// Which path carries a request: this client's own HTTP/1 connections where they can, else
// AsyncHTTPClient (`exchange`).
extension HTTPUploadTransport {
    /// One request by whichever path carries it: this client's own HTTP/1 connections for plain
    /// `http` with a body of known length (or none), AsyncHTTPClient otherwise (TLS, a pipe's
    /// body of unknown length).
    func send(
        url: String, method: HTTPMethod, headers: HTTPHeaders, streamer: BodyStreamer? = nil,
        progressBase: Int64 = 0, progressTotal: Int64? = nil, continueWait: TimeAmount? = nil, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        if direct, let endpoint = endpoints(url), let target = connections.target(endpoint), streamer == nil || streamer?.length != nil {
            let body: DirectBody = streamer?.directBody ?? .buffers([])
            return await directExchange(target, method: method, headers: headers, body: body, length: streamer?.length,
                                        progressBase: progressBase, progressTotal: progressTotal, eventLoop: eventLoop, observer: observer,
                                        continueWait: continueWait)
        }
        return await exchange(url: url, method: method, headers: headers, body: streamer?.makeBody(), length: streamer?.length,
                              watch: streamer?.watch ?? WriteWatch(), progressBase: progressBase, progressTotal: progressTotal,
                              eventLoop: eventLoop, observer: observer)
    }

    /// One request with a body in memory (a chunk of a stream), by whichever path carries it.
    func send(
        url: String, method: HTTPMethod, headers: HTTPHeaders, bytes: ByteBuffer, progressBase: Int64 = 0, progressTotal: Int64? = nil,
        eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult {
        let length = Int64(bytes.readableBytes)
        if direct, let endpoint = endpoints(url), let target = connections.target(endpoint) {
            return await directExchange(target, method: method, headers: headers, body: .buffers([bytes]), length: length,
                                        progressBase: progressBase, progressTotal: progressTotal, eventLoop: eventLoop, observer: observer)
        }
        return await exchange(url: url, method: method, headers: headers, body: .byteBuffer(bytes), length: length,
                              progressBase: progressBase, progressTotal: progressTotal, eventLoop: eventLoop, observer: observer)
    }
}
