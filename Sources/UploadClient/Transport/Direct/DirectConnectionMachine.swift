import NIOCore
import NIOHTTP1
import UploadCore

/// Every decision of one direct connection, as a value: when the body goes (at once, after the
/// server's `100`, or when the wait for it is over), which clock runs and what its running out
/// means, what an interim answer, a final answer, an error or the connection's end makes of the
/// exchange, and whether the connection can carry the next one. `DirectUploadHandler` is the
/// shell: it writes, schedules the one clock, and reports; each input returns its actions.
///
/// A connection carries one exchange at a time: idle → (waiting for `100`) → sending the body
/// → waiting for the answer → idle again (keep-alive) or closing. A body that fails while an
/// interim answer may still name its upload resource is held a moment for it.
///
/// The shell takes actions in order. Writing (`writeRequest`, `beginBody`) can complete at once
/// and feed inputs back before it returns, so an action list ends with its write.
struct DirectConnectionMachine {
    /// How long a body held for `100 Continue` waits before it goes anyway.
    static let continueWait: TimeAmount = .seconds(1)

    /// The one clock of the connection; running out comes back as `clockRanOut(token)`.
    enum Clock: Equatable, Sendable {
        /// The body waits for `100 Continue`; when this is over it goes anyway (servers that
        /// ignore `Expect` exist).
        case awaitingContinue
        /// The body's `StallClock` runs out (then it is asked again: a write may have moved it).
        case stall
        /// The whole answer must come within this.
        case answer
        /// A failed body waits this long for an interim answer that names the upload resource.
        case announcement
        /// An idle connection closes after this.
        case idle
    }

    enum Action: Equatable {
        /// Write the request head, and the whole body with it when it is in memory (the shell
        /// then inputs `requestWritten()`).
        case writeRequest
        /// Start writing the streamed body (it comes back as `partWritten` and `bodyEnded`).
        case beginBody
        /// Run `clock` for `after`, replacing the one that runs.
        case startClock(Clock, after: TimeAmount, token: UInt64)
        case stopClock
        case reportInterim(UploadResponse)
        /// The body bytes written so far.
        case reportSent(Int64)
        /// The exchange ended with `result`: close the connection first unless it is reusable.
        case finish(DirectResult)
        case close
    }

    enum State: Equatable {
        case idle
        case awaitingContinue
        case sendingBody
        /// The body is written (or will not go: a final answer came before `100`).
        case awaitingAnswer
        /// The body failed; waiting a moment for an interim answer before ending with this.
        case holding(UploadFailure)
        /// The connection is ending or ended: no exchange starts on it.
        case closed
    }

    static let announcementWait: TimeAmount = .seconds(1)

    private(set) var state: State = .idle
    /// Counts exchanges: a body writer or producer of an ended exchange is told apart by it.
    private(set) var exchange: UInt64 = 0
    private var clock: (kind: Clock, token: UInt64, deadline: NIODeadline?)?
    private var tokens: UInt64 = 0
    private var timeouts = UploadTimeouts()
    private var wantsInterim = false
    private var result = DirectResult()
    private var answer = AnswerCapture()
    private var sawInterim = false
    private var error: (any Error)?
    private var stall = StallClock(idleCounts: true)

    var isExchanging: Bool {
        switch state {
        case .idle, .closed: false
        case .awaitingContinue, .sendingBody, .awaitingAnswer, .holding: true
        }
    }

    /// Whether a body part of `exchange` may still be written.
    func acceptsBody(of exchange: UInt64) -> Bool {
        exchange == self.exchange && state == .sendingBody
    }

    // MARK: Inputs

    /// A request on this connection. Nil when it cannot take one (an exchange runs, or the
    /// connection is ending): the request fails without touching the one that runs.
    /// `refusedHead`: the head cannot be sent (a field NIO's validator would refuse).
    /// `idleCounts`: time with no write in flight counts as a stall (`StallClock`: a body from a
    /// file, not paced).
    mutating func start(
        timeouts: UploadTimeouts, bodyInMemory: Bool, expectsContinue: Bool, wantsInterim: Bool, idleCounts: Bool = true,
        continueWait: TimeAmount? = nil, refusedHead: UploadFailure? = nil, at now: NIODeadline
    ) -> [Action]? {
        guard state == .idle else { return nil }
        stall = StallClock(idleCounts: bodyInMemory || idleCounts)
        exchange &+= 1
        self.timeouts = timeouts
        self.wantsInterim = wantsInterim
        result = DirectResult()
        answer = AnswerCapture()
        sawInterim = false
        error = nil
        var actions: [Action] = [.stopClock]
        if let refusedHead {
            state = .sendingBody
            actions += finish(failure: refusedHead)
            return actions
        }
        if bodyInMemory {
            state = .sendingBody
            actions.append(.writeRequest)
        } else if expectsContinue {
            state = .awaitingContinue
            // As curl (`--expect100-timeout`, 1 s): a server that ignores `Expect` costs a second,
            // not an answer's wait; unless the request asks for longer (a tus append after a cut).
            actions.append(startClock(.awaitingContinue, after: min(timeouts.answer, continueWait ?? Self.continueWait)))
            actions.append(.writeRequest)
        } else {
            actions += bodyGoes(at: now, after: [.writeRequest])
        }
        return actions
    }

