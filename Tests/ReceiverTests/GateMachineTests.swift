import Foundation
import HTTPTypes
import NIOCore
import Testing
@testable import Receiver

/// The gate's decisions, driven as values: heads, parts, bytes, answers and timers go in with
/// made-up instants, actions come out. No channel, no store.
struct GateMachineTests {
    static let token = "0123456789abcdef0123456789abcdef"
    let configuration: ReceiverConfiguration = {
        var configuration = ReceiverConfiguration(path: "/photo", maxSize: 1000)
        configuration.limits = .init(headerTimeout: .seconds(10), idleTimeout: .seconds(60), bodyStallTimeout: .seconds(30))
        return configuration
    }()

    /// The stores' answers, made up.
    struct Verdicts: GateVerdicts {
        var uploads: [String: ResumableStore.Snapshot] = [:]
        var keys: [String: IdempotencyKeys.Lookup] = [:]

        func upload(_ token: String) -> ResumableStore.Snapshot? { uploads[token] }
        func idempotency(_ key: String, client: String, length: Int64?) -> IdempotencyKeys.Lookup { keys[key + " " + client] ?? .new }
    }

    func at(_ seconds: Double) -> NIODeadline { .uptimeNanoseconds(UInt64(1_000_000_000 + seconds * 1e9)) }

    func machine(_ admission: ConnectionRegistry.Admission = .admitted, client: String = "10.0.0.7") -> (GateMachine, GateMachine.Action) {
        var machine = GateMachine(configuration: configuration, openedAt: at(0))
        let action = machine.started(admission, client: client, now: at(0))
        return (machine, action)
    }

    func head(_ method: HTTPRequest.Method = .post, _ path: String = "/photo", _ fields: [String: String] = [:]) -> HTTPRequest {
        var request = HTTPRequest(method: method, scheme: nil, authority: "x", path: path)
        request.headerFields[.contentType] = "multipart/form-data; boundary=abc"
        for (name, value) in fields { request.headerFields[HTTPField.Name(name)!] = value }
        return request
    }

    /// The answer an action writes, or nil.
    func answer(_ action: GateMachine.Action) -> (status: Int, closes: Bool, log: RequestLogLine?)? {
        guard case .answer(let head, _, let log) = action else { return nil }
        return (Int(head.status.code), head.headerFields[.connection] == "close", log)
    }

    func forwarded(_ action: GateMachine.Action) -> (HTTPRequest, sendContinue: Bool, announce: GateMachine.Announcement?)? {
        guard case .forwardHead(let head, let sendContinue, let announce) = action else { return nil }
        return (head, sendContinue, announce)
    }

    @Test func anAcceptableHeadGoesOnAndItsBodyFollowsIt() {
        var (gate, start) = machine()
        guard case .none = start else {
            Issue.record("an admitted connection is not answered")
            return
        }
        let action = gate.head(head(), now: at(1), verdicts: Verdicts())
        #expect(forwarded(action)?.sendContinue == false)
        #expect(forwarded(action)?.announce == nil)
        guard case .forward = gate.bodyPart(), case .forward = gate.requestEnded(now: at(2)) else {
            Issue.record("the body of an accepted request is passed on")
            return
        }
        // While the responder works nothing runs out; once it has answered, the idle clock runs.
        #expect(gate.timerToArm() == nil)
        gate.answerHead(HTTPResponse(status: .ok))
        guard case .none = gate.answerEnded(now: at(3)) else {
            Issue.record("a kept-alive connection stays")
            return
        }
        #expect(gate.timerToArm() == at(63))
        guard case .close(nil) = gate.timerFired(now: at(63)) else {
            Issue.record("an idle connection closes quietly")
            return
        }
    }

    @Test func aClientThatExpectsContinueIsToldAtOnce() {
        var (gate, _) = machine()
        #expect(forwarded(gate.head(head(.post, "/photo", ["Expect": "100-continue"]), now: at(1), verdicts: Verdicts()))?.sendContinue == true)
    }

