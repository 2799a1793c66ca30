import NIOCore

/// The clocks of one receiver connection, as a value: inputs say what happened on the
/// connection, `deadline` says when it must end if nothing else happens, and `expired(at:)` says
/// why. `UploadGate` feeds it and keeps one timer armed; tests drive it with made-up instants.
///
/// - Waiting for a request (nothing of it read yet): the idle timeout after a response, the
///   header timeout on a fresh connection. Ends quietly.
/// - Reading a head: the header timeout from its first byte, however slowly bytes trickle in
///   (so one byte a second cannot hold a connection). Answered 408.
/// - Reading a body: the body-stall timeout counts only while the receiver is asking for data
///   and none comes; while the receiver holds reads back (a slow disk) the client is not stalling.
/// - Answering: no clock; the receiver is working.
/// - Lingering after a refusal: reading and discarding what the client still sends, so its
///   unread bytes do not turn our answer into a reset, for at most `lingerTime` or `lingerBytes`.
struct ConnectionClock {
    struct Limits: Sendable, Equatable {
        var header: TimeAmount
        var idle: TimeAmount
        var bodyStall: TimeAmount
        var lingerTime: TimeAmount = .seconds(1)
        var lingerBytes: Int = 8 << 20
    }

    enum Expiry: Equatable {
        /// Nothing of a request arrived: close quietly.
        case idle
        /// A request head did not complete in time: answer 408.
        case headerIncomplete
        /// The body stopped arriving while the receiver waited for it.
        case bodyStalled
        /// The refused client had its chance to read the answer.
        case lingerOver
    }

    enum Phase: Equatable {
        case waitingForRequest(since: NIODeadline, fresh: Bool)
        case readingHead(since: NIODeadline)
        /// `waitingSince`: when the receiver last asked for data that has not come; nil while
        /// it holds reads back.
        case readingBody(waitingSince: NIODeadline?)
        case answering
        case lingering(until: NIODeadline, discarded: Int)
    }

    let limits: Limits
    private(set) var phase: Phase
    /// Requests whose answer has not been written completely (more than one when pipelined).
    private(set) var unanswered = 0

    init(limits: Limits, openedAt now: NIODeadline) {
        self.limits = limits
        self.phase = .waitingForRequest(since: now, fresh: true)
    }

    var deadline: (at: NIODeadline, expiry: Expiry)? {
        switch phase {
        case .waitingForRequest(let since, let fresh):
            return (since + (fresh ? limits.header : limits.idle), .idle)
        case .readingHead(let since):
            return (since + limits.header, .headerIncomplete)
        case .readingBody(let waitingSince):
            return waitingSince.map { ($0 + limits.bodyStall, .bodyStalled) }
        case .answering:
            return nil
        case .lingering(let until, let discarded):
            return (discarded > limits.lingerBytes ? .uptimeNanoseconds(0) : until, .lingerOver)
        }
    }

    /// Why the connection must end now, if it must.
    func expired(at now: NIODeadline) -> Expiry? {
        guard let deadline, now >= deadline.at else { return nil }
        return deadline.expiry
    }

    mutating func bytesArrived(_ count: Int, at now: NIODeadline) {
        switch phase {
        case .waitingForRequest:
            phase = .readingHead(since: now)
        case .readingBody:
            phase = .readingBody(waitingSince: nil)
        case .lingering(let until, let discarded):
            phase = .lingering(until: until, discarded: discarded + count)
        case .readingHead, .answering:
            break
        }
    }

    mutating func readRequested(at now: NIODeadline) {
        if case .readingBody(nil) = phase { phase = .readingBody(waitingSince: now) }
    }

    mutating func headReceived(at now: NIODeadline) {
        unanswered += 1
        guard !isLingering else { return }
        phase = .readingBody(waitingSince: now)
    }

    mutating func requestEnded(at now: NIODeadline) {
        guard case .readingBody = phase else { return }
        // Answered before the body ended (and kept open): nothing more to wait for.
        phase = unanswered == 0 ? .waitingForRequest(since: now, fresh: false) : .answering
    }

    mutating func answerEnded(at now: NIODeadline) {
        unanswered = max(0, unanswered - 1)
        if case .answering = phase, unanswered == 0 {
            phase = .waitingForRequest(since: now, fresh: false)
        }
    }

    /// After a refusal that ends the connection: discard what still arrives for a short while.
    mutating func startLingering(at now: NIODeadline) {
        guard !isLingering else { return }
        phase = .lingering(until: now + limits.lingerTime, discarded: 0)
    }

    var isLingering: Bool {
        if case .lingering = phase { return true }
        return false
    }
}
