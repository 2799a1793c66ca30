import Foundation
import UploadCore

/// tus 1.0.0 for a stream whose length is known only at its end (standard input), as a value:
/// the upload is created with `Upload-Defer-Length: 1` (the `creation-defer-length` extension),
/// the stream is read a chunk at a time into a buffer, each chunk goes in a `PATCH`, and the
/// `PATCH` after which the stream ended says the length. The bytes a server has not taken yet
/// stay in the buffer, so a cut is continued within the attempt from the server's offset
/// (`HEAD`): a stream cannot be read again, so nothing of it can wait for another attempt.
///
/// The shell keeps the buffer: `read` asks it to drop what the server took (everything before
/// `bufferStart`) and fill it to a chunk from the stream; `buffered` says what it holds then.
public struct TusStreamMachine: Sendable {
    /// A tus request the transport sends for the machine.
    public enum Request: Sendable, Equatable {
        /// `POST` to the creation URL with `Upload-Defer-Length: 1` and no body.
        case create
        /// Drop the buffer's bytes before `from` (the server has them) and fill it from the
        /// stream to `upTo` bytes, or to the stream's end.
        case read(from: Int64, upTo: Int)
        /// `HEAD` on the upload URL: its offset.
        case head(uploadURL: String)
        /// `PATCH` with the stream's bytes `from..<to` (all in the buffer); `length`: the whole
        /// stream's, once its end was read (`Upload-Length`).
        case patch(uploadURL: String, from: Int64, to: Int64, length: Int64?)
    }

    /// What the transport does next: send a request, or end the attempt with this result.
    public enum Next: Sendable {
        case request(Request)
        case finish(AttemptResult)
    }

    private enum State: Sendable {
        case idle, creating, reading, heading, patching, done
    }

    /// Cuts continued within one attempt before giving up.
    public static let cutsAllowed = 5
    /// Bytes per chunk when none was asked for: the memory a stream upload holds.
    public static let defaultChunk = 8 << 20

    private let endpoint: Endpoint
    private let capabilities: TusCapabilities
    private let chunk: Int
    private var state = State.idle
    private var uploadURL = ""
    /// The server's offset: what it has of the stream.
    private var offset: Int64 = 0
    /// The stream's bytes `bufferStart..<bufferEnd` are in the shell's buffer.
    private var bufferStart: Int64 = 0
    private var bufferEnd: Int64 = 0
    /// The stream ended at `bufferEnd`.
    private var ended = false
    private var cuts = 0
    private var tries = 0

    /// An upload of a stream to the creation URL `endpoint` of a server that said `capabilities`,
    /// `chunkSize` bytes per `PATCH` at most (nil: `defaultChunk`).
    public init(endpoint: Endpoint, capabilities: TusCapabilities, chunkSize: Int64? = nil) {
        self.endpoint = endpoint
        self.capabilities = capabilities
        chunk = Int(max(1, min(chunkSize ?? Int64(Self.defaultChunk), 1 << 30)))
    }

    /// The first request.
    public mutating func start() -> Next {
        guard case .idle = state else { return .finish(ResumableUploadMachine.misuse) }
        guard capabilities.has("creation-defer-length") else {
            return fail(
                "the server does not take an upload whose length is said only at its end (tus creation-defer-length), and standard input has no length before it ends: save it to a file first, or use --protocol multipart"
            )
        }
        state = .creating
        return .request(.create)
    }

    /// What the creation request came back with.
    public mutating func created(_ result: AttemptResult) -> Next {
        guard case .creating = state else { return .finish(ResumableUploadMachine.misuse) }
        guard let response = result.response else { return finish(ResumableUploadMachine.beforeTheBody(result)) }
        guard (200..<300).contains(response.status) else {
            return finish(AttemptResult(outcome: .answered(status: response.status), response: response, bytesSent: 0))
        }
        guard let location = response.header("Location"), let resource = endpoint.resolve(location) else {
            return finish(AttemptResult(outcome: .failed(UploadFailure(.other, TusFields.noUploadURL(response))), response: response, bytesSent: 0))
        }
        uploadURL = resource.url
        return read()
    }

