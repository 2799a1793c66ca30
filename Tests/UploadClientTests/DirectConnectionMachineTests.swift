import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@testable import UploadClient
import UploadCore

/// A direct connection's decisions, input by input: which clock runs, when the body goes,
/// what each way an exchange can end makes of it, and whether the connection is kept.
@Suite struct DirectConnectionMachineTests {
    typealias Machine = DirectConnectionMachine
    let timeouts = UploadTimeouts(connect: .seconds(1), stall: .seconds(2), answer: .seconds(3))
    let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000)

    func head(_ status: HTTPResponseStatus, keepAlive: Bool = true) -> HTTPResponseHead {
        var head = HTTPResponseHead(version: .http1_1, status: status)
        if !keepAlive { head.headers.add(name: "Connection", value: "close") }
        return head
    }

    func clocks(_ actions: [Machine.Action]) -> [Machine.Clock] {
        actions.compactMap { if case .startClock(let clock, _, _) = $0 { clock } else { nil } }
    }

    func token(_ actions: [Machine.Action]) -> UInt64? {
        actions.lazy.compactMap { if case .startClock(_, _, let token) = $0 { token } else { nil } }.last
    }

    func result(_ actions: [Machine.Action]) -> DirectResult? {
        actions.lazy.compactMap { if case .finish(let result) = $0 { result } else { nil } }.first
    }

    @Test func aBodyInMemoryGoesWithItsHeadThenTheAnswerClockRunsAndTheConnectionIsKept() throws {
        var machine = Machine()
        #expect(machine.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0) == [.stopClock, .writeRequest])
        // Written in the flush: no stall clock at all.
        let written = machine.bodyEnded(of: machine.exchange, total: 700)
        #expect(written.first == .reportSent(700))
        #expect(clocks(written) == [.answer])
        #expect(machine.requestWritten(at: t0).isEmpty)
        #expect(machine.answerHead(head(.ok)).isEmpty)
        var part = ByteBuffer(string: "{}")
        #expect(machine.answerBody(part).isEmpty)
        let answerEnded = machine.answerEnded()
        let ended = try #require(result(answerEnded))
        #expect(ended.response?.status == 200 && ended.response?.body == Array("{}".utf8))
        #expect(ended.reusable && ended.bodySent && ended.bytesSent == 700 && ended.receivedAnything)
        #expect(machine.state == .idle)
        #expect(clocks(machine.parked(expiringIn: .seconds(60))) == [.idle])
        part.clear()
    }

    @Test func aBodyTheSocketDidNotTakeAtOnceStallsWhenNothingMoves() throws {
        var machine = Machine()
        _ = machine.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0)
        let stall = machine.requestWritten(at: t0)
        let stallToken = try #require(token(stall))
        #expect(stall == [.startClock(.stall, after: .seconds(2), token: stallToken)])
        let ranOut = machine.clockRanOut(token: stallToken, at: t0 + .seconds(100))
        let ended = try #require(result(ranOut))
        #expect(ended.failure?.kind == .stalled && !ended.reusable)
        #expect(machine.state == .closed)
        #expect(
            machine.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0) == nil,
            "a closing connection takes no request")
    }

    @Test func aStreamedBodyMovesTheStallClockAtEveryPartAndALateClockIsIgnored() throws {
        var machine = Machine()
        let started = machine.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: false, wantsInterim: false, at: t0)
        let begun = try #require(started)
        #expect(clocks(begun) == [.stall])
        #expect(begun.suffix(2) == [.writeRequest, .beginBody], "writes last: they can feed inputs back")
        let first = try #require(token(begun))
        let exchange = machine.exchange
        let part = machine.partWritten(1000, of: exchange, at: t0 + .seconds(1))
        #expect(part.first == .reportSent(1000) && clocks(part) == [.stall])
        #expect(machine.clockRanOut(token: first, at: t0 + .seconds(2)).isEmpty, "the clock the part replaced")
        #expect(machine.partWritten(500, of: exchange &+ 1, at: t0).isEmpty, "a part of another exchange")
        #expect(clocks(machine.bodyEnded(of: exchange)) == [.answer])
        #expect(!machine.acceptsBody(of: exchange))
    }

    /// The stall rule (`StallClock`): a file's body stalls when no write is taken for the
    /// limit; a paced one only when a write waits for the socket that long. A clock that runs
    /// out after a write moved the deadline is set again, not taken as a stall.
    @Test func aStallIsTimeWithoutAWriteTakenOrForAPacedBodyAWriteWaiting() throws {
        var file = Machine()
        let begun = file.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: false, wantsInterim: false, at: t0) ?? []
        let first = try #require(token(begun))
        let exchange = file.exchange
        #expect(file.partStarted(of: exchange, at: t0 + .seconds(1)).isEmpty, "the deadline stays: 2 s from the body's start")
        let moved = file.partWritten(10, of: exchange, at: t0 + .milliseconds(1500))
        let second = try #require(token(moved))
        #expect(moved.last == .startClock(.stall, after: .seconds(2), token: second))
        #expect(file.clockRanOut(token: first, at: t0 + .seconds(2)).isEmpty, "replaced")
        #expect(result(file.clockRanOut(token: second, at: t0 + .milliseconds(3500)))?.failure?.kind == .stalled)

        var paced = Machine()
        let pacedBegun = paced.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: false, wantsInterim: false, idleCounts: false, at: t0) ?? []
        #expect(clocks(pacedBegun).isEmpty, "nothing written yet: waiting for the pace is no stall")
        let pacedExchange = paced.exchange
        let waiting = paced.partStarted(of: pacedExchange, at: t0 + .seconds(60))
        let pacedToken = try #require(token(waiting))
        #expect(paced.partWritten(10, of: pacedExchange, at: t0 + .seconds(61)).contains(.stopClock))
        #expect(paced.clockRanOut(token: pacedToken, at: t0 + .seconds(62)).isEmpty)
        let again = try #require(token(paced.partStarted(of: pacedExchange, at: t0 + .seconds(3600))))
        #expect(result(paced.clockRanOut(token: again, at: t0 + .seconds(3602)))?.failure?.kind == .stalled)
    }

    @Test func theBodyWaitsForOneHundredContinueOrOneSecondAsCurlDoes() throws {
        var machine = Machine()
        let started = machine.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: true, wantsInterim: false, at: t0)
        let waiting = try #require(started)
        let waitToken = try #require(token(waiting))
        #expect(
            waiting == [.stopClock, .startClock(.awaitingContinue, after: .seconds(1), token: waitToken), .writeRequest],
            "a second, not the answer's 3 s")
        // A request that asks for longer (tus's first append after a cut) waits that long, within the answer's time.
        var patient = Machine()
        let begun = patient.start(
            timeouts: timeouts, bodyInMemory: false, expectsContinue: true, wantsInterim: false,
            continueWait: .seconds(60), at: t0)
        let held = try #require(begun)
        #expect(held.contains(.startClock(.awaitingContinue, after: .seconds(3), token: try #require(token(held)))))
        #expect(!machine.acceptsBody(of: machine.exchange))
        let go = machine.interim(head(.continue), at: t0)
        #expect(clocks(go) == [.stall] && go.last == .beginBody)
        #expect(machine.acceptsBody(of: machine.exchange))

        // A server that ignores Expect: the body goes when the wait is over.
        var other = Machine()
        let otherStarted = other.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: true, wantsInterim: false, at: t0)
        let otherToken = try #require(otherStarted.flatMap(token))
        let late = other.clockRanOut(token: otherToken, at: t0 + .seconds(100))
        #expect(clocks(late) == [.stall] && late.last == .beginBody)
    }

    @Test func aFinalAnswerBeforeOneHundredContinueSendsNoBodyAndEndsTheConnection() throws {
        var machine = Machine()
        _ = machine.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: true, wantsInterim: false, at: t0)
        #expect(clocks(machine.answerHead(head(.serviceUnavailable))) == [.answer], "the rest of the answer is timed")
        #expect(!machine.acceptsBody(of: machine.exchange))
        let answerEnded = machine.answerEnded()
        let ended = try #require(result(answerEnded))
        #expect(ended.response?.status == 503 && !ended.reusable && !ended.bodySent)
    }

    @Test func anEarlyAnswerEndsTheConnectionAndTheBodyStops() throws {
        var machine = Machine()
        _ = machine.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: false, wantsInterim: false, at: t0)
        let exchange = machine.exchange
        _ = machine.partWritten(100, of: exchange, at: t0)
        _ = machine.answerHead(head(.payloadTooLarge))
        let answerEnded = machine.answerEnded()
        let ended = try #require(result(answerEnded))
        #expect(ended.response?.status == 413 && !ended.reusable && ended.bytesSent == 100)
        #expect(!machine.acceptsBody(of: exchange))
        #expect(machine.bodyEnded(of: exchange, failure: UploadFailure(.connectionLost, "x")).isEmpty)
    }

    @Test func theAnswerClockKeepsWhatArrivedOrSaysNoAnswer() throws {
        var machine = Machine()
        _ = machine.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0)
        let bodyEnded = machine.bodyEnded(of: machine.exchange, total: 10)
        let clock = try #require(token(bodyEnded))
        _ = machine.answerHead(head(.ok))
        _ = machine.answerBody(ByteBuffer(string: "par"))
        let ranOut = machine.clockRanOut(token: clock, at: t0 + .seconds(100))
        let cut = try #require(result(ranOut))
        #expect(cut.response?.status == 200 && cut.response?.cut?.hasSuffix("within the 3s answer timeout") == true && !cut.reusable)

        var silent = Machine()
        _ = silent.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0)
        let silentEnded = silent.bodyEnded(of: silent.exchange, total: 10)
        let silentToken = try #require(token(silentEnded))
        let silentRanOut = silent.clockRanOut(token: silentToken, at: t0 + .seconds(100))
        let none = try #require(result(silentRanOut))
        #expect(none.failure?.kind == .noAnswer)
    }

    /// A body that fails before an interim answer named its upload resource waits a moment for
    /// one (so the resource can be removed), then ends with its own failure.
    @Test func aFailedBodyIsHeldForAnInterimAnswerWhenOneIsWanted() throws {
        let changed = UploadFailure(.fileError, "the file changed while it was sent")
        var machine = Machine()
        _ = machine.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: false, wantsInterim: true, at: t0)
        let held = machine.bodyEnded(of: machine.exchange, failure: changed)
        #expect(clocks(held) == [.announcement] && result(held) == nil)
        #expect(machine.cancel().isEmpty, "held already")
        var resumption = HTTPResponseHead(version: .http1_1, status: .custom(code: 104, reasonPhrase: "Upload Resumption Supported"))
        resumption.headers.add(name: "Location", value: "/resumable/1")
        let named = machine.interim(resumption, at: t0)
        #expect(named.first.map { if case .reportInterim(let answer) = $0 { answer.status == 104 } else { false } } == true)
        #expect(result(named)?.failure == changed)

        // No interim answer within the wait: the failure as it was.
        var quiet = Machine()
        _ = quiet.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: false, wantsInterim: true, at: t0)
        let quietHeld = quiet.bodyEnded(of: quiet.exchange, failure: changed)
        let wait = try #require(token(quietHeld))
        let quietEnded = quiet.clockRanOut(token: wait, at: t0 + .seconds(100))
        #expect(result(quietEnded)?.failure == changed)

        // Not wanted: at once.
        var plain = Machine()
        _ = plain.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: false, wantsInterim: false, at: t0)
        #expect(result(plain.cancel())?.failure?.kind == .cancelled)
    }

    @Test func theConnectionEndingSaysWhatItCut() throws {
        // Part of an answer: what arrived, said to be cut.
        var answered = Machine()
        _ = answered.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0)
        _ = answered.bodyEnded(of: answered.exchange, total: 10)
        var partial = head(.created)
        partial.headers.add(name: "Content-Length", value: "100")
        _ = answered.answerHead(partial)
        let answeredEnded = answered.connectionEnded()
        let cut = try #require(result(answeredEnded))
        #expect(cut.response?.status == 201 && cut.response?.cut?.contains("closed the connection") == true)

        // An error first: classified.
        var reset = Machine()
        _ = reset.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0)
        #expect(reset.errorCaught(IOError(errnoCode: 104, reason: "read")) == [.close])
        #expect(result(reset.connectionEnded())?.failure?.kind == .connectionLost)

        // Nothing at all, during the body and after it.
        var during = Machine()
        _ = during.start(timeouts: timeouts, bodyInMemory: false, expectsContinue: false, wantsInterim: false, at: t0)
        #expect(result(during.connectionEnded())?.failure?.message == "the server closed the connection during the upload")
        var after = Machine()
        _ = after.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0)
        _ = after.bodyEnded(of: after.exchange, total: 1)
        #expect(result(after.connectionEnded())?.failure?.message == "the server closed the connection without answering")

        // Idle: nothing to end, and no request after.
        var idle = Machine()
        #expect(idle.connectionEnded() == [.stopClock])
        #expect(idle.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0) == nil)
    }

    @Test func bytesNobodyAskedForCloseAnIdleConnectionAndTheIdleClockClosesIt() throws {
        var machine = Machine()
        #expect(machine.answerHead(head(.ok)) == [.close])
        var parked = Machine()
        let parkedActions = parked.parked(expiringIn: .seconds(60))
        let idle = try #require(token(parkedActions))
        #expect(parked.clockRanOut(token: idle, at: t0 + .seconds(100)) == [.close])
        #expect(parked.state == .closed)
    }

    @Test func anAnswerWithoutKeepAliveIsNotReused() throws {
        var machine = Machine()
        _ = machine.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, at: t0)
        _ = machine.bodyEnded(of: machine.exchange, total: 1)
        _ = machine.answerHead(head(.ok, keepAlive: false))
        #expect(result(machine.answerEnded())?.reusable == false)
        #expect(machine.state == .closed)
    }

    @Test func aHeadThatCannotBeSentEndsTheExchangeAtOnce() throws {
        var machine = Machine()
        let refused = UploadFailure(.other, "the request header \"X\" cannot be sent")
        let started = machine.start(timeouts: timeouts, bodyInMemory: true, expectsContinue: false, wantsInterim: false, refusedHead: refused, at: t0)
        let actions = try #require(started)
        #expect(!actions.contains(.writeRequest))
        #expect(result(actions)?.failure == refused)
    }
}