    /// A body in memory went to the socket with the head, or is on its way: the stall clock
    /// runs unless it is written already (a small body mostly goes in the flush).
    mutating func requestWritten(at now: NIODeadline) -> [Action] {
        guard state == .sendingBody, !result.bodySent else { return [] }
        stall.writeStarted(at: now)
        return stallClock(at: now)
    }

    /// A streamed part of `exchange` goes to the socket.
    mutating func partStarted(of exchange: UInt64, at now: NIODeadline) -> [Action] {
        guard acceptsBody(of: exchange) else { return [] }
        stall.writeStarted(at: now)
        return stallClock(at: now)
    }

    /// A streamed part of `exchange` reached the socket.
    mutating func partWritten(_ count: Int64, of exchange: UInt64, at now: NIODeadline) -> [Action] {
        guard acceptsBody(of: exchange) else { return [] }
        result.bytesSent += count
        stall.writeEnded(at: now)
        return [.reportSent(result.bytesSent)] + stallClock(at: now)
    }

    /// The whole body of `exchange` reached the socket (`total`: its size, for a body in
    /// memory, written in one go), or it could not go on.
    mutating func bodyEnded(of exchange: UInt64, total: Int64? = nil, failure: UploadFailure? = nil) -> [Action] {
        guard exchange == self.exchange, state == .sendingBody else { return [] }
        if let failure { return bodyFailed(failure) }
        var actions: [Action] = []
        if let total {
            result.bytesSent = total
            actions.append(.reportSent(total))
        }
        result.bodySent = true
        stall.end()
        state = .awaitingAnswer
        actions.append(startClock(.answer, after: timeouts.answer))
        return actions
    }

    /// The user cancelled the upload.
    mutating func cancel() -> [Action] {
        guard isExchanging else { return [] }
        return bodyFailed(FailureClassifier.cancelled(bodySent: result.bodySent))
    }

    /// An interim answer (1xx). `100` lets a body that waits for it go; any other is reported
    /// (`104` names the upload resource) and ends a held failure.
    mutating func interim(_ head: HTTPResponseHead, at now: NIODeadline) -> [Action] {
        guard isExchanging else { return [.close] }
        result.receivedAnything = true
        if head.status.code == 100 {
            guard state == .awaitingContinue else { return [] }
            return bodyGoes(at: now)
        }
        sawInterim = true
        var actions: [Action] = [.reportInterim(UploadResponse(head))]
        if case .holding(let held) = state { actions += finish(failure: held) }
        return actions
    }

    /// The final answer's head.
    mutating func answerHead(_ head: HTTPResponseHead) -> [Action] {
        guard isExchanging else { return [.close] }
        result.receivedAnything = true
        if case .holding(let held) = state { return finish(failure: held) }
        answer.take(head)
        guard state == .awaitingContinue else { return [] }
        stall.end()
        // Answered before `100`: the body does not go, and the connection ends with the
        // exchange (its framing is unfinished). The rest of the answer is still timed.
        state = .awaitingAnswer
        return [startClock(.answer, after: timeouts.answer)]
    }

    mutating func answerBody(_ part: ByteBuffer) -> [Action] {
        guard isExchanging else { return [.close] }
        result.receivedAnything = true
        answer.take(part)
        // What is kept is in: the rest is not read, and the connection (mid-answer) closes.
        if let kept = answer.whenEnoughWasKept { return finish(answer: kept, reusable: false) }
        return []
    }

    /// The answer ended. One before the whole body went out (a 413 at once) ends the
    /// connection: the rest of the body is still on its way.
    mutating func answerEnded() -> [Action] {
        guard isExchanging else { return [.close] }
        guard let response = answer.answerSoFar, let head = answer.head else { return [] }
        return finish(answer: response, reusable: result.bodySent && head.isKeepAlive)
    }