    /// The shell's buffer now holds the stream's bytes from `bufferStart` (the `from` of the
    /// last `read`) to `bufferStart + count`; `ended`: the stream ended there.
    public mutating func buffered(count: Int, ended: Bool) -> Next {
        guard case .reading = state else { return .finish(ResumableUploadMachine.misuse) }
        bufferEnd = bufferStart + Int64(count)
        self.ended = ended
        return patch()
    }

    /// What a `patch` came back with.
    public mutating func patched(_ result: AttemptResult) -> Next {
        guard case .patching = state else { return .finish(ResumableUploadMachine.misuse) }
        guard let response = result.response else {
            if case .failed(let failure) = result.outcome, failure.kind == .fileError || failure.kind == .cancelled { return finish(result) }
            return cut(result)
        }
        switch response.status {
        case 200..<300:
            guard let taken = TusFields.integer(response.header(TusFields.offset)), taken >= offset, taken <= bufferEnd else {
                return fail("the server's answer to a chunk gave no usable Upload-Offset")
            }
            if taken == offset {
                tries += 1
                guard tries < TusUploadMachine.chunkTries else { return fail("the server takes no bytes at offset \(taken)") }
            } else {
                tries = 0
            }
            offset = taken
            return next(answer: response)
        case 409:
            // Another offset than ours: ask the server's, a few times at most.
            tries += 1
            guard tries < TusUploadMachine.chunkTries else { return fail("the server and the client disagree on the offset") }
            return head()
        case TusFields.checksumMismatch:
            tries += 1
            guard tries < TusUploadMachine.chunkTries else { return fail("the server found a chunk damaged \(TusUploadMachine.chunkTries) times") }
            return patch()
        case 403, 404, 410:
            return fail("the server no longer has the upload, and standard input cannot be read again")
        default:
            return finish(AttemptResult(outcome: .answered(status: response.status), response: response, bytesSent: 0))
        }
    }

    /// What `head` came back with.
    public mutating func headed(_ result: AttemptResult) -> Next {
        guard case .heading = state else { return .finish(ResumableUploadMachine.misuse) }
        guard let response = result.response else { return cut(result) }
        guard (200..<300).contains(response.status) else {
            if [403, 404, 410].contains(response.status) {
                return fail("the server no longer has the upload, and standard input cannot be read again")
            }
            return finish(AttemptResult(outcome: .answered(status: response.status), response: response, bytesSent: 0))
        }
        guard let taken = TusFields.integer(response.header(TusFields.offset)) else {
            return fail("the server gave no usable offset for the upload")
        }
        guard taken >= bufferStart, taken <= bufferEnd else {
            return fail("the server has \(taken) bytes of the upload, but only bytes \(bufferStart) to \(bufferEnd) of standard input are still at hand")
        }
        offset = taken
        return next(answer: response)
    }

    // MARK: steps

    private mutating func read() -> Next {
        bufferStart = offset
        state = .reading
        return .request(.read(from: offset, upTo: chunk))
    }

    private mutating func patch() -> Next {
        state = .patching
        return .request(.patch(uploadURL: uploadURL, from: offset, to: bufferEnd, length: ended ? bufferEnd : nil))
    }

    private mutating func head() -> Next {
        state = .heading
        return .request(.head(uploadURL: uploadURL))
    }

    /// After the server's offset moved (or was told): the rest of the buffer, the next chunk,
    /// or the end.
    private mutating func next(answer: UploadResponse) -> Next {
        if offset < bufferEnd { return patch() }
        guard ended else { return read() }
        let note = TusUploadMachine.completionNote(uploadURL: uploadURL, length: bufferEnd)
        let final = UploadResponse(
            status: answer.status, reason: answer.reason, headers: answer.headers,
            body: Array(note.utf8), bodyBytesTotal: Int64(note.utf8.count))
        return finish(AttemptResult(outcome: .answered(status: answer.status), response: final, bytesSent: 0))
    }

    /// A request that got no answer: where the server got to is asked, a few times at most.
    private mutating func cut(_ result: AttemptResult) -> Next {
        cuts += 1
        guard cuts <= Self.cutsAllowed else { return finish(result) }
        return head()
    }

    private mutating func fail(_ why: String) -> Next {
        finish(AttemptResult(outcome: .failed(UploadFailure(.other, why)), response: nil, bytesSent: 0))
    }

    private mutating func finish(_ result: AttemptResult) -> Next {
        state = .done
        return .finish(result)
    }
}
