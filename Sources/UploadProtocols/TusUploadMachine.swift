import Foundation
import UploadCore

/// The client's side of tus 1.0.0 as a value, beside `ResumableUploadMachine` (the draft's): it
/// is told what each request came back with and says what to do next; the shell only sends.
/// One attempt of one upload:
///
/// - With no upload URL yet: create one (`create`: a `POST` with `Upload-Length` and the
///   metadata, empty, or with the whole file when the server lists `creation-with-upload` and
///   the file is small), then send the file in `PATCH`es (`patch`: from the server's offset, at
///   most `chunkSize` bytes each; the whole rest in one when no size is set, as the protocol
///   recommends).
/// - With one from an interrupted attempt (or handed out by another service): ask its offset
///   (`head`), then send the rest; an upload the server already has whole ends there.
/// - An upload URL the server no longer has (404, 410, 403, expired) starts over with a new one
///   (at most `ResumableRounds.limit` times in one attempt); an offset the two sides disagree on (409) is asked
///   again; a chunk the server found damaged (460, checksum) is sent again, that chunk only.
/// - A cancelled upload or a file that changed while it was read is removed from the server
///   (`delete`) when the server lists `termination`.
/// - A server that keeps nothing of a cut `PATCH` (the next offset it names is where that
///   request began, though it had sent at least `LinkEstimate.measurable` bytes) stores a request
///   only once it is whole: the rest goes in chunks sized from what the link shows (`link`), so a
///   cut loses at most one chunk, and the shell remembers it for the origin
///   (`TusCapabilities.discardsCutRequests`), whose next uploads go in chunks from the start.
///
/// The final answer of a tus upload is a bodiless `204`; the attempt ends with that status and
/// a body that says where the file now lives and its size.
public struct TusUploadMachine: Sendable {
    /// A tus request the transport sends for the machine.
    public enum Request: Sendable, Equatable {
        /// `POST` to the creation URL for an upload of `length` bytes; `withBody`: the whole
        /// file goes in it (`creation-with-upload`).
        case create(length: Int64, withBody: Bool)
        /// `HEAD` on the upload URL: its offset.
        case head(ResumePoint)
        /// `PATCH` with the file's bytes from the point's offset up to `end`.
        case patch(ResumePoint, end: Int64)
        /// `DELETE` on the upload URL (termination; best effort, briefly).
        case delete(ResumePoint)
    }

    /// What the transport does next: send a request, or end the attempt with this result.
    public enum Next: Sendable {
        case request(Request)
        case finish(AttemptResult)
    }

    /// What one input decided: what to report (in order), then what to do next.
    public struct Decision: Sendable {
        public var reports: [ResumableUploadMachine.Report]
        public var next: Next
    }

    private enum State: Sendable {
        case idle
        case creating(withBody: Bool)
        case heading(ResumePoint)
        case patching(ResumePoint, end: Int64)
        case deleting(AttemptResult)
        case done
    }

    /// Times one chunk is sent again (460) or the offset asked again (409, no progress) before
    /// giving up.
    public static let chunkTries = 3
    /// Bytes per chunk when the server checks each chunk's checksum and no size was asked for.
    public static let checksumChunk: Int64 = 64 << 20

    private let endpoint: Endpoint
    private let file: FileFingerprint
    private let length: Int64
    private let capabilities: TusCapabilities
    private let chunkSize: Int64?
    private let smallFile: Int64
    /// The upload URL was handed out by another service: it cannot be created again.
    private let handedOut: Bool
    private var state = State.idle
    private var point: ResumePoint?
    /// The server keeps nothing of a cut request: chunks, when no size was asked for.
    private var discardsCut: Bool
    /// The most bytes one request may carry, as a `413` said (or as remembered of the origin).
    private var requestLimit: Int64?
    /// What the requests so far showed of the link; the shell keeps it up to date.
    public var link = LinkEstimate()
    private var tries = 0
    private var rounds = ResumableRounds()