/// The one stall rule, alone.
@Suite struct StallClockTests {
    let t0 = NIODeadline.uptimeNanoseconds(5_000_000_000)
    let limit = TimeAmount.seconds(2)

    @Test func aFileBodyStallsWithoutAWriteTakenAPacedOneOnlyWithAWriteWaiting() {
        var file = StallClock(idleCounts: true)
        #expect(file.deadline(limit) == nil, "not begun")
        file.began(at: t0)
        #expect(file.deadline(limit) == t0 + limit)
        file.writeStarted(at: t0 + .seconds(1))
        #expect(file.deadline(limit) == t0 + limit, "a write begun does not move it")
        file.writeEnded(at: t0 + .milliseconds(1500))
        #expect(!file.isStalled(at: t0 + .seconds(3), limit: limit))
        #expect(file.isStalled(at: t0 + .milliseconds(3500), limit: limit))
        file.end()
        #expect(file.deadline(limit) == nil && !file.isStalled(at: t0 + .seconds(99), limit: limit))
        file.writeEnded(at: t0 + .seconds(100))
        #expect(file.deadline(limit) == nil, "ended for good")

        var paced = StallClock(idleCounts: false)
        paced.began(at: t0)
        #expect(paced.deadline(limit) == nil)
        paced.writeStarted(at: t0 + .seconds(60))
        paced.writeStarted(at: t0 + .seconds(61))
        #expect(paced.deadline(limit) == t0 + .seconds(62), "from the first write still waiting")
        paced.writeEnded(at: t0 + .seconds(61))
        #expect(!paced.isStalled(at: t0 + .seconds(3600), limit: limit))
    }
}

