import Hummingbird
import NIOCore
import NIOHTTPTypes
import UploadCore

/// Sits between the HTTP codec and Hummingbird on every connection and does what the
/// responder cannot (it only runs once a head has been read, and Hummingbird drains whatever
/// body it leaves): answers from the head alone (`100 Continue`, a refusal without reading the
/// body, `104` for a resumable upload), ends a connection after an answer that says
/// `Connection: close`, keeps its timeouts, counts it in the `ConnectionRegistry` and tells that
/// what it learnt of each request it passes on. What to do is decided by a `GateMachine`; this
/// shell feeds it the pipeline's events with the event loop's time and does what it says. A
/// `ByteTap` at the front of the pipeline tells it of raw reads and of each request for more.
final class UploadGate: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let registry: ConnectionRegistry
    private let resumable: ResumableStore
    private let idempotency: IdempotencyKeys
    private let log: @Sendable (RequestLogLine) -> Void
    private var machine: GateMachine
    private var requests: ConnectionRequests?
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?

    init(
        configuration: ReceiverConfiguration, registry: ConnectionRegistry, resumable: ResumableStore, idempotency: IdempotencyKeys,
        log: @escaping @Sendable (RequestLogLine) -> Void
    ) {
        self.registry = registry
        self.resumable = resumable
        self.idempotency = idempotency
        self.log = log
        // Made again from the event loop's clock when the connection starts.
        self.machine = GateMachine(configuration: configuration, openedAt: .uptimeNanoseconds(0))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        try? context.pipeline.syncOperations.addHandler(ByteTap(gate: self), position: .first)
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        closed()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed()
        context.fireChannelInactive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard requests == nil else { return }
        let now = context.eventLoop.now
        let requests = ConnectionRequests(id: ConnectionRegistry.id(of: context.channel), client: ResumableQuota.client(of: context.channel.remoteAddress))
        self.requests = requests
        machine = GateMachine(configuration: machine.configuration, openedAt: now)
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let admission = registry.register(requests) { why in
            bound.eventLoop.execute { bound.value.interrupt(why) }
        }
        act(machine.started(admission, client: requests.client, now: now), context)
    }

    private func closed() {
        timer?.cancel()
        timer = nil
        if machine.closed(), let requests { registry.unregister(requests.id) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = context.eventLoop.now
        switch unwrapInboundIn(data) {
        case .head(let head): act(machine.head(head, now: now, verdicts: StoreVerdicts(resumable: resumable, idempotency: idempotency)), context)
        case .body: act(machine.bodyPart(), context, data)
        case .end: act(machine.requestEnded(now: now), context, data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let part = unwrapOutboundIn(data)
        if case .head(let response) = part { machine.answerHead(response) }
        context.write(data, promise: promise)
        if case .end = part { act(machine.answerEnded(now: context.eventLoop.now), context) }
    }

    /// Called by the tap for every read from the socket, before any decoding.
    func bytesArrived(_ count: Int) {
        guard let context else { return }
        act(machine.bytesArrived(count, now: context.eventLoop.now), context)
    }

    func readRequested() {
        guard let context else { return }
        machine.readRequested(now: context.eventLoop.now)
        rearm(context)
    }

    private func interrupt(_ why: ConnectionInterruption) {
        guard let context else { return }
        act(machine.interrupted(why), context)
    }

    private func act(_ action: GateMachine.Action, _ context: ChannelHandlerContext, _ data: NIOAny? = nil) {
        switch action {
        case .none:
            break
        case .forward:
            if let data { context.fireChannelRead(data) }
        case .forwardHead(let head, let sendContinue, let announce):
            if sendContinue { context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil) }
            // An upload resource that cannot be made is not announced: the endpoint tries again and says why.
            let announced = announce.flatMap { resumable.announce($0, head: head, client: machine.client, configuration: machine.configuration) }
            if let announced { context.writeAndFlush(wrapOutboundOut(.head(announced.answer)), promise: nil) }
            requests?.forwarded(announcing: announced?.token)
            context.fireChannelRead(wrapInboundOut(.head(head)))
        case .answer(let head, let body, let line):
            if let line { log(line) }
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(body)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        case .flush:
            context.flush()
        case .close(let failing):
            if let failing { context.fireErrorCaught(failing) }
            context.close(promise: nil)
        }
        rearm(context)
    }

    private func rearm(_ context: ChannelHandlerContext) {
        guard let deadline = machine.timerToArm() else { return }
        timer?.cancel()
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            guard let context = self.context else { return }
            act(machine.timerFired(now: context.eventLoop.now), context)
        }
    }
}
