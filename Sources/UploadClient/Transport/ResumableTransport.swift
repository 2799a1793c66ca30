import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import AsyncHTTPClient
import UploadCore

/// Which origins resume uploads (draft-ietf-httpbis-resumable-upload), asked once per origin
/// with `OPTIONS` and remembered; uploads to the same origin at the same time share one question.
/// An origin that could not be asked (no answer) is asked again next time.
final class ResumeSupport: Sendable {
    enum Answer: Sendable, Equatable {
        case supported(version: Int)
        case unsupported
        /// The question got no answer.
        case unknown
    }

    private let state = NIOLockedValueBox<[String: Task<Answer, Never>]>([:])
    /// Origins whose answer came from the store, not from asking in this process.
    private let rememberedOrigins = NIOLockedValueBox<Set<String>>([])
    /// Where answers outlive the process (nil: they do not).
    let store: ResumeSupportStore?

    init(store: ResumeSupportStore? = ResumeSupportStore.shared.withLockedValue { $0 }) {
        self.store = store
    }

    /// What `origin` answers, asked once per process, or as remembered from an earlier one
    /// (`remembered`: then the origin may have changed since, and a refusal means that).
    func answer(for origin: String, now: Double = Date().timeIntervalSince1970, ask: @escaping @Sendable () async -> Answer) async -> (Answer, remembered: Bool) {
        if rememberedOrigins.withLockedValue({ $0.contains(origin) }), let known = state.withLockedValue({ $0[origin] }) {
            return (await known.value, true)
        }
        if state.withLockedValue({ $0[origin] }) == nil, let remembered = store?.lookup(origin, now: now) {
            // Read from the file once per process, not once per upload.
            state.withLockedValue { $0[origin] = Task { remembered } }
            rememberedOrigins.withLockedValue { _ = $0.insert(origin) }
            return (remembered, true)
        }
        let store = self.store
        let task = state.withLockedValue { known in
            if let task = known[origin] { return task }
            let task = Task {
                let answer = await ask()
                store?.remember(origin, answer, now: now)
                return answer
            }
            known[origin] = task
            return task
        }
        let answer = await task.value
        if answer == .unknown { state.withLockedValue { $0[origin] = nil } }
        return (answer, false)
    }

    /// The origin was believed to resume uploads and refused to create one: it does not (now).
    func refused(_ origin: String, now: Double = Date().timeIntervalSince1970) {
        state.withLockedValue { $0[origin] = Task { .unsupported } }
        rememberedOrigins.withLockedValue { _ = $0.remove(origin) }
        store?.remember(origin, .unsupported, now: now)
    }

    /// What an `OPTIONS` answer says: the draft's `Accept-Patch` with `application/partial-upload`,
    /// an `Upload-Limit`, or the interop version asked for echoed on a success. An answer that
    /// names another interop version we speak (a server of an older draft refusing ours) gives
    /// that version to ask again with.
    static func read(_ response: UploadResponse, asked version: Int) -> (supported: Bool, tryVersion: Int?) {
        let echoed = ResumableFields.version(response.header(ResumableFields.interopVersion))
        guard (200..<300).contains(response.status) else {
            if let echoed, echoed != version, ResumableFields.supportedVersions.contains(echoed) { return (false, echoed) }
            return (false, nil)
        }
        let acceptsPartial = response.headers.contains { name, value in
            name.lowercased() == "accept-patch"
                && value.lowercased().split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(ResumableFields.partialUploadType) }
        }
        let limits = UploadLimit(parsing: response.header(ResumableFields.limit)) != nil
        return (acceptsPartial || limits || echoed == version, nil)
    }
}

extension HTTPUploadTransport {
    /// Files smaller than this go in one request: resuming them would save less than the
    /// request that makes them resumable costs.
    public static let resumeThreshold: Int64 = 1 << 20

