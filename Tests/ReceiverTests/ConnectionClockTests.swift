import NIOCore
import Testing
@testable import Receiver

/// The connection's clocks, driven with made-up instants.
struct ConnectionClockTests {
    let limits = ConnectionClock.Limits(header: .seconds(10), idle: .seconds(60), bodyStall: .seconds(30), lingerTime: .seconds(1), lingerBytes: 100)

    func at(_ seconds: Double) -> NIODeadline { .uptimeNanoseconds(UInt64(1_000_000_000 + seconds * 1e9)) }

    @Test func aFreshConnectionThatSendsNothingEndsQuietlyAtTheHeaderTimeout() {
        let clock = ConnectionClock(limits: limits, openedAt: at(0))
        #expect(clock.expired(at: at(9.9)) == nil)
        #expect(clock.expired(at: at(10)) == .idle)
    }

    @Test func aTrickledHeadCannotPushItsDeadline() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.bytesArrived(1, at: at(2))
        for second in 3..<12 { clock.bytesArrived(1, at: at(Double(second))) }
        #expect(clock.expired(at: at(11.9)) == nil)
        #expect(clock.expired(at: at(12)) == .headerIncomplete)
    }

    @Test func aBodyStallCountsOnlyWhileTheReceiverAsksForData() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.bytesArrived(500, at: at(1))
        clock.headReceived(at: at(1))
        #expect(clock.expired(at: at(30.9)) == nil)
        #expect(clock.expired(at: at(31)) == .bodyStalled)
        // Bytes came; the receiver holds reads back (its disk is slow): no clock runs.
        clock.bytesArrived(1 << 19, at: at(20))
        #expect(clock.deadline == nil)
        #expect(clock.expired(at: at(500)) == nil)
        // It asks again; the client has 30 s from then.
        clock.readRequested(at: at(500))
        clock.readRequested(at: at(510))
        #expect(clock.expired(at: at(529.9)) == nil)
        #expect(clock.expired(at: at(530)) == .bodyStalled)
    }

    @Test func noClockRunsWhileTheAnswerIsPreparedThenTheIdleTimeout() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.bytesArrived(100, at: at(0))
        clock.headReceived(at: at(0))
        clock.requestEnded(at: at(1))
        #expect(clock.deadline == nil)
        clock.answerEnded(at: at(100))
        #expect(clock.expired(at: at(159.9)) == nil)
        #expect(clock.expired(at: at(160)) == .idle)
        // The next request's first byte starts its header clock.
        clock.bytesArrived(1, at: at(150))
        #expect(clock.expired(at: at(160)) == .headerIncomplete)
    }

    @Test func anAnswerBeforeTheBodyEndedWaitsForTheBodyThenIdles() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.headReceived(at: at(0))
        clock.answerEnded(at: at(1))
        #expect(clock.deadline?.expiry == .bodyStalled)
        clock.requestEnded(at: at(2))
        #expect(clock.deadline?.expiry == .idle)
    }

    @Test func aPipelinedRequestKeepsTheConnectionAnsweringUntilEveryAnswerIsWritten() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.headReceived(at: at(0))
        clock.requestEnded(at: at(0))
        clock.headReceived(at: at(0))
        clock.requestEnded(at: at(0))
        #expect(clock.unanswered == 2)
        clock.answerEnded(at: at(1))
        #expect(clock.deadline == nil)
        clock.answerEnded(at: at(2))
        #expect(clock.deadline?.expiry == .idle)
    }

    @Test func lingeringEndsByTimeOrByBytes() {
        var clock = ConnectionClock(limits: limits, openedAt: at(0))
        clock.headReceived(at: at(0))
        clock.startLingering(at: at(0))
        clock.bytesArrived(60, at: at(0.1))
        #expect(clock.expired(at: at(0.5)) == nil)
        #expect(clock.expired(at: at(1)) == .lingerOver)
        clock.bytesArrived(60, at: at(0.2))
        #expect(clock.expired(at: at(0.2)) == .lingerOver)
        // Nothing moves it out of lingering.
        clock.headReceived(at: at(0.3))
        clock.answerEnded(at: at(0.3))
        #expect(clock.isLingering)
    }
}
