import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import AsyncHTTPClient
import UploadCore

/// Receives one attempt's callbacks from AsyncHTTPClient: sent-byte progress as parts reach the
/// socket, then the answer's head and body.
///
/// AsyncHTTPClient calls these methods one at a time on the task's event loop; the lock only
/// makes the state safe to read from the queue's side (`bodySent`).
final class UploadDelegate: HTTPClientResponseDelegate, Sendable {
    typealias Response = UploadResponse

    private struct State {
        var sent: Int64 = 0
        var bodySent = false
        var answer = AnswerCapture()
    }

    private let state = NIOLockedValueBox(State())
    private let expected: Int64?
    private let onProgress: @Sendable (_ bytes: Int64, _ total: Int64, _ expected: Int64?) -> Void

    private let onBodySent: @Sendable () -> Void

    init(expected: Int64?, onProgress: @escaping @Sendable (Int64, Int64, Int64?) -> Void, onBodySent: @escaping @Sendable () -> Void = {}) {
        self.expected = expected
        self.onProgress = onProgress
        self.onBodySent = onBodySent
    }

    /// Whether the whole body reached the socket: a timeout after this is a missing answer,
    /// not a stall.
    var bodySent: Bool { state.withLockedValue { $0.bodySent } }
    var bytesSent: Int64 { state.withLockedValue { $0.sent } }

    func didSendRequestPart(task: HTTPClient.Task<UploadResponse>, _ part: IOData) {
        let count = Int64(part.readableBytes)
        let total = state.withLockedValue { s -> Int64 in
            s.sent += count
            return s.sent
        }
        onProgress(count, total, expected)
    }

    func didSendRequest(task: HTTPClient.Task<UploadResponse>) {
        state.withLockedValue { $0.bodySent = true }
        onBodySent()
    }

    func didReceiveHead(task: HTTPClient.Task<UploadResponse>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        state.withLockedValue { $0.answer.take(head) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<UploadResponse>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let enough = state.withLockedValue { state -> Bool in
            state.answer.take(buffer)
            return state.answer.keptAllItWill
        }
        // What is kept is in: the rest is not read (the exchange makes the answer from the capture).
        return enough ? task.eventLoop.makeFailedFuture(AnswerCapture.KeptEnough()) : task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<UploadResponse>) throws -> UploadResponse {
        guard let answer = answerSoFar else { throw HTTPClientError.remoteConnectionClosed }
        return answer
    }

    /// The answer as far as it arrived (`AnswerCapture`).
    var answer: AnswerCapture { state.withLockedValue { $0.answer } }
    var answerSoFar: UploadResponse? { answer.answerSoFar }
}
