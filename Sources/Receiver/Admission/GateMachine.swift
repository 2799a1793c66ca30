import HTTPTypes
import NIOCore
import UploadCore

/// What the gate asks of the receiver's stores while it decides on a head, without changing them.
protocol GateVerdicts {
    /// Resumable upload `token` as it stands (nil: there is no such upload).
    func upload(_ token: String) -> ResumableStore.Snapshot?
    /// What a request with this `Idempotency-Key` would find.
    func idempotency(_ key: String, client: String, length: Int64?) -> IdempotencyKeys.Lookup
}

/// The gate's questions, answered by the receiver's stores as they stand.
struct StoreVerdicts: GateVerdicts {
    let resumable: ResumableStore
    let idempotency: IdempotencyKeys

    func upload(_ token: String) -> ResumableStore.Snapshot? {
        resumable.peek(token, now: resumable.clock.wall())
    }

    func idempotency(_ key: String, client: String, length: Int64?) -> IdempotencyKeys.Lookup {
        idempotency.peek(key, client: client, length: length, now: resumable.clock.wall())
    }
}

/// The decisions of one connection's `UploadGate` as a value: it takes what happened (a head, a
/// body part, the end of a request, raw bytes, an answer written, a timer, an interruption,
/// each with the time from the event loop's clock) and says what to do; the gate only does it.
///
/// - From the head alone (`UploadAdmission`, the stores' verdicts): `100 Continue` at once for
///   an acceptable request that expects it; for a refused one the final answer at once, without
///   reading the body, then the connection lingers and ends (the client may not send the body).
/// - After an answer that says `Connection: close`, the connection ends instead of draining.
/// - The connection's clocks (`ConnectionClock`): header, idle and body-stall timeouts; after
///   every input, `timerToArm()` says whether the timer must fire earlier than it is armed.
struct GateMachine {
    /// A creation request the gate announces (`104`) before its body arrives, so that a cut
    /// transfer can resume: the gate makes the upload resource.
    struct Announcement: Equatable {
        let boundary: String
        let length: Int64?
        let version: Int
    }

    enum Action {
        case none
        /// Pass the part just read on to the responder as it is.
        case forward
        /// Pass this head on to the responder; first `100 Continue` if `sendContinue`, and the
        /// upload resource made and announced if `announce`.
        case forwardHead(HTTPRequest, sendContinue: Bool, announce: Announcement?)
        /// Write this whole answer now (head, body, end), log `log`, flush. Nothing more of the
        /// request is read; the connection lingers so the client can read it, then closes.
        case answer(HTTPResponse, ByteBuffer, log: RequestLogLine?)
        /// An answer that ends the connection has been written: flush it (the connection lingers).
        case flush
        /// Close the connection, after failing the request being read with `failing`.
        case close(failing: ConnectionInterruption?)
    }

    let configuration: ReceiverConfiguration
    /// The peer as the resumable quota names it.
    private(set) var client = ResumableQuota.unknownClient
    private var clock: ConnectionClock
    private var registered = false
    /// Inbound parts of a refused request are dropped, not handed to the responder.
    private var discarding = false
    private var closeAfterAnswer = false
    private var closing = false
    /// When the timer is armed to fire (nil: not armed).
    private var armed: NIODeadline?

    init(configuration: ReceiverConfiguration, openedAt now: NIODeadline) {
        self.configuration = configuration
        self.clock = ConnectionClock(limits: configuration.limits.clock, openedAt: now)
    }

    var phase: ConnectionClock.Phase { clock.phase }

    // MARK: inputs

    /// The connection is open; the registry said whether it may stay.
    mutating func started(_ admission: ConnectionRegistry.Admission, client: String, now: NIODeadline) -> Action {
        self.client = client
        switch admission {
        case .admitted:
            registered = true
            return .none
        case .overLimit(let limit):
            return refuse(Refusal(.serviceUnavailable, "the receiver is at its limit of \(limit) open connections; try again shortly"), line: nil, now: now)
        case .stopping:
            return refuse(Refusal(.serviceUnavailable, "the receiver is stopping"), line: nil, now: now)
        }
    }

    mutating func head(_ head: HTTPRequest, now: NIODeadline, verdicts: some GateVerdicts) -> Action {
        let answering = clock.unanswered > 0
        clock.headReceived(at: now)
        if discarding { return .none }
        // A pipelined request: an answer of ours now would overtake the one being written.
        if answering { return .forwardHead(head, sendContinue: false, announce: nil) }
        let line = RequestLogLine(method: head.method.rawValue, path: UploadAdmission.path(of: head))
        switch UploadAdmission.decide(head, configuration: configuration) {
        case .refuse(let refusal):
            return refuse(refusal, line: line, now: now)
        case .accept(let route, let expectsContinue):
            if let refusal = Self.refusalFromState(route, verdicts) {
                return refuse(refusal, line: line, now: now)
            }
            if case .upload(_, nil) = route, case .success(let key)? = IdempotencyKeys.parse(head.headerFields[IdempotencyKeys.field]) {
                // A key in progress or used for another length is refused from the head; a
                // repeat of a completed one is answered once its body shows the same file.
                let lookup = verdicts.idempotency(key, client: client, length: BoundedNumber.length(head.headerFields[.contentLength]).bytes)
                if let refusal = IdempotencyKeys.refusal(for: lookup) { return refuse(refusal, line: line, now: now) }
            }
            var announce: Announcement?
            if case .upload(let boundary, let creation?) = route, let version = creation.version {
                announce = Announcement(boundary: boundary, length: creation.length, version: version)
            }
            return .forwardHead(head, sendContinue: expectsContinue, announce: announce)
        }
    }