/// AsyncHTTPClient's path: the watchdog asks the body's clock when its deadline comes, on the
/// event loop's clock (advanced by hand here).
@Suite struct StallWatchdogTests {
    final class Fired: @unchecked Sendable { var count = 0 }

    @Test func itFiresAtTheDeadlineTheWritesLeaveAndNotBefore() {
        let loop = EmbeddedEventLoop()
        let watch = WriteWatch(idleCounts: true)
        let fired = Fired()
        let watchdog = StallWatchdog(watch: watch, limit: .seconds(2), eventLoop: loop) { fired.count += 1 }
        watch.writeStarted(at: loop.now)
        loop.advanceTime(by: .milliseconds(1300))
        watch.writeEnded(at: loop.now)
        // The first check (2 s after it began) finds the deadline moved to 3.3 s.
        loop.advanceTime(by: .milliseconds(1999))
        #expect(fired.count == 0)
        loop.advanceTime(by: .milliseconds(1))
        #expect(fired.count == 1, "at 3.3 s, not at the next quarter of the limit (3.5 s)")
        watchdog.cancel()
    }

    @Test func aCancelledWatchdogNeverFires() {
        let loop = EmbeddedEventLoop()
        let watch = WriteWatch(idleCounts: true)
        let fired = Fired()
        let watchdog = StallWatchdog(watch: watch, limit: .seconds(1), eventLoop: loop) { fired.count += 1 }
        watch.writeStarted(at: loop.now)
        watchdog.cancel()
        loop.advanceTime(by: .seconds(10))
        #expect(fired.count == 0)
    }
}