    @Test func aRefusedHeadIsAnsweredAtOnceAndItsBodyIsNeverPassedOn() throws {
        var (gate, _) = machine()
        let refused = try #require(answer(gate.head(head(.post, "/elsewhere"), now: at(1), verdicts: Verdicts())))
        #expect(refused.status == 404)
        #expect(refused.closes)
        #expect(refused.log?.path == "/elsewhere")
        #expect(refused.log?.status == 404)
        #expect(refused.log?.error != nil)
        guard case .none = gate.bodyPart(), case .none = gate.requestEnded(now: at(1.5)) else {
            Issue.record("the body of a refused request is dropped")
            return
        }
        // Another head on the same connection is dropped too: it is closing.
        guard case .none = gate.head(head(), now: at(1.6), verdicts: Verdicts()) else {
            Issue.record("nothing more is passed on")
            return
        }
        // It lingers one second so the client can read the answer, then closes.
        #expect(gate.timerToArm() == at(2))
        guard case .none = gate.timerFired(now: at(1.9)) else {
            Issue.record("not before the linger is over")
            return
        }
        guard case .close(nil) = gate.timerFired(now: at(2)) else {
            Issue.record("closed after the linger")
            return
        }
        #expect(gate.timerToArm() == nil)
    }

    @Test func aConnectionOverTheLimitOrWhileStoppingIsAnswered503() throws {
        for admission in [ConnectionRegistry.Admission.overLimit(3), .stopping] {
            var (gate, start) = machine(admission)
            let refused = try #require(answer(start))
            #expect(refused.status == 503)
            #expect(refused.closes)
            #expect(refused.log == nil)
            // It was never counted in, so it is not counted out.
            #expect(gate.closed() == false)
        }
        var (admitted, _) = machine()
        #expect(admitted.closed() == true)
        #expect(admitted.closed() == false)
    }

    @Test func aPipelinedHeadGoesOnUncheckedSoNoAnswerOvertakesTheOneBeingWritten() {
        var (gate, _) = machine()
        _ = gate.head(head(), now: at(1), verdicts: Verdicts())
        _ = gate.requestEnded(now: at(1))
        // The second would be refused on its own; refusing it now would answer before the first.
        let second = gate.head(head(.post, "/elsewhere", ["Expect": "100-continue"]), now: at(1), verdicts: Verdicts())
        #expect(forwarded(second)?.0.path == "/elsewhere")
        #expect(forwarded(second)?.sendContinue == false)
    }

    @Test func aResumableCreationInOurInteropVersionIsAnnounced() {
        var (gate, _) = machine()
        let action = gate.head(
            head(.post, "/photo", ["Upload-Complete": "?0", "Upload-Length": "900", "Upload-Draft-Interop-Version": "8"]),
            now: at(1), verdicts: Verdicts())
        #expect(forwarded(action)?.announce == GateMachine.Announcement(boundary: "abc", length: 900, version: 8))
    }

    @Test func anAppendTheUploadsStateRefusesIsAnsweredFromTheHead() throws {
        let path = "/resumable/" + Self.token
        let append = ["Upload-Offset": "5", "Upload-Complete": "?1", "Upload-Draft-Interop-Version": "8", "Content-Type": "application/partial-upload"]
        var (gate, _) = machine()
        #expect(try #require(answer(gate.head(head(.patch, path, append), now: at(1), verdicts: Verdicts()))).status == 404)

        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let record = ResumableRecord(token: Self.token, createdAt: now, expiresAt: now + 3600, boundary: "abc", length: nil)
        var verdicts = Verdicts(uploads: [Self.token: .init(record: record, offset: 9, busy: false)])
        (gate, _) = machine()
        #expect(try #require(answer(gate.head(head(.patch, path, append), now: at(1), verdicts: verdicts))).status == 409)
        // Held by another request: its offset may still move, so the endpoint decides.
        verdicts.uploads[Self.token]?.busy = true
        (gate, _) = machine()
        #expect(forwarded(gate.head(head(.patch, path, append), now: at(1), verdicts: verdicts)) != nil)
        // At the offset it stands at, the append goes on.
        verdicts.uploads[Self.token] = .init(record: record, offset: 5, busy: false)
        (gate, _) = machine()
        #expect(forwarded(gate.head(head(.patch, path, append), now: at(1), verdicts: verdicts)) != nil)
    }

