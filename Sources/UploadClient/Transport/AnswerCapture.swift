import NIOCore
import NIOHTTP1
import UploadCore

/// An answer as it arrives, for both ways a request goes (AsyncHTTPClient's delegate and the
/// direct connection): its head, its body up to `bodyLimit` (the rest only counted), and what
/// it counts as when it does not end in the ordinary way.
struct AnswerCapture: Sendable {
    /// How much of an answer's body is kept; the rest is only counted.
    static let bodyLimit = 1 << 20

    private(set) var head: HTTPResponseHead?
    private var body: [UInt8] = []
    private var bodyTotal: Int64 = 0

    mutating func take(_ head: HTTPResponseHead) {
        self.head = head
    }

    mutating func take(_ part: ByteBuffer) {
        bodyTotal += Int64(part.readableBytes)
        let room = Self.bodyLimit - body.count
        if room > 0 { body.append(contentsOf: part.readableBytesView.prefix(room)) }
    }

    /// The answer as far as it arrived, once its head has: a server that answers early (a 413
    /// at once, a 200 after a few bytes) and closes ends the request, yet its answer is what
    /// happened.
    var answerSoFar: UploadResponse? {
        head.map { UploadResponse($0, body: body, bodyBytesTotal: bodyTotal) }
    }

    /// Whether more of the body arrived than is kept: reading on would only count bytes (a
    /// server streaming an answer without end held the upload for the whole answer timeout).
    var keptAllItWill: Bool { bodyTotal > Int64(Self.bodyLimit) }

    /// Reading stops once what is kept is in: the answer as kept, said to be cut there (nil
    /// while there is room for more).
    var whenEnoughWasKept: UploadResponse? {
        guard keptAllItWill, var answer = answerSoFar else { return nil }
        answer.cut = "answer cut off: its first \(ByteFormat.bytes(Int64(Self.bodyLimit))) kept, the rest not read"
        return answer
    }

    /// AsyncHTTPClient's task ends with this once what is kept is in.
    struct KeptEnough: Error {}

    /// The answer clock ran out: what arrived of the answer, said to be cut, or no answer.
    func whenTheAnswerClockRanOut(_ timeouts: UploadTimeouts) -> Result<UploadResponse, UploadFailure> {
        guard let arrived = answerSoFar else { return .failure(FailureClassifier.noAnswer(timeouts)) }
        return .success(arrived.endedEarly(answerTimeout: timeouts.answerSeconds))
    }

    /// The connection ended before the answer did: what arrived of it (its status at least),
    /// said to be cut unless its whole declared body came.
    var whenTheConnectionEnded: UploadResponse? {
        answerSoFar?.endedEarly(answerTimeout: nil)
    }
}

extension UploadResponse {
    /// An answer from its parsed head: an interim one (no body), or a final one as far as its
    /// body arrived.
    init(_ head: HTTPResponseHead, body: [UInt8] = [], bodyBytesTotal: Int64 = 0) {
        self.init(
            status: Int(head.status.code), reason: head.status.reasonPhrase,
            headers: head.headers.map { ($0.name, $0.value) }, body: body, bodyBytesTotal: bodyBytesTotal)
    }
}
