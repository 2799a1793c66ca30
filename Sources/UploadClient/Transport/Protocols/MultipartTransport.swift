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
        var machine = PlainUploadMachine(
            endpoint: prepared.endpoint, headers: request.headers, canSendAgain: !prepared.source.isPipe,
            followsOtherOrigins: followsRedirectsElsewhere)
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
            let (result, sent, content) = await sendBody(
                .POST, to: endpoint, fields: fields, layout: layout, prepared, inOneWrite: inOneWrite,
                inMemory: inMemory, pipePrefix: machine.isFirstRequest ? prepared.pipePrefix : nil,
                eventLoop: eventLoop, observer: observer)
            if machine.isFirstRequest, plan.plainAnsweredAsTus(result) { return nil }
            prepared.content(content, observer)
            next = machine.answered(await judged(result, sent: sent, url: endpoint.url, layout: layout, prepared))
        }
    }
}
