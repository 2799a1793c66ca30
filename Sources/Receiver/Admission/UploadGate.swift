import Foundation
import Hummingbird
import NIOCore
import NIOHTTPTypes
import UploadCore

/// Why the receiver ended a connection under a request whose body it was still reading. The
/// request's body stream fails with it, so the endpoint can say what happened.
enum ConnectionInterruption: Error, Equatable, CustomStringConvertible {
    case bodyStalled(TimeAmount)
    case stopping
    /// A newer request for the same resumable upload arrived (the client gave up on this one).
    case superseded

    var description: String {
        switch self {
        case .bodyStalled(let limit):
            "no body data from the client for \(Self.seconds(limit)); the upload was abandoned"
        case .stopping:
            "the receiver is stopping; the upload was abandoned"
        case .superseded:
            "a newer request for the same upload took over"
        }
    }

    var refusal: Refusal {
        switch self {
        case .bodyStalled: Refusal(.requestTimeout, description)
        case .stopping: Refusal(.serviceUnavailable, description)
        case .superseded: Refusal(.conflict, description)
        }
    }

    static func seconds(_ amount: TimeAmount) -> String {
        let value = Double(amount.nanoseconds) / 1e9
        return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// Sits between the HTTP codec and Hummingbird on every connection and does what the
/// responder cannot, because it only runs once a head has been read and Hummingbird drains
/// whatever body it leaves:
/// - decides from the head alone (`UploadAdmission`): `100 Continue` at once for an acceptable
///   request that expects it; for a refused one the final answer at once, without reading the
///   body, then the connection ends (the client may not send the body at all);
/// - ends the connection after an answer that says `Connection: close`, instead of draining;
/// - keeps the connection's clocks (`ConnectionClock`): header, idle and body-stall timeouts;
/// - counts itself in the `ConnectionRegistry`: over its limit a connection is answered 503 at
///   once; when the receiver stops, connections still open after the grace period are cut.
///
/// A `ByteTap` at the front of the pipeline tells it when raw bytes arrive and when the
/// connection asks for more: a trickle of bytes counts as activity only there.
final class UploadGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let configuration: ReceiverConfiguration
    private let registry: ConnectionRegistry
    private let resumable: ResumableStore
    private let idempotency: IdempotencyKeys
    private let log: @Sendable (RequestLogLine) -> Void
    private var clock: ConnectionClock
    private var context: ChannelHandlerContext?
    private var started = false
    private var registered = false
    private var timer: Scheduled<Void>?
    private var timerDeadline: NIODeadline?
    /// Inbound parts of a refused request are dropped, not handed to the responder.
    private var discarding = false
    private var closeAfterAnswer = false
    /// The peer as the resumable quota names it.
    private var client = "unknown"

    init(
        configuration: ReceiverConfiguration, registry: ConnectionRegistry, resumable: ResumableStore, idempotency: IdempotencyKeys,
        log: @escaping @Sendable (RequestLogLine) -> Void
    ) {
        self.configuration = configuration
        self.registry = registry
        self.resumable = resumable
        self.idempotency = idempotency
        self.log = log
        // Set again from the event loop's clock when the connection starts.
        self.clock = ConnectionClock(limits: configuration.limits.clock, openedAt: .uptimeNanoseconds(0))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        try? context.pipeline.syncOperations.addHandler(ByteTap(gate: self), position: .first)
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if registered { registry.unregister(id) }
        registered = false
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if registered { registry.unregister(id) }
        registered = false
        context.fireChannelInactive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        client = ResumableQuota.client(of: context.channel.remoteAddress)
        clock = ConnectionClock(limits: configuration.limits.clock, openedAt: context.eventLoop.now)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let admitted = registry.register(id) { why in
            bound.eventLoop.execute { bound.value.abort(why) }
        }
        switch admitted {
        case .admitted:
            registered = true
        case .overLimit(let limit):
            refuse(Refusal(.serviceUnavailable, "the receiver is at its limit of \(limit) open connections; try again shortly"), line: nil, context: context)
        case .stopping:
            refuse(Refusal(.serviceUnavailable, "the receiver is stopping"), line: nil, context: context)
        }
        rearm(context)
    }

    // MARK: inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = context.eventLoop.now
        switch unwrapInboundIn(data) {
        case .head(var head):
            let answering = clock.unanswered > 0
            clock.headReceived(at: now)
            if discarding { break }
            // What the endpoint learns from the gate only the gate may say: a client's own is dropped.
            head.headerFields[ResumableHeaders.internalToken] = nil
            head.headerFields[ResumableHeaders.internalConnection] = String(id)
            head.headerFields[ResumableHeaders.internalClient] = client
            if answering {
                // A pipelined request: an answer of ours now would overtake the one being written.
                context.fireChannelRead(wrapInboundOut(.head(head)))
                break
            }
            let line = { RequestLogLine(method: head.method.rawValue, path: UploadAdmission.path(of: head)) }
            switch UploadAdmission.decide(head, configuration: configuration) {
            case .accept(let route, let expectsContinue):
                if let refusal = refusalFromState(route) {
                    refuse(refusal, line: line(), context: context)
                    break
                }
                if case .upload(_, nil) = route, case .success(let key)? = IdempotencyKeys.parse(head.headerFields[IdempotencyKeys.field]) {
                    // A key in progress or used for another length is refused from the head; a
                    // repeat of a completed one is answered once its body shows the same file.
                    let lookup = idempotency.peek(key, client: client, length: BoundedNumber.length(head.headerFields[.contentLength]).bytes, now: resumable.clock.wall())
                    if let refusal = IdempotencyKeys.refusal(for: lookup) {
                        refuse(refusal, line: line(), context: context)
                        break
                    }
                }
                if expectsContinue {
                    context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
                }
                if case .upload(let boundary, let creation?) = route, let version = creation.version {
                    // Announce the upload resource before the body, so a cut transfer can resume.
                    do {
                        let record = try resumable.create(boundary: boundary, length: creation.length, client: client, now: resumable.clock.wall())
                        head.headerFields[ResumableHeaders.internalToken] = record.token
                        context.writeAndFlush(wrapOutboundOut(.head(announcement(record, head: head, version: version))), promise: nil)
                    } catch {
                        // The endpoint tries again and says why it cannot.
                    }
                }
                context.fireChannelRead(wrapInboundOut(.head(head)))
            case .refuse(let refusal):
                refuse(refusal, line: line(), context: context)
            }
        case .body:
            if !discarding { context.fireChannelRead(data) }
        case .end:
            clock.requestEnded(at: now)
            if !discarding { context.fireChannelRead(data) }
        }
        rearm(context)
    }