    mutating func clockRanOut(token: UInt64, at now: NIODeadline) -> [Action] {
        guard let clock, clock.token == token else { return [] }
        self.clock = nil
        switch (clock.kind, state) {
        case (.awaitingContinue, .awaitingContinue):
            return bodyGoes(at: now)
        case (.stall, .sendingBody):
            guard stall.isStalled(at: now, limit: timeouts.stall) else { return stallClock(at: now) }
            return finish(failure: FailureClassifier.stalled(timeouts))
        case (.answer, .awaitingAnswer):
            switch answer.whenTheAnswerClockRanOut(timeouts) {
            case .success(let cut): return finish(answer: cut, reusable: false)
            case .failure(let failure): return finish(failure: failure)
            }
        case (.announcement, .holding(let held)):
            return finish(failure: held)
        case (.idle, .idle):
            state = .closed
            return [.close]
        default:
            return []
        }
    }

    /// The connection was put back to wait for its next request, for at most `timeout`.
    mutating func parked(expiringIn timeout: TimeAmount) -> [Action] {
        guard state == .idle else { return [] }
        return [startClock(.idle, after: timeout)]
    }

    /// An error on the connection: it ends (the first error is what the exchange reports).
    mutating func errorCaught(_ error: any Error) -> [Action] {
        if self.error == nil { self.error = error }
        return [.close]
    }

    /// The connection ended.
    mutating func connectionEnded() -> [Action] {
        let wasExchanging = isExchanging
        let held: UploadFailure? = if case .holding(let failure) = state { failure } else { nil }
        state = .closed
        var actions: [Action] = [.stopClock]
        clock = nil
        guard wasExchanging else { return actions }
        if let held {
            actions += finish(failure: held)
        } else if let cut = answer.whenTheConnectionEnded {
            actions += finish(answer: cut, reusable: false)
        } else if let error {
            actions += finish(failure: FailureClassifier.classify(error, bodySent: result.bodySent, timeouts: timeouts))
        } else {
            actions += finish(
                failure: UploadFailure(
                    .connectionLost,
                    result.bodySent
                        ? "the server closed the connection without answering"
                        : "the server closed the connection during the upload"))
        }
        return actions
    }

    // MARK: Steps

    /// The streamed body goes (at once, after its head, or after the `100` it waited for).
    private mutating func bodyGoes(at now: NIODeadline, after writes: [Action] = []) -> [Action] {
        state = .sendingBody
        stall.began(at: now)
        return stallClock(at: now) + writes + [.beginBody]
    }

    /// The stall clock set to the body's `StallClock`: run until its deadline, or stopped while
    /// nothing can stall the body (a paced body between writes). Unchanged when it already runs
    /// for that deadline.
    private mutating func stallClock(at now: NIODeadline) -> [Action] {
        guard let deadline = stall.deadline(timeouts.stall) else {
            guard clock?.kind == .stall else { return [] }
            clock = nil
            return [.stopClock]
        }
        if let clock, clock.kind == .stall, clock.deadline == deadline { return [] }
        return [startClock(.stall, after: max(.zero, deadline - now), deadline: deadline)]
    }

    /// The body cannot go on. Where an interim answer may still name an upload resource (and
    /// none has yet), the exchange waits for it a moment before ending, so the resource can be
    /// removed; the body stops at once either way.
    private mutating func bodyFailed(_ failure: UploadFailure) -> [Action] {
        guard isExchanging else { return [] }
        if case .holding = state { return [] }
        guard wantsInterim, !sawInterim, !result.bodySent else { return finish(failure: failure) }
        state = .holding(failure)
        return [startClock(.announcement, after: Self.announcementWait)]
    }

    private mutating func finish(answer response: UploadResponse, reusable: Bool) -> [Action] {
        result.response = response
        return end(reusable: reusable)
    }

    private mutating func finish(failure: UploadFailure) -> [Action] {
        result.failure = failure
        return end(reusable: false)
    }

    private mutating func end(reusable: Bool) -> [Action] {
        result.reusable = reusable && state != .closed
        if state != .closed { state = result.reusable ? .idle : .closed }
        clock = nil
        return [.stopClock, .finish(result)]
    }

    private mutating func startClock(_ kind: Clock, after: TimeAmount, deadline: NIODeadline? = nil) -> Action {
        tokens &+= 1
        clock = (kind, tokens, deadline)
        return .startClock(kind, after: after, token: tokens)
    }
}
