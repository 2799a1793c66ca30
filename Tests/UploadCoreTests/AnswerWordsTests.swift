import Testing
import UploadCore

/// One way to say an outcome and one rule for "is this body text", for every view.
@Suite struct AnswerWordsTests {
    func response(_ bytes: [UInt8], total: Int64? = nil) -> UploadResponse {
        UploadResponse(status: 200, reason: "OK", headers: [], body: bytes, bodyBytesTotal: total ?? Int64(bytes.count))
    }

    @Test func outcomesInWords() {
        #expect(UploadOutcome.answered(status: 201).words(reason: "Created") == "201 Created")
        #expect(UploadOutcome.answered(status: 413).words(reason: nil) == "413 Payload Too Large")
        #expect(
            UploadOutcome.failed(UploadFailure(.cannotConnect, "cannot connect: Connection refused", code: 111)).words(reason: "x")
                == "cannot connect: Connection refused (code 111)")
    }

    @Test func textIsTextAndAnythingElseIsBinary() {
        #expect(response(Array("{\"filename\": \"a.jpg\"}\r\n\tok".utf8)).textBody == "{\"filename\": \"a.jpg\"}\r\n\tok")
        #expect(response([0xFF, 0xD8, 0xFF, 0xE0]).textBody == nil, "not UTF-8")
        #expect(response(Array("\u{1B}[2Jgotcha".utf8)).textBody == nil, "a terminal escape is not text to print")
        #expect(response([0x61, 0x00, 0x62]).textBody == nil)
        #expect(response(Array("del\u{7F}".utf8)).textBody == nil)
    }

    @Test func aCharacterCutWhereTheKeptPartEndsIsStillText() {
        let whole = Array("写真.jpg".utf8)
        let cut = Array(whole.prefix(4))  // 写 and the first byte of 真
        #expect(response(cut, total: Int64(whole.count)).textBody == "写")
        #expect(response(cut).textBody == nil, "the same bytes as the whole body are not UTF-8")
    }
}
