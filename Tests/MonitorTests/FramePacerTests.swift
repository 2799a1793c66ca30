import Monitor
import TerminalCanvas
import Testing
import UploadCore
import Foundation

/// When the monitor draws, ticks and sleeps.
@Suite struct FramePacerTests {
    @Test func atMostThirtyFramesASecondAndOnlyWhenSomethingChanged() {
        var pacer = FramePacer()
        do {
            let result = pacer.drawNow(at: 0)
            #expect(result, "the first frame at once")
        }
        do {
            let result = pacer.drawNow(at: 0.001)
            #expect(!result, "nothing changed")
        }
        #expect(pacer.sleep(at: 0.001, uploadsActive: false) == nil, "idle and drawn: wait for input alone")
        pacer.changed(urgent: true)
        do {
            let result = pacer.drawNow(at: 0.01)
            #expect(!result, "too soon after the last frame")
        }
        let wait = pacer.sleep(at: 0.01, uploadsActive: false)
        #expect(wait.map { abs($0 - (1.0 / 30 - 0.01)) < 1e-9 } == true, "sleep until the frame may be drawn: \(String(describing: wait))")
        do {
            let result = pacer.drawNow(at: 1.0 / 30)
            #expect(result)
        }
        // A burst of changes inside one frame's time makes one frame.
        var frames = 0
        for step in 1...300 {
            pacer.changed(urgent: true)
            if pacer.drawNow(at: 1.0 / 30 + Double(step) * 0.001) { frames += 1 }
        }
        #expect((8...9).contains(frames), "0.3 s of keys in 1 ms steps at ≤ 30 frames a second: \(frames)")
    }

    /// What only the uploads changed is drawn at the background rate; a key among it is drawn
    /// at the user's rate at once.
    @Test func theUploadsAloneAreDrawnAtTwelveFramesASecondAndAKeyAtOnce() {
        var pacer = FramePacer()
        _ = pacer.drawNow(at: 0)
        var frames = 0
        for step in 1...1000 {
            pacer.changed()
            if pacer.drawNow(at: Double(step) * 0.001) { frames += 1 }
        }
        #expect((11...12).contains(frames), "1 s of upload events in 1 ms steps: \(frames) frames")
        // Just after a background frame: an upload event waits its twelfth of a second…
        let last = pacer.lastFrame
        pacer.changed()
        do {
            let result = pacer.drawNow(at: last + 0.04)
            #expect(!result)
        }
        #expect(pacer.sleep(at: last + 0.04, uploadsActive: false).map { abs($0 - (1.0 / 12 - 0.04)) < 1e-9 } == true)
        // …a key does not: a thirtieth after the last frame is enough.
        pacer.changed(urgent: true)
        #expect(pacer.sleep(at: last + 0.04, uploadsActive: false) == 0)
        do {
            let result = pacer.drawNow(at: last + 0.04)
            #expect(result)
        }
        #expect(!pacer.urgent, "drawn: what comes next is background again")
        #expect(MonitorEvent.key(.character("j"), EventTime(seconds: 0, clock: "", date: .init(timeIntervalSince1970: 0))).isTheUsers)
        #expect(!MonitorEvent.tick(EventTime(seconds: 0, clock: "", date: .init(timeIntervalSince1970: 0))).isTheUsers)
    }

    @Test func ticksOnlyWhileUploadsRun() {
        var pacer = FramePacer()
        _ = pacer.drawNow(at: 0)
        do {
            let result = pacer.tickNow(at: 10, uploadsActive: false)
            #expect(!result)
        }
        #expect(pacer.sleep(at: 10, uploadsActive: false) == nil)
        do {
            let result = pacer.tickNow(at: 10, uploadsActive: true)
            #expect(result)
        }
        do {
            let result = pacer.tickNow(at: 10.2, uploadsActive: true)
            #expect(!result)
        }
        #expect(pacer.sleep(at: 10.2, uploadsActive: true).map { abs($0 - 0.3) < 1e-9 } == true)
        do {
            let result = pacer.tickNow(at: 10.5, uploadsActive: true)
            #expect(result)
        }
    }
}

/// The screen keeps up with the keyboard on a slow link: a frame waits until the terminal has
/// shown the last one (its answer to the question sent after it), and what changed meanwhile
/// goes out as one frame.
/// `drawNow` as a free function: `#expect` cannot call a mutating method.
private func draws(_ pacer: inout FramePacer, at t: Double) -> Bool { pacer.drawNow(at: t) }

@Suite struct FramePacerFlowTests {
    @Test func aFrameWaitsForTheLastOnesAnswerAndThenCarriesEverythingThatChanged() {
        var pacer = FramePacer()
        #expect(draws(&pacer, at: 0))
        pacer.sent(at: 0, asked: true)
        pacer.answered(1, at: 0.3)
        #expect(pacer.answering == .yes)
        pacer.changed(urgent: true)
        #expect(draws(&pacer, at: 0.3))
        pacer.sent(at: 0.3, asked: true)
        // A held key on a link where the answer takes 0.4 s: 12 changes, no frame.
        var frames = 0
        for step in 1...12 {
            pacer.changed(urgent: true)
            if pacer.drawNow(at: 0.3 + Double(step) / 30) { frames += 1 }
        }
        #expect(frames == 0, "nothing drawn while the terminal has not shown the last frame")
        #expect(pacer.sleep(at: 0.7, uploadsActive: false).map { $0 > 0 } == true, "the loop waits for the answer (or the patience)")
        pacer.answered(1, at: 0.71)
        #expect(pacer.lastAnswerDelay.map { abs($0 - 0.41) < 1e-9 } == true)
        #expect(draws(&pacer, at: 0.71), "one frame with all twelve changes")
        #expect(!draws(&pacer, at: 0.8), "and nothing more owed")
    }

