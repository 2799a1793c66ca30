import Testing
import UploadCore

/// Which refusals `send` and the monitor take as "not this format" (and which they do not).
struct FormatRefusalTests {
    func answer(_ status: Int, accept: String? = nil, _ body: String = "") -> UploadResponse {
        UploadResponse(
            status: status, reason: "", headers: accept.map { [("Accept", $0)] } ?? [], body: Array(body.utf8),
            bodyBytesTotal: Int64(body.utf8.count))
    }

    @Test func a415ForAPhotoConversionCanAnswerAsksForJPEG() {
        #expect(FormatRefusal.wanted(name: "IMG_1.HEIC", response: answer(415), conversion: nil) == .jpeg)
        #expect(FormatRefusal.wanted(name: "a.avif", response: answer(415, accept: "image/jpeg, image/png"), conversion: nil) == .jpeg)
        #expect(FormatRefusal.wanted(name: "shot.png", response: answer(415, accept: "image/webp"), conversion: nil) == .webp)
        // Already written as JPEG, or not a photo conversion serves: nothing to offer.
        #expect(FormatRefusal.wanted(name: "IMG_1.HEIC", response: answer(415), conversion: PhotoConversion(format: .jpeg)) == nil)
        #expect(FormatRefusal.wanted(name: "a.jpg", response: answer(415), conversion: nil) == nil)
        #expect(FormatRefusal.wanted(name: "anim.gif", response: answer(415), conversion: nil) == nil)
        #expect(FormatRefusal.wanted(name: "notes.txt", response: answer(415), conversion: nil) == nil)
    }

    @Test func otherRefusalsCountOnlyWhenTheyNameTheFormat() {
        #expect(FormatRefusal.wanted(name: "a.heic", response: answer(422, #"{"error":"only JPG files"}"#), conversion: nil) == .jpeg)
        #expect(FormatRefusal.wanted(name: "a.webp", response: answer(400, "Unsupported file format"), conversion: nil) == .jpeg)
        #expect(FormatRefusal.wanted(name: "a.heic", response: answer(400, "missing field photo"), conversion: nil) == nil)
        #expect(FormatRefusal.wanted(name: "a.heic", response: answer(413, "too large, send a jpeg"), conversion: nil) == nil)
        #expect(FormatRefusal.wanted(name: "a.heic", response: answer(500, "jpeg"), conversion: nil) == nil)
    }
}