    /// Sends the upload through an upload resource when the server resumes uploads: created
    /// empty first ("careful creation": AsyncHTTPClient does not show the `104` of an optimistic
    /// one), then the body appended with `PATCH`; an interrupted attempt leaves a `ResumePoint`,
    /// and the next one asks the offset with `HEAD` and sends only the rest, the same bytes
    /// made again from the same boundary. nil: send the ordinary way (no support, a pipe, a
    /// small file, `--no-resume`).
    func performResumable(
        _ request: UploadRequest, _ prepared: Prepared, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> AttemptResult? {
        guard resume, !prepared.source.isPipe, let opened = prepared.source.openedAs else { return nil }
        var point = request.resume
        var startedOver: String?
        if let known = point, known.file != opened || known.bodyLength != prepared.layout(Boundary(known.boundary), for: request).contentLength {
            // The bytes the server has are of another file: they cannot be continued.
            point = nil
            startedOver = "the file changed since the upload began"
            observer.resumable(nil, startedOver)
        }
        for _ in 0..<3 {
            if point == nil {
                guard opened.size >= Self.resumeThreshold else { return nil }
                switch await create(request, prepared, file: opened, eventLoop: eventLoop, observer: observer) {
                case .created(let created):
                    point = created
                    observer.resumable(created, nil)
                case .unsupported:
                    return nil
                case .ended(let result):
                    return result
                }
            } else if let known = point {
                switch await offset(of: known, request, eventLoop: eventLoop, observer: observer) {
                case .at(let offset):
                    point?.offset = offset
                case .gone(let why):
                    point = nil
                    startedOver = why
                    observer.resumable(nil, why)
                    continue
                case .ended(var result):
                    result.resume = known
                    return result
                case .completed(let result):
                    observer.resumable(nil, nil)
                    return result
                }
            }
            guard let current = point else { continue }
            switch await append(current, request, prepared, eventLoop: eventLoop, observer: observer) {
            case .ended(let result):
                return result
            case .gone(let why):
                point = nil
                startedOver = why
                observer.resumable(nil, why)
            }
        }
        return AttemptResult(outcome: .failed(UploadFailure(.other, "the server keeps losing the upload (\(startedOver ?? "gone")); giving up")),
                             response: nil, bytesSent: 0)
    }

    // MARK: the steps

    private enum Creation {
        case created(ResumePoint)
        case unsupported
        case ended(AttemptResult)
    }

    /// An empty `POST` with `Upload-Complete: ?0` to the endpoint, when the origin resumes uploads.
    private func create(
        _ request: UploadRequest, _ prepared: Prepared, file: FileFingerprint, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> Creation {
        guard let origin = Self.origin(of: request.url) else { return .unsupported }
        let (answer, remembered) = await support.answer(for: origin) { [self] in
            await askSupport(request, eventLoop: eventLoop)
        }
        guard case .supported(let version) = answer else { return .unsupported }
        let layout = prepared.layout(.random(), for: request)
        guard let length = layout.contentLength else { return .unsupported }
        var fields = baseHeaders(request.headers)
        fields.replaceOrAdd(name: "Content-Type", value: layout.contentTypeHeader)
        fields.add(name: ResumableFields.complete, value: ResumableFields.boolean(false))
        fields.add(name: ResumableFields.length, value: String(length))
        fields.add(name: ResumableFields.interopVersion, value: String(version))
        let result = await exchange(url: request.url, method: .POST, headers: fields, body: .bytes([]), length: 0,
                                    progressTotal: length, eventLoop: eventLoop, observer: .init())
        guard let response = result.response else { return .ended(Self.beforeTheBody(result)) }
        guard (200..<300).contains(response.status), let location = response.header("Location"),
              let url = URL(string: location, relativeTo: URL(string: request.url))?.absoluteURL,
              url.scheme == "http" || url.scheme == "https" else {
            // A server that said it resumes and then would not create: an answer that says why
            // the upload cannot go (413, 401, …) is the upload's; anything else, the ordinary way.
            // When that was remembered from another process, the origin may have changed since:
            // only a refusal that the plain upload would meet too (authentication, size) ends it.
            let final = remembered ? [401, 403, 407, 413].contains(response.status)
                : (400..<500).contains(response.status) && response.status != 404 && response.status != 405
            if final { return .ended(result) }
            // What was remembered of the origin is wrong now: the ordinary way, and forget it.
            support.refused(origin)
            return .unsupported
        }
        return .created(ResumePoint(uploadURL: url.absoluteString, version: version, boundary: layout.boundary.value,
                                    bodyLength: length, file: file, offset: ResumableFields.integer(response.header(ResumableFields.offset)) ?? 0))
    }

    /// Whether the endpoint's origin resumes uploads: `OPTIONS` with our interop version, and
    /// again with the one an older server names.
    private func askSupport(_ request: UploadRequest, eventLoop: EventLoop) async -> ResumeSupport.Answer {
        var version = ResumableFields.currentVersion
        for _ in 0..<2 {
            var fields = baseHeaders(request.headers)
            fields.add(name: ResumableFields.interopVersion, value: String(version))
            let result = await exchange(url: request.url, method: .OPTIONS, headers: fields, body: nil, length: nil,
                                        eventLoop: eventLoop, observer: .init())
            guard let response = result.response else {
                // No connection: ask again next time. A server that took the question and gave
                // no answer (it closed) does not resume uploads.
                if case .failed(let failure) = result.outcome, [.cannotConnect, .connectTimeout, .cancelled].contains(failure.kind) {
                    return .unknown
                }
                return .unsupported
            }
            let read = ResumeSupport.read(response, asked: version)
            if read.supported { return .supported(version: version) }
            guard let next = read.tryVersion else { return .unsupported }
            version = next
        }
        return .unsupported
    }

    private enum Offset {
        case at(Int64)
        case completed(AttemptResult)
        case gone(String)
        case ended(AttemptResult)
    }

    /// `HEAD` on the upload resource: where to continue, or that it completed (then its answer).
    private func offset(of point: ResumePoint, _ request: UploadRequest, eventLoop: EventLoop, observer: AttemptObserver) async -> Offset {
        let fields = resourceHeaders(point, request)
        let result = await exchange(url: point.uploadURL, method: .HEAD, headers: fields, body: nil, length: nil,
                                    eventLoop: eventLoop, observer: .init())
        guard let response = result.response else { return .ended(Self.beforeTheBody(result)) }
        switch response.status {
        case 200..<300:
            if ResumableFields.boolean(response.header(ResumableFields.complete)) == true {
                return await completedAnswer(point, request, eventLoop: eventLoop)
            }
            guard let offset = ResumableFields.integer(response.header(ResumableFields.offset)), offset <= point.bodyLength else {
                return .gone("the server gave no usable offset for the upload")
            }
            return .at(offset)
        case 404, 410:
            return .gone("the server no longer has the upload")
        case 500..<600:
            return .ended(result)
        default:
            return .gone("the server answered \(response.status) when asked where the upload stands")
        }
    }

    /// The upload completed (the last answer was lost): the endpoint's answer, asked again.
    private func completedAnswer(_ point: ResumePoint, _ request: UploadRequest, eventLoop: EventLoop) async -> Offset {
        let result = await exchange(url: point.uploadURL, method: .GET, headers: resourceHeaders(point, request), body: nil, length: nil,
                                    eventLoop: eventLoop, observer: .init())
        guard let response = result.response else { return .ended(Self.beforeTheBody(result)) }
        if (200..<300).contains(response.status) || ResumableFields.boolean(response.header(ResumableFields.complete)) == true {
            return .completed(AttemptResult(outcome: .answered(status: response.status), response: response, bytesSent: 0))
        }
        // The server keeps no answer: the upload did arrive whole, which is all that can be said.
        let note = UploadResponse(status: 200, reason: "OK", headers: [], body: Array("the server has the whole upload; its answer was lost".utf8),
                                  bodyBytesTotal: 0)
        return .completed(AttemptResult(outcome: .answered(status: 200), response: note, bytesSent: 0))
    }

    private enum Append {
        case ended(AttemptResult)
        case gone(String)
    }

    /// `PATCH` with the body from the point's offset to its end, `Upload-Complete: ?1`.
    private func append(
        _ point: ResumePoint, _ request: UploadRequest, _ prepared: Prepared, eventLoop: EventLoop, observer: AttemptObserver
    ) async -> Append {
        var point = point
        let layout = prepared.layout(Boundary(point.boundary), for: request)
        // The attempt is "sending" from here: the questions before it carry no byte of the file.
        observer.started(request.url, point.bodyLength)
        for _ in 0..<3 {
            if point.offset > 0 { observer.resumed(point.offset, point.bodyLength) }
            let streamer = makeStreamer(layout, prepared, pipePrefix: nil, startOffset: point.offset, eventLoop: eventLoop)
            var fields = resourceHeaders(point, request)
            fields.add(name: "Content-Type", value: ResumableFields.partialUploadType)
            fields.add(name: ResumableFields.offset, value: String(point.offset))
            fields.add(name: ResumableFields.complete, value: ResumableFields.boolean(true))
            var result = await exchange(
                url: point.uploadURL, method: .PATCH, headers: fields, body: streamer.makeBody(), length: streamer.length,
                watch: streamer.watch, progressBase: point.offset, progressTotal: point.bodyLength, eventLoop: eventLoop, observer: observer)
            guard let response = result.response else {
                // Cut, stalled, no answer: the next attempt asks where the server got to. Not
                // after a cancel (the user no longer wants it: the server may let it go) or a
                // file that changed while it was read.
                if case .failed(let failure) = result.outcome, failure.kind == .fileError || failure.kind == .cancelled {
                    // Nothing will continue it: what the server keeps goes now, not at its age.
                    observer.resumable(nil, nil)
                    _ = await cancelOnServer(point, request, eventLoop: eventLoop)
                } else {
                    result.resume = point
                }
                return .ended(result)
            }
            switch response.status {
            case 409:
                // Another offset than ours: continue from the server's, if it says it.
                guard let offset = ResumableFields.integer(response.header(ResumableFields.offset)), offset <= point.bodyLength,
                      offset != point.offset else { return .gone("the server and the client disagree on the offset") }
                point.offset = offset
                continue
            case 404, 410:
                return .gone("the server no longer has the upload")
            case 500..<600 where ResumableFields.boolean(response.header(ResumableFields.complete)) != true:
                result.resume = point
                return .ended(result)
            default:
                // The endpoint's own answer to the whole upload (success or not): final.
                observer.resumable(nil, nil)
                return .ended(result)
            }
        }
        return .gone("the server and the client disagree on the offset")
    }

    /// A request before the body failed: a cancel then is a cancel before anything was sent
    /// (the classifier would take an empty body sent for a whole upload awaiting its answer).
    private static func beforeTheBody(_ result: AttemptResult) -> AttemptResult {
        guard case .failed(let failure) = result.outcome, failure.kind == .cancelled else { return result }
        return AttemptResult(outcome: .failed(FailureClassifier.cancelled(bodySent: false)), response: nil, bytesSent: 0)
    }

    /// `DELETE` on the upload resource, from outside the cancelled task and for a second at most.
    /// What happened, in words.
    @discardableResult
    private func cancelOnServer(_ point: ResumePoint, _ request: UploadRequest, eventLoop: EventLoop) async -> String {
        let fields = resourceHeaders(point, request)
        let deleting = Task { () -> String in
            let result = await exchange(url: point.uploadURL, method: .DELETE, headers: fields, body: nil, length: nil,
                                        eventLoop: eventLoop, observer: .init())
            if let response = result.response {
                return (200..<300).contains(response.status) || response.status == 404 || response.status == 410
                    ? "removed from the server" : "the server answered \(response.status) to its removal"
            }
            return "not removed: " + result.outcome.words(reason: nil)
        }
        let deadline = Task {
            try? await Task.sleep(for: .seconds(1))
            deleting.cancel()
        }
        let said = await deleting.value
        deadline.cancel()
        return said
    }

    /// What the server keeps of an upload that failed for good goes (best effort, a second at most).
    public func discard(_ point: ResumePoint, of request: UploadRequest) async -> String {
        await cancelOnServer(point, request, eventLoop: client.eventLoopGroup.any())
    }

    /// Headers for requests to the upload resource: the user's (`-H`) only on the endpoint's host,
    /// as after a redirect, and the interop version.
    private func resourceHeaders(_ point: ResumePoint, _ request: UploadRequest) -> HTTPHeaders {
        let sameHost = URL(string: point.uploadURL)?.host == URL(string: request.url)?.host
        var fields = baseHeaders(sameHost ? request.headers : [])
        fields.add(name: ResumableFields.interopVersion, value: String(point.version))
        return fields
    }

    static func origin(of url: String) -> String? {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host?.lowercased() else { return nil }
        return "\(scheme)://\(host):\(parsed.port ?? (scheme == "https" ? 443 : 80))"
    }
}
