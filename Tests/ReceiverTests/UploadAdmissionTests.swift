import HTTPTypes
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
        var extra: [String: String] = [:]

        var request: HTTPRequest {
            var request = HTTPRequest(method: method, scheme: nil, authority: "x", path: path)
            request.headerFields[.contentType] = contentType
            request.headerFields[.contentLength] = contentLength
            request.headerFields[.expect] = expect
            for (name, value) in extra { request.headerFields[HTTPField.Name(name)!] = value }
            return request
        }

        var testDescription: String {
            "\(method) \(path) \(contentType) length \(contentLength ?? "-") expect \(expect ?? "-") \(extra.sorted { $0.key < $1.key })"
        }
    }

    func decide(_ head: Head) -> UploadAdmission.Decision {
        UploadAdmission.decide(head.request, configuration: configuration)
    }

    @Test func anAcceptableHeadIsTakenAndSaysWhetherTheClientWaitsForContinue() {
        let plain = UploadAdmission.Route.upload(boundary: "abc", resumable: nil)
        #expect(decide(Head()) == .accept(plain, expectsContinue: false))
        #expect(decide(Head(expect: "100-Continue")) == .accept(plain, expectsContinue: true))
        #expect(decide(Head(path: "/photo?x=1")) == .accept(plain, expectsContinue: false))
        #expect(decide(Head(contentLength: "1000")) == .accept(plain, expectsContinue: false))
        // A value that is not a Structured Field Boolean is ignored, as the draft says.
        #expect(decide(Head(extra: ["Upload-Complete": "true"])) == .accept(plain, expectsContinue: false))
    }

    static let token = "0123456789abcdef0123456789abcdef"

    @Test func resumableRequestsAreRecognisedFromTheirFields() {
        func route(_ head: Head) -> UploadAdmission.Route? {
            if case .accept(let route, _) = decide(head) { return route }
            return nil
        }
        #expect(
            route(Head(contentLength: "400", extra: ["Upload-Complete": "?1", "Upload-Draft-Interop-Version": "8"]))
                == .upload(boundary: "abc", resumable: .init(complete: true, length: 400, version: 8)))
        #expect(
            route(Head(contentLength: "0", extra: ["Upload-Complete": "?0", "Upload-Length": "900", "Upload-Draft-Interop-Version": "6"]))
                == .upload(boundary: "abc", resumable: .init(complete: false, length: 900, version: 6)))
        // An interop version not spoken here gets no 104, but the request is still taken.
        #expect(
            route(Head(extra: ["Upload-Complete": "?0", "Upload-Draft-Interop-Version": "7"]))
                == .upload(boundary: "abc", resumable: .init(complete: false, length: nil, version: nil)))
        let resource = "/resumable/" + Self.token
        #expect(route(Head(method: .head, path: resource)) == .offset(token: Self.token, version: nil))
        #expect(route(Head(method: .delete, path: resource, extra: ["Upload-Draft-Interop-Version": "6"])) == .cancel(token: Self.token, version: 6))
        #expect(
            route(
                Head(
                    method: .patch, path: resource, contentType: "application/partial-upload", contentLength: "10",
                    extra: ["Upload-Offset": "90", "Upload-Complete": "?1"]))
                == .append(token: Self.token, .init(offset: 90, complete: true, length: 100, contentLength: 10, version: nil)))
        #expect(route(Head(method: .options, path: "/photo", extra: ["Upload-Draft-Interop-Version": "8"])) == .options(version: 8))
        #expect(route(Head(method: .options, path: "*")) == .options(version: nil))
    }

    static let resumableRefusals: [(Head, Int)] = [
        // Upload-Length and Content-Length disagree on a complete creation.
        (Head(contentLength: "10", extra: ["Upload-Complete": "?1", "Upload-Length": "11"]), 400),
        (Head(extra: ["Upload-Complete": "?0", "Upload-Length": "1001"]), 413),
        (Head(method: .patch, path: "/resumable/" + token, contentType: "application/partial-upload", extra: ["Upload-Complete": "?0"]), 400),
        (Head(method: .patch, path: "/resumable/" + token, contentType: "application/partial-upload", extra: ["Upload-Offset": "0"]), 400),
        (
            Head(
                method: .patch, path: "/resumable/" + token, contentType: "application/octet-stream",
                extra: ["Upload-Offset": "0", "Upload-Complete": "?0"]), 415
        ),
        (
            Head(
                method: .patch, path: "/resumable/" + token, contentType: "application/partial-upload", contentLength: "600",
                extra: ["Upload-Offset": "500", "Upload-Complete": "?0"]), 413
        ),
        (
            Head(
                method: .patch, path: "/resumable/" + token, contentType: "application/partial-upload", contentLength: "5",
                extra: ["Upload-Offset": "5", "Upload-Complete": "?1", "Upload-Length": "11"]), 400
        ),
        (Head(method: .head, path: "/resumable/" + token, extra: ["Upload-Draft-Interop-Version": "3"]), 400),
        (Head(method: .put, path: "/resumable/" + token), 405),
        (Head(method: .head, path: "/resumable/not-a-token"), 404),
    ]

    @Test(arguments: resumableRefusals)
    func resumableRefusalsNeedNoBody(head: Head, expected: Int) {
        guard case .refuse(let refusal) = decide(head) else {
            Issue.record("accepted")
            return
        }
        #expect(Int(refusal.status.code) == expected)
        if expected == 413 { #expect(refusal.fields["Upload-Limit"] == "max-size=1000") }
    }

    @Test func problemAnswersFollowRFC9457() {
        let refusal = Refusal(.mismatchingOffset, .conflict, "at 5, not 7", members: ["expected-offset": 5, "provided-offset": 7])
            .adding(["Upload-Offset": "5"])
        let (head, body) = refusal.answer(closing: false)
        #expect(head.status == .conflict)
        #expect(head.headerFields[.contentType] == "application/problem+json")
        #expect(head.headerFields[HTTPField.Name("Upload-Offset")!] == "5")
        #expect(
            String(buffer: body) == #"{"detail":"at 5, not 7","expected-offset":5,"provided-offset":7,"#
                + #""title":"offset from request does not match offset of resource","type":"https://iana.org/assignments/http-problem-types#mismatching-upload-offset"}"#
        )
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
        if case .refuse(let refusal) = decide(Head(method: .get)) {
            #expect(refusal.answer(closing: true).head.headerFields[.allow] == "POST, OPTIONS")
        }
        #expect(head.headerFields[.connection] == "close")
        #expect(head.headerFields[.contentLength] == String(body.readableBytes))
        #expect(String(buffer: body) == #"{"error":"GET is not allowed here; use POST"}"#)
        #expect(Refusal(.serviceUnavailable, "full").answer(closing: false).head.headerFields[.retryAfter] == "1")
    }
}