    mutating func bodyPart() -> Action {
        discarding ? .none : .forward
    }

    mutating func requestEnded(now: NIODeadline) -> Action {
        clock.requestEnded(at: now)
        return discarding ? .none : .forward
    }

    /// Raw bytes came from the socket (before any decoding): a trickle counts as activity only here.
    mutating func bytesArrived(_ count: Int, now: NIODeadline) -> Action {
        clock.bytesArrived(count, at: now)
        return clock.expired(at: now) == .lingerOver ? close(failing: nil) : .none
    }

    /// The connection asked the socket for more data.
    mutating func readRequested(now: NIODeadline) {
        clock.readRequested(at: now)
    }

    /// The responder is writing the head of an answer.
    mutating func answerHead(_ response: HTTPResponse) {
        if response.status.kind != .informational, response.headerFields[.connection]?.lowercased() == "close" {
            closeAfterAnswer = true
        }
    }

    /// The responder wrote the end of an answer.
    mutating func answerEnded(now: NIODeadline) -> Action {
        clock.answerEnded(at: now)
        guard closeAfterAnswer else { return .none }
        discarding = true
        clock.startLingering(at: now)
        return .flush
    }

    /// Something outside ends the connection: the receiver is stopping and the grace period is
    /// over, or a newer request took over the upload it was sending.
    mutating func interrupted(_ why: ConnectionInterruption) -> Action {
        switch clock.phase {
        case .readingBody, .answering: close(failing: why)
        case .waitingForRequest, .readingHead, .lingering: close(failing: nil)
        }
    }

    mutating func timerFired(now: NIODeadline) -> Action {
        armed = nil
        switch clock.expired(at: now) {
        case nil:
            return .none
        case .idle?, .lingerOver?:
            return close(failing: nil)
        case .headerIncomplete?:
            let seconds = ConnectionInterruption.seconds(configuration.limits.clock.header)
            return refuse(Refusal(.requestTimeout, "the request head did not arrive within \(seconds)"), line: RequestLogLine(method: "-", path: "-"), now: now)
        case .bodyStalled?:
            return close(failing: .bodyStalled(configuration.limits.clock.bodyStall))
        }
    }

    /// The connection is gone; true when it must leave the registry (once).
    mutating func closed() -> Bool {
        closing = true
        armed = nil
        defer { registered = false }
        return registered
    }

    /// When the timer must be armed for, if the one armed would fire too late (or none is):
    /// one timer stays armed at or before the clock's deadline; one that fires early is armed
    /// again for the deadline as it stands then (most inputs only push it later).
    mutating func timerToArm() -> NIODeadline? {
        guard !closing, let deadline = clock.deadline else { return nil }
        if let armed, armed <= deadline.at { return nil }
        armed = deadline.at
        return deadline.at
    }

    // MARK: deciding

    private mutating func close(failing: ConnectionInterruption?) -> Action {
        closing = true
        return .close(failing: failing)
    }

    /// Answers at once with `refusal`, saying `Connection: close`; reads nothing more of the
    /// request and lingers a little so the client can read the answer.
    private mutating func refuse(_ refusal: Refusal, line: RequestLogLine?, now: NIODeadline) -> Action {
        let (head, body) = refusal.answer(closing: true)
        var line = line
        line?.error = refusal.message
        line?.status = Int(head.status.code)
        discarding = true
        closeAfterAnswer = true
        clock.answerEnded(at: now)
        clock.startLingering(at: now)
        return .answer(head, body, log: line)
    }

    /// An append the upload's state already refuses, when no other request holds it (one that
    /// does is ended by the endpoint first, and the offset may move until then).
    private static func refusalFromState(_ route: UploadAdmission.Route, _ verdicts: some GateVerdicts) -> Refusal? {
        guard case .append(let token, let append) = route else { return nil }
        let fields = ResumableRules.fields(echoing: append.version)
        guard let snapshot = verdicts.upload(token) else { return ResumableRules.noSuchUpload(fields) }
        guard !snapshot.busy else { return nil }
        return ResumableRules.appendRefusal(append, complete: snapshot.record.complete, offset: snapshot.offset, fields: fields)
    }
}
