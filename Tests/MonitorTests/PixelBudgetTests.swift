import Monitor
import Testing

/// When a link is too slow even for light pictures in pixels, and when they are tried again.
@Suite struct PixelBudgetTests {
    @Test func aPictureThatCrossesQuicklyKeepsPixels() {
        var budget = PixelBudget()
        // 37 KB of sixel answered 0.4 s after it went, on a 0.1 s round trip: 123 KB/s; a light
        // one (9 KB) would take 0.075 s.
        budget.sent(bytes: 37_000, lightBytes: 9_250, at: 10)
        budget.answered(through: 10, roundTrip: 0.1, at: 10.4)
        #expect(budget.allowsPixels)
    }

    @Test func aLinkTooSlowForALightPictureGetsCellsUntilItIsTriedAgain() {
        var budget = PixelBudget()
        // The same picture answered 2.1 s after it went (150 kbit/s): lightly 0.5 s.
        budget.sent(bytes: 37_000, lightBytes: 9_250, at: 10)
        budget.answered(through: 10, roundTrip: 0.1, at: 12.1)
        #expect(!budget.allowsPixels)
        #expect(budget.measuredRate.map { abs($0 - 18_500) < 1 } ?? false)
        budget.observe(at: 42.0)
        #expect(!budget.allowsPixels)
        budget.observe(at: 42.11)
        #expect(budget.allowsPixels, "tried again after retryAfter")
        // Still too slow: off twice as long, then four times; a picture that crosses in time
        // ends the backing off.
        budget.sent(bytes: 37_000, lightBytes: 9_250, at: 50)
        budget.answered(through: 50, roundTrip: 0.1, at: 52.1)
        budget.observe(at: 52.1 + 59)
        #expect(!budget.allowsPixels && budget.failures == 2)
        budget.observe(at: 52.1 + 60.01)
        #expect(budget.allowsPixels)
        budget.sent(bytes: 37_000, lightBytes: 9_250, at: 120)
        budget.answered(through: 120, roundTrip: 0.1, at: 122.1)
        budget.observe(at: 122.1 + 119)
        #expect(!budget.allowsPixels)
        budget.observe(at: 122.1 + 120.01)
        #expect(budget.allowsPixels && budget.failures == 3)
        budget.sent(bytes: 37_000, lightBytes: 9_250, at: 300)
        budget.answered(through: 300, roundTrip: 0.1, at: 300.4)
        #expect(budget.allowsPixels && budget.failures == 0)
    }

    @Test func onlyTheAnswerToThePicturesOwnFrameCounts() {
        var budget = PixelBudget()
        // Frames before the picture's are answered first (answers come in order): they say
        // nothing of it, however slow.
        budget.sent(bytes: 37_000, lightBytes: 9_250, at: 5)
        budget.answered(through: 4.9, roundTrip: 0.1, at: 9)
        #expect(budget.allowsPixels)
        // Its own (or a later frame's, answered with it) is measured from when it went.
        budget.answered(through: 5.2, roundTrip: 0.1, at: 7.1)
        #expect(!budget.allowsPixels, "2 s for 37 KB")

        var once = PixelBudget()
        once.sent(bytes: 10_000, lightBytes: 10_000, at: 1)
        once.answered(through: 1, roundTrip: 0.1, at: 1.2)
        once.answered(through: 3, roundTrip: 0.1, at: 9)
        #expect(once.allowsPixels, "a picture is measured once")
    }

    @Test func withoutAQuickerAnswerTheWholeDelayCounts() {
        // The first picture often goes before the first answer: the round trip is not known apart.
        var budget = PixelBudget()
        budget.sent(bytes: 20_000, lightBytes: 5_000, at: 0)
        budget.answered(through: 0, roundTrip: 0.5, at: 0.5)
        #expect(budget.allowsPixels)
        budget.sent(bytes: 20_000, lightBytes: 5_000, at: 1)
        budget.answered(through: 1, roundTrip: 2, at: 3)
        #expect(!budget.allowsPixels, "5 KB at 10 KB/s")
    }

    @Test func aLightPictureMeasuresItself() {
        var budget = PixelBudget()
        // Already light: 9 KB taking 0.45 s beyond the round trip is over the limit as it is.
        budget.sent(bytes: 9_000, lightBytes: 9_000, at: 5)
        budget.answered(through: 5, roundTrip: 0.1, at: 5.55)
        #expect(!budget.allowsPixels)
    }
}