    @Test func untilTheTerminalHasAnsweredOnceNothingWaits() {
        var pacer = FramePacer()
        #expect(draws(&pacer, at: 0))
        pacer.sent(at: 0, asked: true)
        pacer.changed(urgent: true)
        #expect(draws(&pacer, at: 1.0 / 30), "an answer not yet known to come is not waited for")
    }

    @Test func onAFastLinkFramesComeAsBefore() {
        var pacer = FramePacer()
        var frames = 0
        var t = 0.0
        for _ in 0..<90 {
            pacer.changed(urgent: true)
            if pacer.drawNow(at: t) {
                frames += 1
                pacer.sent(at: t, asked: true)
                pacer.answered(1, at: t + 0.001)
            }
            t += 1.0 / 30 + 0.0001
        }
        #expect(frames == 90, "every change at 30 a second is drawn when answers take a millisecond: \(frames)")
    }

    @Test func aLostAnswerHoldsTheScreenForThePatienceOnly() {
        var pacer = FramePacer()
        _ = pacer.drawNow(at: 0)
        pacer.sent(at: 0, asked: true)
        pacer.answered(1, at: 0.01)
        _ = pacer.drawNow(at: 0)  // nothing owed
        pacer.changed(urgent: true)
        #expect(draws(&pacer, at: 0.1))
        pacer.sent(at: 0.1, asked: true)
        pacer.changed(urgent: true)
        #expect(!draws(&pacer, at: 0.1 + pacer.patience - 0.01))
        let wait = pacer.sleep(at: 1, uploadsActive: false)
        #expect(wait.map { abs($0 - (0.1 + pacer.patience - 1)) < 1e-9 } == true, "wakes when the patience ends: \(String(describing: wait))")
        #expect(draws(&pacer, at: 0.1 + pacer.patience))
    }

    @Test func aTerminalThatNeverAnswersIsNotAskedAgainAndNeverSlowed() {
        var pacer = FramePacer()
        var t = 0.0
        var frames = 0
        while t < 10 {
            pacer.observe(at: t)
            pacer.changed(urgent: true)
            if pacer.drawNow(at: t) {
                frames += 1
                pacer.sent(at: t, asked: pacer.asks)
            }
            t += 1.0 / 30 + 0.0001
        }
        #expect(pacer.answering == .no)
        #expect(!pacer.asks)
        // Never waiting for an answer that does not come: 30 a second throughout.
        #expect(frames >= 299, "\(frames) frames in 10 s")
        // An answer that comes after all (a very slow link) puts the questions back.
        pacer.answered(1, at: t)
        #expect(pacer.answering == .yes && pacer.asks)
    }

    @Test func aTerminalThatCannotBeAskedIsPacedAsBefore() {
        var pacer = FramePacer()
        #expect(draws(&pacer, at: 0))
        pacer.sent(at: 0, asked: false)
        pacer.changed(urgent: true)
        #expect(draws(&pacer, at: 1.0 / 30))
        #expect(pacer.sleep(at: 1, uploadsActive: false) == nil)
    }
}

/// Pictures go out in fewer bytes while the link takes long to carry a frame beyond its round
/// trip, and in full colour again once it no longer does.
@Suite struct SlowLinkTests {
    static func answer(_ pacer: inout FramePacer, at t: Double, after delay: Double) {
        pacer.changed()
        _ = pacer.drawNow(at: t)
        pacer.sent(at: t, asked: true)
        pacer.answered(1, at: t + delay)
    }

    @Test func aLongRoundTripAloneIsNotSlowButAFrameThatTakesLongerIs() {
        var pacer = FramePacer()
        // 250 ms away but fast: every frame takes the round trip.
        for i in 0..<20 { Self.answer(&pacer, at: Double(i), after: 0.25) }
        #expect(!pacer.slowLink)
        // A picture that takes 0.13 s more than the round trip: 1 Mbit/s.
        Self.answer(&pacer, at: 30, after: 0.38)
        #expect(pacer.slowLink)
        // Lighter pictures (0.06 s beyond) among small frames keep it slow.
        for i in 0..<40 { Self.answer(&pacer, at: 31 + Double(i), after: i % 5 == 0 ? 0.31 : 0.25) }
        #expect(pacer.slowLink)
        // Once no recent frame takes longer than the round trip, it is fast again.
        for i in 0..<40 { Self.answer(&pacer, at: 80 + Double(i), after: 0.251) }
        #expect(!pacer.slowLink)
    }

    @Test func aSlowMomentIsForgottenOnceTheLinkHasBeenQuietAWhile() {
        var pacer = FramePacer()
        for i in 0..<5 { Self.answer(&pacer, at: Double(i) * 0.1, after: 0.001) }
        // One frame held up on a busy machine: slow, and nothing is drawn after it.
        Self.answer(&pacer, at: 1, after: 0.2)
        #expect(pacer.slowLink)
        pacer.observe(at: 1.2 + pacer.linkMemory - 0.1)
        #expect(pacer.slowLink)
        // The idle loop wakes when the judgement runs out, not never.
        let wake = pacer.sleep(at: 2, uploadsActive: false)
        #expect(wake.map { abs($0 - (1.2 + pacer.linkMemory - 2)) < 1e-9 } == true, "\(String(describing: wake))")
        pacer.observe(at: 1.2 + pacer.linkMemory)
        #expect(!pacer.slowLink)
        #expect(pacer.sleep(at: 1.2 + pacer.linkMemory, uploadsActive: false) == nil)
        // Measured afresh: a slow link shows itself again at once.
        Self.answer(&pacer, at: 10, after: 0.001)
        Self.answer(&pacer, at: 11, after: 0.2)
        #expect(pacer.slowLink)
    }
}
