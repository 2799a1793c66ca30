import Foundation
import UploadCore

/// The client's side of draft-ietf-httpbis-resumable-upload as a value: it is told what each
/// request came back with and says what to do next (`Decision`); the transport only
/// sends. One attempt of one upload:
///
/// - With no upload resource yet: ask whether the origin resumes (`ask`: `OPTIONS`, or what an
///   earlier process remembered), create the resource (`create`: an empty `POST`,
///   `Upload-Complete: ?0`), then append the body (`append`: `PATCH` from the offset to the end,
///   `Upload-Complete: ?1`).
/// - With one from an interrupted attempt: ask where it stands (`head`), then append the rest;
///   or, when it completed and its answer was lost, fetch the answer (`fetchAnswer`).
/// - A resource the server lost, or an offset the two sides cannot agree on, starts over (at
///   most `ResumableRounds.limit` times in one attempt); a body the user cancelled or a file that changed while
///   it was read removes the resource (`delete`) before the attempt ends.
///
/// The file is checked against the resource first: a file changed since the upload began cannot be continued.
public struct ResumableUploadMachine: Sendable {
    private enum State: Sendable {
        case idle
        case asking
        case creating(version: Int, remembered: Bool)
        case creatingOptimistically
        case heading(ResumePoint)
        case fetching(ResumePoint)
        /// `end`: a part of the body up to there (nil: the rest, completing the upload).
        case appending(ResumePoint, tries: Int, end: Int64?)
        case deleting(AttemptResult)
        case done
    }

    /// `PATCH`es one round may send when the server names another offset (`409`), and `409`s
    /// one attempt takes in all (one that names no offset sends the client to ask for it).
    public static let appendTries = 3

    /// The smallest `max-append-size` followed: a server that takes less per request (one
    /// said 1 byte, and a 2 MB photo became 131,000 requests) is refused with the reason, and
    /// what it keeps of the upload is deleted.
    public static let smallestAppend: Int64 = 64 * 1024

    private let endpoint: Endpoint
    private let file: FileFingerprint
    private let fileSize: Int64
    private let threshold: Int64
    private var optimistic: Bool
    /// The largest append the server takes (`max-append-size` in an `Upload-Limit` it sent).
    private var appendLimit: Int64?
    private var state = State.idle
    /// `409`s this attempt got: the retry rule of draft -12 resumes after one (at the offset it
    /// names, or asked for), and a server that keeps answering so is given up on.
    private var conflicts = 0
    private var point: ResumePoint?
    private var rounds = ResumableRounds()

    /// An attempt to `endpoint` of `file` (`fileSize` bytes) continuing `point` (nil: none yet), whose
    /// body made again with the point's boundary would be `bodyLength` long. Files under
    /// `threshold` are not worth a resource of their own. `optimistic`: the shell can see interim
    /// answers, so a new upload goes in the creation request itself.
    public init(
        endpoint: Endpoint, file: FileFingerprint, fileSize: Int64, point: ResumePoint?, bodyLength: Int64?, threshold: Int64,
        optimistic: Bool = false
    ) {
        self.endpoint = endpoint
        self.optimistic = optimistic
        self.file = file
        self.fileSize = fileSize
        self.threshold = threshold
        self.point = point
        if let point, point.file != file || point.bodyLength != bodyLength {
            // The bytes the server has are of another file: they cannot be continued.
            self.point = nil
            rounds.startOver("the file changed since the upload began")
        }
    }

    /// The first step.
    public mutating func start() -> Decision {
        guard case .idle = state else { return decide(.finish(Self.misuse)) }
        return beginRound()
    }