    /// An attempt to the creation URL `endpoint` of `file` (`length` bytes as sent), continuing
    /// `point` (nil: none yet), to a server that said `capabilities`. `chunkSize`: bytes per
    /// `PATCH` at most (nil: the rest in one). Files up to `smallFile` bytes go in the creation
    /// request itself when the server allows it.
    ///
    /// `handedOut`: an upload URL another service handed out (`send --upload-url`), continued
    /// from the server's offset; with no `point` (the first attempt), the upload begins at it.
    /// When the server no longer has it, the attempt fails: nothing here can create it again.
    public init(
        endpoint: Endpoint, file: FileFingerprint, length: Int64, point: ResumePoint?, capabilities: TusCapabilities,
        chunkSize: Int64? = nil, smallFile: Int64 = 1 << 20, handedOut: String? = nil
    ) {
        self.endpoint = endpoint
        self.handedOut = handedOut != nil
        self.file = file
        self.length = length
        self.capabilities = capabilities
        // With checksums each chunk is read once before it is sent (to hash it): chunks of a
        // bounded size then, not the whole rest.
        self.chunkSize = (chunkSize ?? (TusChecksum.algorithm(for: capabilities) != nil ? Self.checksumChunk : nil)).map { max($0, 1) }
        self.smallFile = smallFile
        self.discardsCut = capabilities.discardsCutRequests == true
        self.requestLimit = capabilities.maxRequest
        if let cutAfter = capabilities.cutAfter { link.cut(after: cutAfter) }
        self.point = point ?? handedOut.map { ResumePoint.tus(uploadURL: $0, bodyLength: length, file: file) }
        if let point, point.kind != .tus || point.file != file || point.bodyLength != length {
            self.point = nil
            if point.kind == .tus {
                rounds.startOver("the file changed since the upload began")
            }
        }
    }

    /// The first request of the round, or the end at once for a file over the server's `Tus-Max-Size`.
    public mutating func start() -> Decision {
        guard case .idle = state else { return decide(.finish(ResumableUploadMachine.misuse)) }
        if let maxSize = capabilities.maxSize, length > maxSize {
            return finish(
                AttemptResult(
                    outcome: .failed(
                        UploadFailure(
                            .other,
                            "the server takes uploads of at most \(ByteFormat.bytes(maxSize)) (Tus-Max-Size); this one is \(ByteFormat.bytes(length))")),
                    response: nil, bytesSent: 0))
        }
        return beginRound()
    }

    /// What the creation request came back with.
    public mutating func created(_ result: AttemptResult) -> Decision {
        guard case .creating(let withBody) = state else { return decide(.finish(ResumableUploadMachine.misuse)) }
        guard let response = result.response else {
            // A creation that carried the file and was cut: no upload URL came back, so nothing
            // can be continued, whatever the server kept. The link is known to cut a request of
            // that size: the next attempt creates empty first, so a cut body can be continued
            // (or, from a server that keeps nothing of a cut, is noticed and chunked).
            if withBody, case .failed(let failure) = result.outcome, failure.kind != .cancelled, failure.kind != .fileError {
                link.cut(after: result.bytesSent)
            }
            return finish(withBody ? result : ResumableUploadMachine.beforeTheBody(result))
        }
        guard (200..<300).contains(response.status) else {
            // The server's refusal (413 too large, 401, 412 another version, 400, …) is the
            // upload's answer, shown as it came.
            return finish(AttemptResult(outcome: .answered(status: response.status), response: response, bytesSent: result.bytesSent))
        }
        guard let location = response.header("Location"), let resource = endpoint.resolve(location) else {
            // A success that names no upload URL has made nothing the file can be sent to: it
            // is the server's fault, never the upload's success.
            return finish(
                AttemptResult(
                    outcome: .failed(UploadFailure(.other, TusFields.noUploadURL(response))), response: response,
                    bytesSent: result.bytesSent))
        }
        let offset = TusFields.integer(response.header(TusFields.offset)) ?? 0
        guard offset <= length else { return protocolError("the server says it has \(offset) bytes of a \(length)-byte upload") }
        let created = ResumePoint.tus(
            uploadURL: resource.url, bodyLength: length, file: file, offset: offset,
            expires: response.header(TusFields.expires))
        point = created
        rounds.report(.resumable(created, startedOver: nil))
        if !withBody { rounds.report(.sending(bodyLength: length)) }
        return next(from: created, answer: response, sent: result.bytesSent)
    }