    /// This connection's number in the registry (and in the heads it passes on).
    private var id: UInt { UInt(bitPattern: ObjectIdentifier(self)) }

    /// An append the upload's state already refuses, when no other request holds it (one that
    /// does is ended by the endpoint first, and the offset may move until then).
    private func refusalFromState(_ route: UploadAdmission.Route) -> Refusal? {
        guard case .append(let token, let append) = route else { return nil }
        let fields = ResumableRules.fields(echoing: append.version)
        guard let snapshot = resumable.peek(token, now: resumable.clock.wall()) else { return ResumableRules.noSuchUpload(fields) }
        guard !snapshot.busy else { return nil }
        return ResumableRules.appendRefusal(append, complete: snapshot.record.complete, offset: snapshot.offset, fields: fields)
    }

    /// `104 Upload Resumption Supported` for a creation request whose interop version is ours.
    private func announcement(_ record: ResumableRecord, head: HTTPRequest, version: Int) -> HTTPResponse {
        var response = HTTPResponse(status: .init(code: 104, reasonPhrase: "Upload Resumption Supported"))
        response.headerFields[ResumableHeaders.interopVersion] = String(version)
        response.headerFields[.location] = UploadAdmission.location(record.token, head: head, scheme: configuration.scheme)
        response.headerFields[ResumableHeaders.limit] = configuration.uploadLimit(maxAge: resumable.advertisedAge).fieldValue
        return response
    }