    /// The origin's answer to `ask` (`remembered`: from an earlier process, so it may be stale).
    /// `limit`: the `Upload-Limit` its answer said, if it did. A file under its `min-size` is
    /// not offered resuming there: it goes the ordinary way. (One over its `max-size` goes as
    /// well: the server's own refusal, at the request's head, says it best.)
    public mutating func answered(support: Support, remembered: Bool, limit: UploadLimit? = nil) -> Decision {
        guard case .asking = state else { return decide(.finish(Self.misuse)) }
        if support == .unanswered {
            guard optimistic else { return plain() }
            state = .creatingOptimistically
            return decide(.request(.createOptimistically(version: ResumableFields.currentVersion)))
        }
        guard case .supported(let version) = support else { return plain() }
        if let minSize = limit?.minSize, fileSize < minSize { return plain() }
        if let appendLimit = limit?.maxAppendSize, appendLimit > 0 { self.appendLimit = appendLimit }
        // A body that may be more than one request may carry (the framing is a few hundred
        // bytes; a whole field list more) is created empty and sent in parts.
        if optimistic, let limit = self.appendLimit, fileSize > limit - 65_536 { optimistic = false }
        if optimistic {
            state = .creatingOptimistically
            return decide(.request(.createOptimistically(version: version)))
        }
        state = .creating(version: version, remembered: remembered)
        return decide(.request(.create(version: version)))
    }

    /// The body's layout has no length (cannot happen for a file): the ordinary request.
    public mutating func cannotCreate() -> Decision { plain() }

    /// What the creation request came back with, and the body it announced (its boundary and
    /// length).
    public mutating func created(_ result: AttemptResult, boundary: String, bodyLength: Int64) -> Decision {
        guard case .creating(let version, let remembered) = state else { return decide(.finish(Self.misuse)) }
        guard let response = result.response else { return finish(Self.beforeTheBody(result)) }
        guard (200..<300).contains(response.status), let location = response.header("Location"),
            let resource = endpoint.resolve(location)
        else {
            // A server that said it resumes and then would not create: an answer that says why
            // the upload cannot go (413, 401, …) is the upload's; anything else, the ordinary
            // way. When that was remembered from another process, the origin may have changed
            // since: only a refusal that the plain upload would meet too ends it.
            let final =
                remembered
                ? [401, 403, 407, 413].contains(response.status)
                : (400..<500).contains(response.status) && response.status != 404 && response.status != 405
            if final { return finish(result) }
            rounds.report(.originRefused)
            return plain()
        }
        learnLimit(response)
        let created = ResumePoint(
            uploadURL: resource.url, version: version, boundary: boundary, bodyLength: bodyLength,
            file: file, offset: ResumableFields.integer(response.header(ResumableFields.offset)) ?? 0)
        point = created
        rounds.report(.resumable(created, startedOver: nil))
        return beginAppend(created)
    }

    /// The upload resource a `104` names during an optimistic creation in `version`, for the
    /// body made with `boundary` (`bodyLength` bytes of `file`): it must carry our interop
    /// version (the draft: a client ignores one that does not) and a `Location`. The shell
    /// reports it at once (a process killed before the answer can still continue) and gives it
    /// to `createdOptimistically`.
    public static func announcement(
        _ interim: UploadResponse, endpoint: Endpoint, version: Int, boundary: String, bodyLength: Int64, file: FileFingerprint
    ) -> ResumePoint? {
        guard interim.status == 104, ResumableFields.version(interim.header(ResumableFields.interopVersion)) == version,
            let location = interim.header("Location"),
            let resource = endpoint.resolve(location)
        else { return nil }
        return ResumePoint(uploadURL: resource.url, version: version, boundary: boundary, bodyLength: bodyLength, file: file)
    }

    /// What the optimistic creation came back with, and the resource a `104` named (nil: none
    /// came, so nothing can be continued).
    public mutating func createdOptimistically(_ result: AttemptResult, announced: ResumePoint?) -> Decision {
        guard case .creatingOptimistically = state else { return decide(.finish(Self.misuse)) }
        if let response = result.response, response.status == 413, learnLimit(response) {
            // The whole body in one request is more than the server takes at once: again in
            // parts, from the resource the 104 named (asked where it stands), or created empty.
            optimistic = false
            point = announced
            return beginRound()
        }
        guard let announced else { return finish(result) }
        point = announced
        guard let response = result.response else { return bodyEndedWithoutAnswer(result, at: announced) }
        if Self.continuable(response) { return finish(result, keeping: announced) }
        // The endpoint's own answer to the whole upload: final.
        rounds.report(.resumable(nil, startedOver: nil))
        return finish(result)
    }

