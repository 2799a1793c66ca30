import Monitor
import Testing

/// When the monitor draws, ticks and sleeps.
@Suite struct FramePacerTests {
    @Test func atMostThirtyFramesASecondAndOnlyWhenSomethingChanged() {
        var pacer = FramePacer()
        do { let result = pacer.drawNow(at: 0); #expect(result, "the first frame at once") }
        do { let result = pacer.drawNow(at: 0.001); #expect(!result, "nothing changed") }
        #expect(pacer.sleep(at: 0.001, uploadsActive: false) == nil, "idle and drawn: wait for input alone")
        pacer.changed()
        do { let result = pacer.drawNow(at: 0.01); #expect(!result, "too soon after the last frame") }
        let wait = pacer.sleep(at: 0.01, uploadsActive: false)
        #expect(wait.map { abs($0 - (1.0 / 30 - 0.01)) < 1e-9 } == true, "sleep until the frame may be drawn: \(String(describing: wait))")
        do { let result = pacer.drawNow(at: 1.0 / 30); #expect(result) }
        // A burst of changes inside one frame's time makes one frame.
        var frames = 0
        for step in 1...300 {
            pacer.changed()
            if pacer.drawNow(at: 1.0 / 30 + Double(step) * 0.001) { frames += 1 }
        }
        #expect((8...9).contains(frames), "0.3 s of changes in 1 ms steps at ≤ 30 frames a second: \(frames)")
    }

    @Test func ticksOnlyWhileUploadsRun() {
        var pacer = FramePacer()
        _ = pacer.drawNow(at: 0)
        do { let result = pacer.tickNow(at: 10, uploadsActive: false); #expect(!result) }
        #expect(pacer.sleep(at: 10, uploadsActive: false) == nil)
        do { let result = pacer.tickNow(at: 10, uploadsActive: true); #expect(result) }
        do { let result = pacer.tickNow(at: 10.2, uploadsActive: true); #expect(!result) }
        #expect(pacer.sleep(at: 10.2, uploadsActive: true).map { abs($0 - 0.3) < 1e-9 } == true)
        do { let result = pacer.tickNow(at: 10.5, uploadsActive: true); #expect(result) }
    }
}