    /// Called by the tap for every read from the socket, before any decoding.
    fileprivate func bytesArrived(_ count: Int) {
        guard let context else { return }
        let now = context.eventLoop.now
        clock.bytesArrived(count, at: now)
        if clock.expired(at: now) == .lingerOver {
            context.close(promise: nil)
            return
        }
        rearm(context)
    }

    fileprivate func readRequested() {
        guard let context else { return }
        clock.readRequested(at: context.eventLoop.now)
        rearm(context)
    }

    // MARK: outbound

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response):
            if response.status.kind != .informational, response.headerFields[.connection]?.lowercased() == "close" {
                closeAfterAnswer = true
            }
            context.write(data, promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            context.write(data, promise: promise)
            answerEnded(context)
        }
    }

    private func answerEnded(_ context: ChannelHandlerContext) {
        clock.answerEnded(at: context.eventLoop.now)
        if closeAfterAnswer {
            discarding = true
            context.flush()
            clock.startLingering(at: context.eventLoop.now)
        }
        rearm(context)
    }

    // MARK: refusing and ending

    /// Answers at once with `refusal` and ends the connection after a short linger.
    private func refuse(_ refusal: Refusal, line: RequestLogLine?, context: ChannelHandlerContext) {
        var line = line
        line?.error = refusal.message
        answerNow(refusal.answer(closing: true), line: line, context: context)
    }

    /// Answers at once with `answer` (which says `Connection: close`) and ends the connection
    /// after a short linger, reading nothing more of the request.
    private func answerNow(_ answer: (head: HTTPResponse, body: ByteBuffer), line: RequestLogLine?, context: ChannelHandlerContext) {
        discarding = true
        let (head, body) = answer
        if var line {
            line.status = Int(head.status.code)
            log(line)
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.write(wrapOutboundOut(.end(nil)), promise: nil)
        closeAfterAnswer = true
        answerEnded(context)
    }

    /// The receiver is stopping and this connection outlived the grace period.
    private func abort(_ interruption: ConnectionInterruption) {
        guard let context else { return }
        switch clock.phase {
        case .readingBody, .answering:
            context.fireErrorCaught(interruption)
        case .waitingForRequest, .readingHead, .lingering:
            break
        }
        context.close(promise: nil)
    }

    private func expire(_ expiry: ConnectionClock.Expiry, context: ChannelHandlerContext) {
        switch expiry {
        case .idle, .lingerOver:
            context.close(promise: nil)
        case .headerIncomplete:
            let seconds = ConnectionInterruption.seconds(configuration.limits.clock.header)
            refuse(Refusal(.requestTimeout, "the request head did not arrive within \(seconds)"),
                   line: RequestLogLine(method: "-", path: "-"), context: context)
        case .bodyStalled:
            context.fireErrorCaught(ConnectionInterruption.bodyStalled(configuration.limits.clock.bodyStall))
            context.close(promise: nil)
        }
    }

    // MARK: the timer

    /// Keeps one timer armed at or before the clock's deadline; a timer that fires early
    /// re-arms for the deadline as it stands then (most inputs only push it later).
    private func rearm(_ context: ChannelHandlerContext) {
        guard let deadline = clock.deadline else { return }
        if let timerDeadline, timerDeadline <= deadline.at { return }
        timer?.cancel()
        timerDeadline = deadline.at
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline.at) { [self] in
            timer = nil
            timerDeadline = nil
            guard let context = self.context else { return }
            if let expiry = clock.expired(at: context.eventLoop.now) {
                expire(expiry, context: context)
            } else {
                rearm(context)
            }
        }
    }
}

/// The first handler of a connection's pipeline: tells the gate about raw reads and about each
/// request for more data, then passes everything on untouched.
final class ByteTap: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let gate: UploadGate

    init(gate: UploadGate) {
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        gate.bytesArrived(unwrapInboundIn(data).readableBytes)
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        gate.readRequested()
        context.read()
    }
}
