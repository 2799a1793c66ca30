import Hummingbird
import Testing
@testable import Receiver

/// What the receiver decides from a head alone, without a connection.
struct UploadAdmissionTests {
    let configuration = ReceiverConfiguration(path: "/photo", maxSize: 1000)

    struct Head: Sendable, CustomTestStringConvertible {
        var method: HTTPRequest.Method = .post
        var path = "/photo"
        var contentType = "multipart/form-data; boundary=abc"
        var contentLength: String?
        var expect: String?

        var request: HTTPRequest {
            var request = HTTPRequest(method: method, scheme: nil, authority: "x", path: path)
            request.headerFields[.contentType] = contentType
            request.headerFields[.contentLength] = contentLength
            request.headerFields[.expect] = expect
            return request
        }

        var testDescription: String { "\(method) \(path) \(contentType) length \(contentLength ?? "-") expect \(expect ?? "-")" }
    }

    func decide(_ head: Head) -> UploadAdmission.Decision {
        UploadAdmission.decide(head.request, configuration: configuration)
    }

    @Test func anAcceptableHeadIsTakenAndSaysWhetherTheClientWaitsForContinue() {
        #expect(decide(Head()) == .accept(boundary: "abc", expectsContinue: false))
        #expect(decide(Head(expect: "100-Continue")) == .accept(boundary: "abc", expectsContinue: true))
        #expect(decide(Head(path: "/photo?x=1")) == .accept(boundary: "abc", expectsContinue: false))
        #expect(decide(Head(contentLength: "1000")) == .accept(boundary: "abc", expectsContinue: false))
    }

    static let refused: [(Head, Int)] = [
        (Head(path: "/other"), 404),
        (Head(method: .get), 405),
        (Head(method: .put, expect: "100-continue"), 405),
        (Head(contentType: "application/json"), 415),
        (Head(contentType: "multipart/form-data"), 400),
        (Head(contentLength: "1001"), 413),
        (Head(contentLength: "1001", expect: "100-continue"), 413),
        (Head(expect: "tea"), 417),
        (Head(path: "/other", expect: "tea"), 417),
    ]

    @Test(arguments: refused)
    func refusalsNeedNoBody(head: Head, expected: Int) {
        guard case .refuse(let refusal) = decide(head) else {
            Issue.record("accepted")
            return
        }
        #expect(Int(refusal.status.code) == expected)
    }

    @Test func refusalAnswersAreJSONAndCloseTheConnection() {
        let (head, body) = Refusal(.methodNotAllowed, "GET is not allowed here; use POST").answer(closing: true)
        #expect(head.status == .methodNotAllowed)
        #expect(head.headerFields[.allow] == "POST")
        #expect(head.headerFields[.connection] == "close")
        #expect(head.headerFields[.contentLength] == String(body.readableBytes))
        #expect(String(buffer: body) == #"{"error":"GET is not allowed here; use POST"}"#)
        #expect(Refusal(.serviceUnavailable, "full").answer(closing: false).head.headerFields[.retryAfter] == "1")
    }
}