    /// What `head` came back with.
    public mutating func headed(_ result: AttemptResult) -> Decision {
        guard case .heading(var known) = state else { return decide(.finish(Self.misuse)) }
        guard let response = result.response else { return finish(Self.beforeTheBody(result), keeping: known) }
        switch response.status {
        case 200..<300:
            if ResumableFields.boolean(response.header(ResumableFields.complete)) == true {
                state = .fetching(known)
                return decide(.request(.fetchAnswer(known)))
            }
            guard let offset = ResumableFields.integer(response.header(ResumableFields.offset)), offset <= known.bodyLength else {
                return gone("the server gave no usable offset for the upload")
            }
            if let length = ResumableFields.integer(response.header(ResumableFields.length)), length != known.bodyLength {
                return gone("the server has the upload as \(length) bytes long, not \(known.bodyLength)")
            }
            known.offset = offset
            point = known
            learnLimit(response)
            return beginAppend(known)
        case 404, 410:
            return gone("the server no longer has the upload")
        case 500..<600:
            return finish(result, keeping: known)
        default:
            return gone("the server answered \(response.status) when asked where the upload stands")
        }
    }

    /// What `fetchAnswer` came back with.
    public mutating func fetched(_ result: AttemptResult) -> Decision {
        guard case .fetching(let known) = state else { return decide(.finish(Self.misuse)) }
        guard let response = result.response else { return finish(Self.beforeTheBody(result), keeping: known) }
        rounds.report(.resumable(nil, startedOver: nil))
        if (200..<300).contains(response.status) || ResumableFields.boolean(response.header(ResumableFields.complete)) == true {
            return finish(AttemptResult(outcome: .answered(status: response.status), response: response, bytesSent: 0))
        }
        // The server keeps no answer: the upload did arrive whole, which is all that can be said.
        let note = UploadResponse(
            status: 200, reason: "OK", headers: [], body: Array("the server has the whole upload; its answer was lost".utf8),
            bodyBytesTotal: 0)
        return finish(AttemptResult(outcome: .answered(status: 200), response: note, bytesSent: 0))
    }

    /// What `append` or `appendPart` came back with.
    public mutating func appended(_ result: AttemptResult) -> Decision {
        guard case .appending(var current, let tries, let end) = state else { return decide(.finish(Self.misuse)) }
        guard let response = result.response else { return bodyEndedWithoutAnswer(result, at: current) }
        let limited = learnLimit(response)
        switch response.status {
        case 200..<300 where end != nil:
            // A part taken: on from the server's offset (the part's end when it does not say).
            let offset = ResumableFields.integer(response.header(ResumableFields.offset)) ?? end ?? current.offset
            guard offset > current.offset, offset <= current.bodyLength else {
                return gone("the server took nothing of a part of the upload")
            }
            current.offset = offset
            point = current
            rounds.report(.resumable(current, startedOver: nil))
            return append(current, tries: 1, resumed: false)
        case 409 where ResumableFields.boolean(response.header(ResumableFields.complete)) != true:
            // Another offset than ours (draft -12's retry rule): continue from the server's if it
            // says it, else ask for it. A server that keeps disagreeing is given up on.
            conflicts += 1
            guard conflicts < Self.appendTries else { return gone("the server and the client disagree on the offset") }
            guard let said = response.header(ResumableFields.offset) else {
                state = .heading(current)
                return decide(.request(.head(current)))
            }
            guard let offset = ResumableFields.integer(said), offset <= current.bodyLength, offset != current.offset
            else { return gone("the server and the client disagree on the offset") }
            current.offset = offset
            point = current
            return append(current, tries: tries + 1)
        case 413 where limited && tries < Self.appendTries:
            // More than the server takes at once, and it said how much it does: that, in parts.
            return append(current, tries: tries + 1, resumed: false)
        case 404, 410:
            return gone("the server no longer has the upload")
        case _ where Self.continuable(response):
            return finish(result, keeping: current)
        default:
            // The endpoint's own answer to the whole upload (success or not): final.
            rounds.report(.resumable(nil, startedOver: nil))
            return finish(result)
        }
    }

    /// `delete` is done (whatever came back): the attempt ends as the body did.
    public mutating func deleted() -> Decision {
        guard case .deleting(let result) = state else { return decide(.finish(Self.misuse)) }
        return finish(result)
    }