    /// What `head` came back with.
    public mutating func headed(_ result: AttemptResult) -> Decision {
        guard case .heading(var known) = state else { return decide(.finish(ResumableUploadMachine.misuse)) }
        guard let response = result.response else { return finish(ResumableUploadMachine.beforeTheBody(result), keeping: known) }
        switch response.status {
        case 200..<300:
            guard let offset = TusFields.integer(response.header(TusFields.offset)), offset <= length else {
                return gone("the server gave no usable offset for the upload")
            }
            if let serverLength = TusFields.integer(response.header(TusFields.length)), serverLength != length {
                return gone("the server's upload is \(serverLength) bytes long, the file \(length)")
            }
            if known.unconfirmed >= LinkEstimate.measurable, offset <= known.offset, !discardsCut {
                // All the cut request carried is gone: this server stores a request only once it
                // is whole.
                discardsCut = true
                link.cut(after: known.unconfirmed)
                rounds.report(.discardsCutRequests(chunk: chunkSize ?? link.chunk))
            }
            known.offset = offset
            known.unconfirmed = 0
            if let expires = response.header(TusFields.expires) { known.expires = expires }
            point = known
            rounds.report(.resumable(known, startedOver: nil))
            rounds.report(.sending(bodyLength: length))
            if offset > 0, offset < length { rounds.report(.resumed(offset: offset, bodyLength: length)) }
            return next(from: known, answer: response, sent: 0)
        case 403, 404, 410:
            return gone(response.status == 410 ? "the server let the upload expire" : "the server no longer has the upload")
        case 500..<600, 423, 429:
            return finish(result, keeping: known)
        default:
            return finish(AttemptResult(outcome: .answered(status: response.status), response: response, bytesSent: 0), keeping: known)
        }
    }

    /// What a `patch` came back with.
    public mutating func patched(_ result: AttemptResult) -> Decision {
        guard case .patching(var current, _) = state else { return decide(.finish(ResumableUploadMachine.misuse)) }
        guard let response = result.response else {
            if case .failed(let failure) = result.outcome, failure.kind == .fileError || failure.kind == .cancelled {
                return terminate(result, current)
            }
            // Cut, stalled, no answer: the next attempt asks where the server got to, and tells
            // from its answer whether the server kept what this request carried.
            current.unconfirmed = max(result.bytesSent, 0)
            link.cut(after: current.unconfirmed)
            return finish(result, keeping: current)
        }
        switch response.status {
        case 200..<300:
            guard let offset = TusFields.integer(response.header(TusFields.offset)), offset <= length, offset >= current.offset else {
                return protocolError("the server's answer to a chunk gave no usable Upload-Offset")
            }
            if offset == current.offset {
                // Nothing was taken: ask again a few times, then give up rather than loop.
                tries += 1
                guard tries < Self.chunkTries else { return protocolError("the server takes no bytes at offset \(offset)") }
            } else {
                tries = 0
            }
            current.offset = offset
            if let expires = response.header(TusFields.expires) { current.expires = expires }
            point = current
            if offset < length { rounds.report(.resumable(current, startedOver: nil)) }
            return next(from: current, answer: response, sent: result.bytesSent)
        case 409:
            // Another offset than ours: ask the server's.
            tries += 1
            guard tries < Self.chunkTries else { return gone("the server and the client disagree on the offset") }
            state = .heading(current)
            return decide(.request(.head(current)))
        case 413 where tries + 1 < Self.chunkTries:
            // More than the server takes in one request. When its answer names how much it
            // does (aiohttp: "Maximum request body size 2097152 exceeded."), the rest goes in
            // chunks of that, and the origin is remembered to take no more.
            guard let limit = Self.requestLimit(in: response, sent: chunkEnd(current) - current.offset) else {
                return finish(
                    AttemptResult(outcome: .answered(status: 413), response: response, bytesSent: result.bytesSent),
                    keeping: current)
            }
            tries += 1
            requestLimit = min(requestLimit ?? limit, limit)
            rounds.report(.requestLimit(bytes: limit))
            return patch(current)
        case TusFields.checksumMismatch:
            // The chunk arrived damaged and was dropped: that chunk again.
            tries += 1
            guard tries < Self.chunkTries else {
                return finish(
                    AttemptResult(
                        outcome: .failed(
                            UploadFailure(
                                .integrityMismatch,
                                "the server found a chunk damaged \(Self.chunkTries) times (460 checksum mismatch)")), response: response,
                        bytesSent: result.bytesSent), keeping: current)
            }
            return patch(current)
        case 403, 404, 410:
            return gone(response.status == 410 ? "the server let the upload expire" : "the server no longer has the upload")
        case 500..<600, 423, 429:
            return finish(result, keeping: current)
        default:
            // 413, 415, 400, 412…: the server's refusal is the upload's answer.
            return finish(
                AttemptResult(outcome: .answered(status: response.status), response: response, bytesSent: result.bytesSent),
                keeping: current)
        }
    }

    /// `delete` is done (whatever came back): the attempt ends as the body did.
    public mutating func deleted() -> Decision {
        guard case .deleting(let result) = state else { return decide(.finish(ResumableUploadMachine.misuse)) }
        return finish(result)
    }

