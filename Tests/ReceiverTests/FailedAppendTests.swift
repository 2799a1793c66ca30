import Testing
@testable import Receiver

/// What becomes of a resumable upload when a request appending to it fails, decided without a store.
struct FailedAppendTests {
    struct CutStream: Error {}

    @Test func anInterruptedRequestKeepsEveryByteItBrought() {
        for error in [ConnectionInterruption.bodyStalled(.seconds(30)), .stopping, .superseded] as [any Error] + [CutStream()] {
            let failed = FailedAppend(error, start: 1000, received: 250)
            #expect(failed.fate == .keep(offset: 1250))
            #expect(!failed.bodyRead)
        }
        #expect(FailedAppend(ConnectionInterruption.superseded, start: 0, received: 1).refusal.status == .conflict)
        let cut = FailedAppend(CutStream(), start: 1000, received: 250)
        #expect(cut.refusal.status == .badRequest)
        #expect(cut.refusal.message.contains("at offset 1250"))
    }

    @Test func contentPastTheLengthOrShortOfItEndsTheUpload() {
        let past = FailedAppend(TransferFailure.beyondLength(900), start: 800, received: 100)
        #expect(past.fate == .remove)
        #expect(!past.bodyRead)
        #expect(past.refusal.message.contains("900"))
        let short = FailedAppend(TransferFailure.endedShort(850, 900), start: 800, received: 50)
        #expect(short.fate == .remove)
        #expect(short.bodyRead)
    }

    @Test func aBodyThatCannotBeAnUploadIsRemovedAndOneOverALimitKeepsWhatCameBeforeIt() {
        let notAnImage = FailedAppend(ReceiveError.notAnImage("text/plain"), start: 0, received: 10)
        #expect(notAnImage.fate == .remove)
        #expect(notAnImage.refusal.status == .unsupportedMediaType)
        let tooLarge = FailedAppend(TransferFailure.refused(Refusal(ReceiveError.tooLarge(100))), start: 40, received: 60)
        #expect(tooLarge.fate == .keep(offset: 100))
        #expect(tooLarge.refusal.status == .contentTooLarge)
    }

    @Test func contentThatDoesNotMatchItsDigestIsTakenBack() {
        let rejected = FailedAppend(TransferFailure.rejectedContent(Refusal(.badRequest, "Content-Digest does not match")), start: 300, received: 200)
        #expect(rejected.fate == .cutBack(to: 300))
        #expect(rejected.bodyRead)
        #expect(rejected.refusal.message == "Content-Digest does not match")
    }
}