    // MARK: steps

    private mutating func beginRound() -> Decision {
        if let end = rounds.begin() { return finish(end) }
        if let known = point {
            state = .heading(known)
            return decide(.request(.head(known)))
        }
        guard fileSize >= threshold else { return plain() }
        state = .asking
        return decide(.request(.ask))
    }

    private mutating func beginAppend(_ current: ResumePoint) -> Decision {
        rounds.report(.sending(bodyLength: current.bodyLength))
        return append(current, tries: 1)
    }

    /// The next append from `current`: the rest, or as much of it as the server takes at once.
    /// `resumed`: it continues what an earlier request sent (not the next part of this one).
    private mutating func append(_ current: ResumePoint, tries: Int, resumed: Bool = true) -> Decision {
        if resumed, current.offset > 0 { rounds.report(.resumed(offset: current.offset, bodyLength: current.bodyLength)) }
        if let limit = appendLimit, limit < Self.smallestAppend, current.bodyLength - current.offset > limit {
            let requests = (current.bodyLength - current.offset + limit - 1) / limit
            let refusal = UploadFailure(
                .other,
                "the server takes at most \(limit) bytes per request (max-append-size in Upload-Limit): "
                    + "the rest would take \(requests) requests; below \(Self.smallestAppend / 1024) KiB a request, uploadmon does not send that way")
            rounds.report(.resumable(nil, startedOver: nil))
            state = .deleting(AttemptResult(outcome: .failed(refusal), response: nil, bytesSent: 0))
            return decide(.request(.delete(current)))
        }
        if let limit = appendLimit, current.bodyLength - current.offset > limit {
            let end = current.offset + limit
            state = .appending(current, tries: tries, end: end)
            return decide(.request(.appendPart(current, end: end)))
        }
        state = .appending(current, tries: tries, end: nil)
        return decide(.request(.append(current)))
    }

    /// Takes `max-append-size` from an answer's `Upload-Limit`; whether it said one.
    @discardableResult
    private mutating func learnLimit(_ response: UploadResponse) -> Bool {
        guard let limit = UploadLimit(parsing: response.header(ResumableFields.limit))?.maxAppendSize, limit > 0 else { return false }
        appendLimit = limit
        return true
    }

    /// A body (the creation's or an append's) ended without an answer. Cut, stalled, no answer:
    /// the next attempt asks where the server got to. Not after a cancel (the user no longer
    /// wants it) or a file that changed while it was read: nothing will continue it, so what
    /// the server keeps goes now, not at its age.
    private mutating func bodyEndedWithoutAnswer(_ result: AttemptResult, at current: ResumePoint) -> Decision {
        if case .failed(let failure) = result.outcome, failure.kind == .fileError || failure.kind == .cancelled {
            rounds.report(.resumable(nil, startedOver: nil))
            state = .deleting(result)
            return decide(.request(.delete(current)))
        }
        return finish(result, keeping: current)
    }

    /// A 5xx or a `429` that is not the endpoint's own answer to the whole upload (which would
    /// say the upload is complete): the upload is kept to be continued by the next attempt,
    /// which the retry policy starts after the `Retry-After` a 429 names (draft -12's retry
    /// rule: a 5xx is retried, a 429 waits, and the next attempt asks for the offset).
    static func continuable(_ response: UploadResponse) -> Bool {
        (response.status == 429 || (500..<600).contains(response.status))
            && ResumableFields.boolean(response.header(ResumableFields.complete)) != true
    }

    /// What the server had is given up: start over, in a new round.
    private mutating func gone(_ why: String) -> Decision {
        point = nil
        rounds.startOver(why)
        return beginRound()
    }

    private mutating func plain() -> Decision {
        state = .done
        return decide(.sendPlainly)
    }

    /// Ends the attempt; `keeping`: the server keeps the upload there for the next attempt.
    private mutating func finish(_ result: AttemptResult, keeping kept: ResumePoint? = nil) -> Decision {
        state = .done
        return decide(.finish(result.keeping(kept)))
    }

    private mutating func decide(_ next: Next) -> Decision {
        Decision(reports: rounds.take(), next: next)
    }
}
