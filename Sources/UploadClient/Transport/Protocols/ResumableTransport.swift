import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import AsyncHTTPClient
import UploadCore
import UploadProtocols

extension HTTPUploadTransport {
    /// Files smaller than this go in one request: resuming them would save less than the
    /// request that makes them resumable costs.
    public static let resumeThreshold = AttemptPlan.resumeThreshold

    /// Sends the upload through an upload resource when the server resumes uploads, as
    /// `ResumableUploadMachine` decides: the body in the creation request where interim answers
    /// are seen (`optimistic`: the resource is learnt from its `104`), created empty first
    /// otherwise ("careful creation"), then the body appended with `PATCH`; an interrupted
    /// attempt leaves a `ResumePoint`, and the next one asks the offset with `HEAD` and sends
    /// only the rest, the same bytes made again from the same boundary. nil: send the ordinary
    /// way (no support, a small file). This function only sends.
    func performResumable(
        _ request: UploadRequest, _ prepared: Prepared, optimistic: Bool, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult? {
        guard let opened = prepared.source.openedAs else { return nil }
        // A tus upload URL is not the draft's: the body would be made again with no boundary.
        let point = request.resume?.kind == .draft ? request.resume : nil
        let knownLength = point.flatMap { prepared.layout(Boundary($0.boundary), for: request).contentLength }
        var machine = ResumableUploadMachine(
            endpoint: prepared.endpoint, file: opened, fileSize: opened.size, point: point,
            bodyLength: knownLength, threshold: Self.resumeThreshold,
            optimistic: optimistic)
        var decision = machine.start()
        // The whole upload's SHA-256, computed as the request that completes it streams (the
        // bytes an earlier request sent read once more for it): the final answer is judged by it.
        var sentDigest: [UInt8]?
        var content: String?
        var partDigest: BodyDigest?
        // The layout of the body the last request completed (or would have): what an answer
        // with a digest is checked against when the body was not hashed as it went.
        var lastLayout = point.map { prepared.layout(Boundary($0.boundary), for: request) }
        while true {
            relay(decision.reports, url: request.url, observer: observer)
            switch decision.next {
            case .sendPlainly:
                return nil
            case .finish(let result):
                prepared.content(content, observer)
                return await judged(result, sent: sentDigest, url: request.url, layout: lastLayout, prepared)
            case .request(.ask):
                guard let origin = origin(of: request.url) else {
                    decision = machine.answered(support: .unsupported, remembered: false)
                    continue
                }
                let (answer, remembered) = await support.answer(for: origin) { [self] in
                    await askSupport(request, eventLoop: eventLoop)
                }
                // A tus origin got here only when asked for multipart (`--protocol multipart`).
                let said: ResumableUploadMachine.Support =
                    switch answer {
                    case .supported(let version): .supported(version: version)
                    case .silent: .unanswered
                    default: .unsupported
                    }
                decision = machine.answered(support: said, remembered: remembered, limit: support.limit(for: origin))
            case .request(.create(let version)):
                let layout = prepared.layout(.random(), for: request)
                guard let length = layout.contentLength else {
                    decision = machine.cannotCreate()
                    continue
                }
                var fields = baseHeaders(request.headers)
                Self.addDigestFields(&fields, content: nil, want: digests)
                fields.replaceOrAdd(name: "Content-Type", value: layout.contentTypeHeader)
                fields.add(name: ResumableFields.complete, value: ResumableFields.boolean(false))
                fields.add(name: ResumableFields.length, value: String(length))
                fields.add(name: ResumableFields.interopVersion, value: String(version))
                let result = await exchanger.exchange(
                    Exchange(method: .POST, endpoint: prepared.endpoint, headers: fields, body: .buffers([])), eventLoop: eventLoop, observer: .init())
                lastLayout = layout
                decision = machine.created(result, boundary: layout.boundary.value, bodyLength: length)
            case .request(.createOptimistically(let version)):
                let layout = prepared.layout(.random(), for: request)
                guard let length = layout.contentLength, optimistic else {
                    decision = machine.cannotCreate()
                    continue
                }
                var fields = uploadHeaders(request.headers, layout, idempotencyKey: request.idempotencyKey)
                Self.addDigestFields(&fields, content: nil, want: digests)
                fields.add(name: ResumableFields.complete, value: ResumableFields.boolean(true))
                fields.add(name: ResumableFields.length, value: String(length))
                fields.add(name: ResumableFields.interopVersion, value: String(version))
                observer.started(request.url, length)
                lastLayout = layout
                let streamer = makeStreamer(
                    layout, prepared, pipePrefix: nil, digest: streamDigest(layout, prepared, url: request.url),
                    eventLoop: eventLoop)
                let announced = NIOLockedValueBox<ResumePoint?>(nil)
                let endpoint = prepared.endpoint
                let result = await exchanger.exchange(
                    Exchange(
                        method: .POST, endpoint: endpoint, headers: fields, body: .streamed(streamer),
                        interim: { answer in
                            guard announced.withLockedValue({ $0 }) == nil,
                                let point = ResumableUploadMachine.announcement(
                                    answer, endpoint: endpoint, version: version, boundary: layout.boundary.value,
                                    bodyLength: length, file: opened)
                            else { return }
                            announced.withLockedValue { $0 = point }
                            observer.resumable(point, nil)
                        }), eventLoop: eventLoop, observer: observer)
                sentDigest = streamer.digest?.value
                content = streamer.digest?.fileHex
                decision = machine.createdOptimistically(result, announced: announced.withLockedValue { $0 })
            case .request(.head(let point)):
                decision = machine.headed(
                    await send(
                        url: point.uploadURL, method: .HEAD, headers: resourceHeaders(point, request),
                        eventLoop: eventLoop, observer: .init()))
            case .request(.fetchAnswer(let point)):
                lastLayout = prepared.layout(Boundary(point.boundary), for: request)
                var fields = resourceHeaders(point, request)
                let method: HTTPMethod
                if ResumableFields.replaysByAppend(point.version) {
                    // Version 9: the valid append to the completed upload, at its end, no content.
                    method = .PATCH
                    fields.add(name: "Content-Type", value: ResumableFields.partialUploadType)
                    fields.add(name: ResumableFields.offset, value: String(point.bodyLength))
                    fields.add(name: ResumableFields.complete, value: ResumableFields.boolean(true))
                } else {
                    method = .GET
                }
                decision = machine.fetched(
                    await send(
                        url: point.uploadURL, method: method, headers: fields,
                        streamer: nil, eventLoop: eventLoop, observer: .init()))
            case .request(.append(let point)), .request(.appendPart(let point, _)):
                var end: Int64?
                if case .request(.appendPart(_, let partEnd)) = decision.next { end = partEnd }
                let layout = prepared.layout(Boundary(point.boundary), for: request)
                // One digest across the parts of the body sent in this attempt; begun again
                // (the bytes before read once more) when a request starts elsewhere.
                lastLayout = layout
                partDigest = BodyDigest.continuing(partDigest, at: point.offset) { streamDigest(layout, prepared, url: request.url) }
                var streamer = makeStreamer(
                    layout, prepared, pipePrefix: nil, startOffset: point.offset, digest: partDigest,
                    eventLoop: eventLoop)
                streamer.endOffset = end
                var fields = resourceHeaders(point, request)
                fields.add(name: "Content-Type", value: ResumableFields.partialUploadType)
                fields.add(name: ResumableFields.offset, value: String(point.offset))
                fields.add(name: ResumableFields.complete, value: ResumableFields.boolean(end == nil))
                let appended = await send(
                    url: point.uploadURL, method: .PATCH, headers: fields, streamer: streamer,
                    progressBase: point.offset, progressTotal: point.bodyLength, eventLoop: eventLoop, observer: observer)
                if end == nil {
                    sentDigest = streamer.digest?.value
                    content = streamer.digest?.fileHex
                }
                decision = machine.appended(appended)
            case .request(.delete(let point)):
                _ = await cancelOnServer(point, request, eventLoop: eventLoop)
                decision = machine.deleted()
            }
        }
    }

    /// Whether the endpoint's origin resumes uploads: `OPTIONS` with our interop version, and
    /// again with the one an older server names; within `timeouts.discovery` in all (a silence
    /// is `.silent`: the upload goes as an optimistic creation where that can be seen).
    func askSupport(_ request: UploadRequest, eventLoop: EventLoop) async -> OriginSupport {
        let origin = origin(of: request.url)
        let deadline = HouseClock.sleepDeadline(after: .nanoseconds(min(timeouts.discovery, timeouts.answer).nanoseconds))
        var machine = DiscoveryMachine()
        var next = machine.start()
        while true {
            guard case .ask(let version) = next else {
                if case .done(let answer) = next { return answer }
                return .unsupported
            }
            var fields = baseHeaders(request.headers)
            fields.add(name: ResumableFields.interopVersion, value: String(version))
            // tus exempts OPTIONS from `Tus-Resumable`, but some tus servers (aiohttp-tus)
            // answer an OPTIONS without it as if they spoke no tus at all; the draft's ignore it.
            fields.add(name: TusFields.resumable, value: TusFields.protocolVersion)
            let (result, late) = await Self.within(deadline) { [self, fields] in
                await send(url: request.url, method: .OPTIONS, headers: fields, eventLoop: eventLoop, observer: .init())
            }
            let decision = machine.answered(result, late: late)
            for report in decision.reports {
                guard let origin else { break }
                switch report {
                case .verifies: support.noteVerifies(origin)
                case .limit(let limit): support.noteLimit(limit, for: origin)
                }
            }
            next = decision.next
        }
    }

    /// Runs `work` until `deadline`, cancelling it then; whether the deadline cut it. A cancel
    /// of the caller's task reaches `work` too (and is not the deadline's).
    static func within<T: Sendable>(
        _ deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () async -> T
    ) async -> (T, late: Bool) {
        let late = NIOLockedValueBox(false)
        let running = Task { await work() }
        let clock = Task {
            guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
            late.withLockedValue { $0 = true }
            running.cancel()
        }
        let value = await withTaskCancellationHandler {
            await running.value
        } onCancel: {
            running.cancel()
        }
        clock.cancel()
        return (value, late.withLockedValue { $0 })
    }

    /// `DELETE` on the upload resource, from outside the cancelled task and for at most the discovery timeout (3 s).
    /// What happened, in words.
    @discardableResult
    func cancelOnServer(_ point: ResumePoint, _ request: UploadRequest, eventLoop: EventLoop) async -> String {
        let fields = resourceHeaders(point, request)
        let deleting = Task { () -> String in
            if point.kind == .s3 { return await abortS3(point, eventLoop: eventLoop) }
            return ResumableUploadMachine.removal(await send(url: point.uploadURL, method: .DELETE, headers: fields, eventLoop: eventLoop, observer: .init()))
        }
        let deadline = Task {
            // As long as the question whether the origin resumes may take: a few round trips
            // (a second was too short for a busy server finishing the cut request first).
            try? await Task.sleep(for: .nanoseconds(min(timeouts.discovery, timeouts.answer).nanoseconds))
            deleting.cancel()
        }
        let said = await deleting.value
        deadline.cancel()
        return said
    }

    /// What the server keeps of an upload that failed for good goes (best effort, at most the discovery timeout).
    public func discard(_ point: ResumePoint, of request: UploadRequest) async -> String {
        await cancelOnServer(point, request, eventLoop: eventLoopGroup.any())
    }

    /// Headers for requests to the upload resource: the user's (`-H`) only on the endpoint's origin,
    /// as after a redirect, and the protocol's version (the draft's interop version, or tus's).
    func resourceHeaders(_ point: ResumePoint, _ request: UploadRequest) -> HTTPHeaders {
        var fields = resourceHeaders(point.uploadURL, request)
        switch point.kind {
        case .draft: fields.add(name: ResumableFields.interopVersion, value: String(point.version))
        case .tus: fields.add(name: TusFields.resumable, value: TusFields.protocolVersion)
        case .s3: break  // signed by its own shell (`S3Transport.swift`)
        }
        return fields
    }

    /// The user's headers for a request to `uploadURL`: only on the endpoint's origin.
    func resourceHeaders(_ uploadURL: String, _ request: UploadRequest) -> HTTPHeaders {
        guard let own = endpoints(request.url), let resource = endpoints(uploadURL) else { return baseHeaders([]) }
        return baseHeaders(own.headers(request.headers, to: resource))
    }

    /// What the machines report, told to the attempt's observer.
    func relay(_ reports: [ResumableUploadMachine.Report], url: String, observer: AttemptObserver) {
        for report in reports {
            switch report {
            case .resumable(let point, let startedOver): observer.resumable(point, startedOver)
            case .sending(let length): observer.started(url, length)
            case .resumed(let offset, let length): observer.resumed(offset, length)
            case .originRefused: origin(of: url).map { support.refused($0) }
            case .discardsCutRequests, .requestLimit: break  // the tus shell remembers them with what else the origin offers
            }
        }
    }

    /// Whether a request to `url` goes where this client parses the answers itself and sees
    /// interim ones (`100`, `104`): plain HTTP the direct way, not through an HTTP proxy (a
    /// SOCKS5 tunnel carries them; tinyproxy, for one, takes a `104` for the answer).
    func seesInterimAnswers(_ url: String) -> Bool {
        guard let endpoint = endpoints(url) else { return false }
        let path = exchanger.path(to: endpoint)
        return path.direct && !path.throughHTTPProxy
    }

    /// The origin of `url` as the stores of what origins speak name it.
    func origin(of url: String) -> String? {
        endpoints(url)?.origin.description
    }
}