    /// The body of the final answer: tus answers the last chunk with a bodiless 204, so the
    /// attempt's answer says where the file now lives and how big it is.
    public static func completionNote(uploadURL: String, length: Int64) -> String {
        "stored at \(uploadURL) (\(ByteFormat.bytes(length)))"
    }

    // MARK: steps

    private mutating func beginRound() -> Decision {
        tries = 0
        if let end = rounds.begin() { return finish(end) }
        if let known = point {
            state = .heading(known)
            return decide(.request(.head(known)))
        }
        // Not when the link has cut a request no larger than the file: a creation cut with its
        // body leaves no upload URL to continue.
        let withBody =
            capabilities.has("creation-with-upload") && length <= smallFile && length > 0
            && (chunkSize.map { length <= $0 } ?? true) && (link.cutAfter.map { $0 > length } ?? true)
        if withBody { rounds.report(.sending(bodyLength: length)) }
        state = .creating(withBody: withBody)
        return decide(.request(.create(length: length, withBody: withBody)))
    }

    /// After an answer that gave `current.offset`: the next chunk, or the end.
    private mutating func next(from current: ResumePoint, answer: UploadResponse, sent: Int64) -> Decision {
        guard current.offset >= length else { return patch(current) }
        rounds.report(.resumable(nil, startedOver: nil))
        let note = Self.completionNote(uploadURL: current.uploadURL, length: length)
        let final = UploadResponse(
            status: answer.status, reason: answer.reason, headers: answer.headers,
            body: Array(note.utf8), bodyBytesTotal: Int64(note.utf8.count))
        return finish(AttemptResult(outcome: .answered(status: answer.status), response: final, bytesSent: sent))
    }

    private mutating func patch(_ current: ResumePoint) -> Decision {
        let end = chunkEnd(current)
        state = .patching(current, end: end)
        return decide(.request(.patch(current, end: end)))
    }

    /// Where the next `PATCH` from `current` ends: the size asked for, or chunks sized from the
    /// link for a server that keeps nothing of a cut request, within what one request may carry.
    private func chunkEnd(_ current: ResumePoint) -> Int64 {
        var size = chunkSize ?? (discardsCut ? link.chunk : nil)
        if let requestLimit { size = min(size ?? requestLimit, requestLimit) }
        return size.map { min(length, current.offset + $0) } ?? length
    }

    /// The most bytes one request may carry, as a `413` to a request of `sent` bytes says it in
    /// words: the one number in its answer's first KiB that is at least `smallestAppend` and
    /// less than what was sent (in whole 64 KiB). nil when it names none, or more than one.
    public static func requestLimit(in response: UploadResponse, sent: Int64) -> Int64? {
        let text = String(decoding: response.body.prefix(1024), as: UTF8.self)
        var numbers = Set<Int64>()
        var digits = ""
        for character in text + " " {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            if digits.count >= 5, digits.count <= 15, let number = Int64(digits),
                number >= ResumableUploadMachine.smallestAppend, number < sent
            {
                numbers.insert(number)
            }
            digits = ""
        }
        guard numbers.count == 1, let limit = numbers.first else { return nil }
        return limit / (64 << 10) * (64 << 10)
    }

    /// Nothing will continue the upload: what the server keeps goes now (when it lets us).
    private mutating func terminate(_ result: AttemptResult, _ current: ResumePoint) -> Decision {
        rounds.report(.resumable(nil, startedOver: nil))
        guard capabilities.has("termination") else { return finish(result) }
        state = .deleting(result)
        return decide(.request(.delete(current)))
    }

    private mutating func gone(_ why: String) -> Decision {
        if handedOut {
            rounds.report(.resumable(nil, startedOver: nil))
            return finish(
                AttemptResult(
                    outcome: .failed(UploadFailure(.other, "the upload URL given with --upload-url cannot be continued: \(why)")),
                    response: nil, bytesSent: 0))
        }
        point = nil
        rounds.startOver(why)
        return beginRound()
    }

    private mutating func protocolError(_ why: String) -> Decision {
        rounds.report(.resumable(nil, startedOver: nil))
        return finish(AttemptResult(outcome: .failed(UploadFailure(.other, why)), response: nil, bytesSent: 0))
    }

    private mutating func finish(_ result: AttemptResult, keeping kept: ResumePoint? = nil) -> Decision {
        state = .done
        return decide(.finish(result.keeping(kept)))
    }

    private mutating func decide(_ next: Next) -> Decision {
        Decision(reports: rounds.take(), next: next)
    }
}
