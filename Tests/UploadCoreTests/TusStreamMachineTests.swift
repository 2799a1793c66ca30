import Foundation
import Testing
import UploadCore
import UploadProtocols

/// tus for a stream of unknown length (standard input), input by input.
struct TusStreamMachineTests {
    static let deferring = TusCapabilities(
        options: UploadResponse(
            status: 204, reason: "No Content",
            headers: [("Tus-Resumable", "1.0.0"), ("Tus-Version", "1.0.0"), ("Tus-Extension", "creation,creation-defer-length,termination")],
            body: [], bodyBytesTotal: 0))!

    static func answer(_ status: Int, _ headers: [(String, String)] = []) -> AttemptResult {
        AttemptResult(
            outcome: .answered(status: status),
            response: UploadResponse(status: status, reason: HTTPStatus.reason(status), headers: headers, body: [], bodyBytesTotal: 0), bytesSent: 0)
    }
    static let cutOff = AttemptResult(outcome: .failed(UploadFailure(.connectionLost, "reset", code: 104)), response: nil, bytesSent: 100)

    func request(_ next: TusStreamMachine.Next) -> TusStreamMachine.Request? {
        if case .request(let request) = next { request } else { nil }
    }

    func started(chunk: Int64 = 1000) -> TusStreamMachine {
        var machine = TusStreamMachine(endpoint: Endpoint("http://h/files/")!, capabilities: Self.deferring, chunkSize: chunk)
        #expect(request(machine.start()) == .create)
        #expect(request(machine.created(Self.answer(201, [("Location", "/files/ab")]))) == .read(from: 0, upTo: 1000))
        return machine
    }

    @Test func aServerWithoutDeferredLengthsIsRefusedBeforeAnythingIsRead() {
        let plain = TusCapabilities.assumed
        var machine = TusStreamMachine(endpoint: Endpoint("http://h/files/")!, capabilities: plain)
        guard case .finish(let result) = machine.start(), case .failed(let failure) = result.outcome else {
            Issue.record("started")
            return
        }
        #expect(failure.message.contains("creation-defer-length") && failure.message.contains("save it to a file first"))
    }

    @Test func chunksGoAsTheStreamIsReadAndTheLastSaysTheLength() {
        var machine = started()
        #expect(request(machine.buffered(count: 1000, ended: false)) == .patch(uploadURL: "http://h/files/ab", from: 0, to: 1000, length: nil))
        #expect(request(machine.patched(Self.answer(204, [("Upload-Offset", "1000")]))) == .read(from: 1000, upTo: 1000))
        #expect(request(machine.buffered(count: 250, ended: true)) == .patch(uploadURL: "http://h/files/ab", from: 1000, to: 1250, length: 1250))
        guard case .finish(let result) = machine.patched(Self.answer(204, [("Upload-Offset", "1250")])) else {
            Issue.record("not finished")
            return
        }
        #expect(result.outcome == .answered(status: 204))
        #expect(result.response?.textBody == TusUploadMachine.completionNote(uploadURL: "http://h/files/ab", length: 1250))
    }

    @Test func aCutChunkContinuesFromTheServersOffsetWhileItsBytesAreAtHand() {
        var machine = started()
        _ = machine.buffered(count: 1000, ended: false)
        #expect(request(machine.patched(Self.cutOff)) == .head(uploadURL: "http://h/files/ab"))
        // The server kept 400 of the chunk: the other 600 go, from the buffer.
        #expect(
            request(machine.headed(Self.answer(200, [("Upload-Offset", "400")]))) == .patch(uploadURL: "http://h/files/ab", from: 400, to: 1000, length: nil))
        // A server that only took part of a chunk: the rest of it, again.
        #expect(
            request(machine.patched(Self.answer(204, [("Upload-Offset", "700")]))) == .patch(uploadURL: "http://h/files/ab", from: 700, to: 1000, length: nil))
        #expect(request(machine.patched(Self.answer(204, [("Upload-Offset", "1000")]))) == .read(from: 1000, upTo: 1000))
    }

    @Test func bytesNoLongerAtHandCannotBeSentAgain() {
        var machine = started()
        _ = machine.buffered(count: 1000, ended: false)
        _ = machine.patched(Self.answer(204, [("Upload-Offset", "1000")]))
        _ = machine.buffered(count: 1000, ended: false)
        _ = machine.patched(Self.cutOff)
        // The server says it has less than the chunk before this one: those bytes are gone.
        guard case .finish(let result) = machine.headed(Self.answer(200, [("Upload-Offset", "500")])),
            case .failed(let failure) = result.outcome
        else {
            Issue.record("went on")
            return
        }
        #expect(failure.message == "the server has 500 bytes of the upload, but only bytes 1000 to 2000 of standard input are still at hand")
    }

    @Test func anUploadTheServerLostEndsTheAttemptAndEndlessCutsToo() {
        var lost = started()
        _ = lost.buffered(count: 10, ended: true)
        guard case .finish(let gone) = lost.patched(Self.answer(404)), case .failed(let failure) = gone.outcome else {
            Issue.record("went on")
            return
        }
        #expect(failure.message.contains("cannot be read again"))

        var cut = started()
        _ = cut.buffered(count: 10, ended: true)
        var next = cut.patched(Self.cutOff)
        for _ in 0..<TusStreamMachine.cutsAllowed {
            #expect(request(next) == .head(uploadURL: "http://h/files/ab"))
            next = cut.headed(Self.cutOff)
        }
        guard case .finish(let result) = next else {
            Issue.record("cut forever")
            return
        }
        #expect(result.outcome == Self.cutOff.outcome)
    }
}
