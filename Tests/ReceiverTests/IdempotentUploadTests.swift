import Testing
@testable import Receiver

/// The steps of an upload under an Idempotency-Key, decided without a body or a folder.
struct IdempotentUploadTests {
    let answer = IdempotencyKeys.Answer(status: 200, body: #"{"filename":"cat.png"}"#)

    @Test func aNewKeyIsReceivedAndOneInProgressOrForAnotherLengthIsRefused() {
        #expect(IdempotentUpload.start(.new, directory: "/d", exists: { _ in true }) == .receive)
        guard case .refuse(let busy) = IdempotentUpload.start(.inProgress, directory: "/d", exists: { _ in true }) else {
            Issue.record("a key in progress is refused")
            return
        }
        #expect(busy.status == .conflict)
        guard case .refuse(let other) = IdempotentUpload.start(.otherBody, directory: "/d", exists: { _ in true }) else {
            Issue.record("a key used for another length is refused")
            return
        }
        #expect(other.status == .unprocessableContent)
    }

    @Test func aCompletedKeyIsComparedWithItsStoredFileOrForgottenWhenTheFileIsGone() {
        var asked: [String] = []
        let found = IdempotentUpload.start(
            .completed(answer, stored: "cat.png"), directory: "/d",
            exists: {
                asked.append($0)
                return true
            })
        #expect(found == .compare(path: "/d/cat.png", answer: answer))
        #expect(asked == ["/d/cat.png"])
        #expect(IdempotentUpload.start(.completed(answer, stored: "cat.png"), directory: "/d", exists: { _ in false }) == .forgetAndRetake)
        // Taken again: only another request holding it now stops this one.
        #expect(IdempotentUpload.retaken(.new) == nil)
        #expect(IdempotentUpload.retaken(.inProgress)?.status == .conflict)
    }

    @Test func theSameFileGetsTheAnswerAgainAndAnotherIsRefused() {
        #expect(IdempotentUpload.compared(sameFile: true, answer: answer) == .success(answer))
        guard case .failure(let refusal) = IdempotentUpload.compared(sameFile: false, answer: answer) else {
            Issue.record("another file under the key is refused")
            return
        }
        #expect(refusal.status == .unprocessableContent)
    }

    @Test func theKeyKeepsTheAnswerToAWholeBodyAndIsFreedByOneCutShort() {
        let stored = IdempotentUpload.kept(.success("cat-2.png"), bodyRead: true)
        #expect(stored.answer == .init(status: 200, body: #"{"filename":"cat-2.png"}"#))
        #expect(stored.stored == "cat-2.png")
        let refused = IdempotentUpload.kept(.failure(Refusal(.unsupportedMediaType, "not an image")), bodyRead: true)
        #expect(refused.answer?.status == 415)
        #expect(refused.answer?.body.contains("not an image") == true)
        #expect(refused.stored == nil)
        let cut = IdempotentUpload.kept(.failure(Refusal(.badRequest, "the upload was interrupted")), bodyRead: false)
        #expect(cut.answer == nil)
    }
}