    @Test func anIdempotencyKeyInProgressIsRefusedForItsClientOnly() throws {
        let verdicts = Verdicts(keys: ["k1 10.0.0.7": .inProgress])
        var (gate, _) = machine()
        let refused = try #require(answer(gate.head(head(.post, "/photo", ["Idempotency-Key": "\"k1\""]), now: at(1), verdicts: verdicts)))
        #expect(refused.status == 409)
        var (other, _) = machine(client: "10.0.0.8")
        #expect(forwarded(other.head(head(.post, "/photo", ["Idempotency-Key": "\"k1\""]), now: at(1), verdicts: verdicts)) != nil)
    }

    @Test func aHeadThatDoesNotCompleteInTimeIsAnswered408() throws {
        var (gate, _) = machine()
        _ = gate.bytesArrived(20, now: at(2))
        // The head's clock runs from its first byte.
        #expect(gate.timerToArm() == at(12))
        guard case .none = gate.timerFired(now: at(11.9)) else {
            Issue.record("not before its time")
            return
        }
        let late = try #require(answer(gate.timerFired(now: at(12))))
        #expect(late.status == 408)
        #expect(late.log?.method == "-")
    }

    @Test func aBodyThatStopsArrivingWhileAskedForFailsTheRequest() {
        var (gate, _) = machine()
        _ = gate.head(head(), now: at(1), verdicts: Verdicts())
        // Asked for since the head: asking again does not push the deadline.
        gate.readRequested(now: at(2))
        #expect(gate.timerToArm() == at(31))
        guard case .close(failing: .bodyStalled(.seconds(30))?) = gate.timerFired(now: at(31)) else {
            Issue.record("a stalled body fails the request and closes")
            return
        }
        #expect(gate.timerToArm() == nil)
    }

    @Test func anInterruptionFailsOnlyARequestInProgress() {
        var (idle, _) = machine()
        guard case .close(failing: nil) = idle.interrupted(.stopping) else {
            Issue.record("an idle connection just closes")
            return
        }
        var (busy, _) = machine()
        _ = busy.head(head(), now: at(1), verdicts: Verdicts())
        guard case .close(failing: .superseded?) = busy.interrupted(.superseded) else {
            Issue.record("the request being read is failed")
            return
        }
    }

    @Test func anAnswerThatSaysCloseEndsTheConnectionInsteadOfDraining() {
        var (gate, _) = machine()
        _ = gate.head(head(), now: at(1), verdicts: Verdicts())
        // An informational answer does not count.
        var early = HTTPResponse(status: .continue)
        early.headerFields[.connection] = "close"
        gate.answerHead(early)
        var final = HTTPResponse(status: .contentTooLarge)
        final.headerFields[.connection] = "Close"
        gate.answerHead(final)
        guard case .flush = gate.answerEnded(now: at(2)) else {
            Issue.record("the answer is flushed and the connection lingers")
            return
        }
        guard case .none = gate.bodyPart() else {
            Issue.record("the rest of the body is not passed on")
            return
        }
        #expect(gate.timerToArm() == at(3))
        // A client that keeps sending more than the linger allows is cut at once.
        guard case .close(nil) = gate.bytesArrived(9 << 20, now: at(2.1)) else {
            Issue.record("cut after too many bytes")
            return
        }
    }
}
