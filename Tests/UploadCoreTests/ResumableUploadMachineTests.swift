import Foundation
import Testing
import UploadCore
import UploadProtocols

/// The client's resumable protocol, input by input: what each answer leads to.
@Suite struct ResumableUploadMachineTests {
    typealias Machine = ResumableUploadMachine
    static let url = Endpoint("http://example.test/photo")!
    static let file = FileFingerprint(size: 5_000_000, modificationNanoseconds: 1_700_000_000_000_000_000)
    static let length: Int64 = 5_000_300
    static let point = ResumePoint(uploadURL: "http://example.test/uploads/7", version: 8, boundary: "b", bodyLength: length, file: file, offset: 0)

    static func machine(point: ResumePoint? = nil, size: Int64 = 5_000_000, bodyLength: Int64? = length) -> Machine {
        Machine(endpoint: url, file: file, fileSize: size, point: point, bodyLength: bodyLength, threshold: 1 << 20)
    }

    static func answer(_ status: Int, _ headers: [(String, String)] = [], body: String = "") -> AttemptResult {
        AttemptResult(
            outcome: .answered(status: status),
            response: UploadResponse(status: status, reason: "", headers: headers, body: Array(body.utf8), bodyBytesTotal: Int64(body.utf8.count)),
            bytesSent: 0)
    }

    static func failed(_ kind: UploadFailure.Kind, bytes: Int64 = 0) -> AttemptResult {
        AttemptResult(outcome: .failed(UploadFailure(kind, "\(kind)")), response: nil, bytesSent: bytes)
    }

    static func request(_ decision: Machine.Decision) -> Machine.Request? {
        if case .request(let request) = decision.next { return request }
        return nil
    }

    static func finished(_ decision: Machine.Decision) -> AttemptResult? {
        if case .finish(let result) = decision.next { return result }
        return nil
    }

    static func plain(_ decision: Machine.Decision) -> Bool {
        if case .sendPlainly = decision.next { return true }
        return false
    }

    static func created(_ offset: Int64 = 0) -> AttemptResult {
        answer(201, [("Location", "/uploads/7"), ("Upload-Offset", "\(offset)")])
    }

    // MARK: a new upload

    @Test func aNewUploadAsksCreatesAndAppendsTheWholeBody() {
        var m = Self.machine()
        #expect(Self.request(m.start()) == .ask)
        #expect(Self.request(m.answered(support: .supported(version: 8), remembered: false)) == .create(version: 8))
        let afterCreation = m.created(Self.created(), boundary: "b", bodyLength: Self.length)
        #expect(afterCreation.reports == [.resumable(Self.point, startedOver: nil), .sending(bodyLength: Self.length)])
        #expect(Self.request(afterCreation) == .append(Self.point))
        let done = m.appended(Self.answer(200, body: #"{"filename": "x.jpg"}"#))
        #expect(done.reports == [.resumable(nil, startedOver: nil)], "the resource is spent")
        #expect(Self.finished(done)?.response?.status == 200)
        #expect(Self.finished(done)?.resume == nil)
    }

    @Test func smallFilesAndOriginsThatDoNotResumeGoThePlainWay() {
        var small = Self.machine(size: 1000)
        #expect(Self.plain(small.start()))
        var m = Self.machine()
        _ = m.start()
        #expect(Self.plain(m.answered(support: .unsupported, remembered: false)))
        var noLength = Self.machine()
        _ = noLength.start()
        _ = noLength.answered(support: .supported(version: 6), remembered: false)
        #expect(Self.plain(noLength.cannotCreate()))
    }

    @Test func theCreationsOffsetAndARelativeLocationMakeThePoint() {
        var m = Self.machine()
        _ = m.start()
        _ = m.answered(support: .supported(version: 6), remembered: false)
        let decision = m.created(Self.created(4096), boundary: "q", bodyLength: Self.length)
        var expected = Self.point
        expected.version = 6
        expected.boundary = "q"
        expected.offset = 4096
        #expect(Self.request(decision) == .append(expected))
        #expect(decision.reports.contains(.resumed(offset: 4096, bodyLength: Self.length)))
    }

    /// A server that said it resumes and then would not create: its reason ends the upload when
    /// the plain upload would meet it too, else the plain way (and a remembered answer is wrong).
    @Test(arguments: [
        (400, false, true), (401, false, true), (413, false, true), (404, false, false), (405, false, false), (500, false, false),
        (401, true, true), (413, true, true), (400, true, false), (404, true, false),
    ])
    func aRefusedCreation(status: Int, remembered: Bool, final: Bool) {
        var m = Self.machine()
        _ = m.start()
        _ = m.answered(support: .supported(version: 8), remembered: remembered)
        let decision = m.created(Self.answer(status), boundary: "b", bodyLength: Self.length)
        if final {
            #expect(Self.finished(decision)?.response?.status == status)
        } else {
            #expect(Self.plain(decision))
            #expect(decision.reports == [.originRefused])
        }
    }

    @Test func aCreationWithoutAUsableLocationIsNoResource() {
        for headers: [(String, String)] in [[], [("Location", "ftp://x/y")]] {
            var m = Self.machine()
            _ = m.start()
            _ = m.answered(support: .supported(version: 8), remembered: false)
            #expect(Self.plain(m.created(Self.answer(201, headers), boundary: "b", bodyLength: Self.length)))
        }
    }

    @Test func aCreationThatGotNoAnswerEndsTheAttemptAndACancelThereSentNothing() {
        var m = Self.machine()
        _ = m.start()
        _ = m.answered(support: .supported(version: 8), remembered: false)
        let ended = Self.finished(m.created(Self.failed(.connectionLost), boundary: "b", bodyLength: Self.length))
        #expect(ended?.resume == nil)
        var c = Self.machine()
        _ = c.start()
        _ = c.answered(support: .supported(version: 8), remembered: false)
        let cancelled = Self.finished(
            c.created(
                AttemptResult(outcome: .failed(.cancelled(bodySent: true)), response: nil, bytesSent: 0),
                boundary: "b", bodyLength: Self.length))
        #expect(cancelled?.outcome == .failed(.cancelled(bodySent: false)))
    }

    // MARK: continuing

    @Test func aKnownPointAsksWhereItStandsAndSendsTheRest() {
        var m = Self.machine(point: Self.point)
        #expect(Self.request(m.start()) == .head(Self.point))
        let decision = m.headed(Self.answer(204, [("Upload-Offset", "3000000"), ("Upload-Complete", "?0")]))
        var at = Self.point
        at.offset = 3_000_000
        #expect(Self.request(decision) == .append(at))
        #expect(decision.reports == [.sending(bodyLength: Self.length), .resumed(offset: 3_000_000, bodyLength: Self.length)])
    }

    @Test func aFileThatChangedStartsOver() {
        var m = Self.machine(point: Self.point, bodyLength: Self.length + 1)
        let decision = m.start()
        #expect(decision.reports == [.resumable(nil, startedOver: "the file changed since the upload began")])
        #expect(Self.request(decision) == .ask)
    }

    @Test func aCompletedUploadWhoseAnswerWasLostFetchesIt() {
        var m = Self.machine(point: Self.point)
        _ = m.start()
        #expect(Self.request(m.headed(Self.answer(204, [("Upload-Complete", "?1")]))) == .fetchAnswer(Self.point))
        let done = m.fetched(Self.answer(200, body: "{}"))
        #expect(done.reports == [.resumable(nil, startedOver: nil)])
        #expect(Self.finished(done)?.response?.status == 200)
        // A server that keeps no answer: the upload arrived, which is all that can be said.
        var n = Self.machine(point: Self.point)
        _ = n.start()
        _ = n.headed(Self.answer(204, [("Upload-Complete", "?1")]))
        let note = Self.finished(n.fetched(Self.answer(404)))
        #expect(note?.outcome == .answered(status: 200))
        #expect(note.map { String(decoding: $0.response!.body, as: UTF8.self) }?.contains("answer was lost") == true)
    }

    @Test(arguments: [
        (404, "the server no longer has the upload"), (410, "the server no longer has the upload"),
        (403, "the server answered 403 when asked where the upload stands"),
    ])
    func aResourceThatIsGoneStartsOverInANewRound(status: Int, why: String) {
        var m = Self.machine(point: Self.point)
        _ = m.start()
        let decision = m.headed(Self.answer(status))
        #expect(decision.reports == [.resumable(nil, startedOver: why)])
        #expect(Self.request(decision) == .ask)
    }

    @Test func anOffsetBeyondTheBodyOrNoneIsUnusable() {
        for headers: [(String, String)] in [[], [("Upload-Offset", "\(Self.length + 1)")], [("Upload-Offset", "-1")]] {
            var m = Self.machine(point: Self.point)
            _ = m.start()
            let decision = m.headed(Self.answer(204, headers))
            #expect(decision.reports == [.resumable(nil, startedOver: "the server gave no usable offset for the upload")])
        }
    }

    @Test func aServerErrorOrNoAnswerToTheQuestionKeepsThePointForTheNextAttempt() {
        var m = Self.machine(point: Self.point)
        _ = m.start()
        #expect(Self.finished(m.headed(Self.answer(503)))?.resume == Self.point)
        var n = Self.machine(point: Self.point)
        _ = n.start()
        #expect(Self.finished(n.headed(Self.failed(.connectTimeout)))?.resume == Self.point)
    }

    // MARK: the body

    @Test func aCutBodyKeepsThePointAndACancelledOneRemovesTheResource() {
        var m = Self.machine(point: Self.point)
        _ = m.start()
        _ = m.headed(Self.answer(204, [("Upload-Offset", "0")]))
        #expect(Self.finished(m.appended(Self.failed(.connectionLost, bytes: 100)))?.resume == Self.point)
        for kind in [UploadFailure.Kind.cancelled, .fileError] {
            var c = Self.machine(point: Self.point)
            _ = c.start()
            _ = c.headed(Self.answer(204, [("Upload-Offset", "0")]))
            let decision = c.appended(Self.failed(kind))
            #expect(decision.reports == [.resumable(nil, startedOver: nil)])
            #expect(Self.request(decision) == .delete(Self.point))
            let ended = Self.finished(c.deleted())
            #expect(ended?.outcome == .failed(UploadFailure(kind, "\(kind)")))
            #expect(ended?.resume == nil)
        }
    }

    @Test func aConflictContinuesFromTheServersOffsetAFewTimesThenStartsOver() {
        var m = Self.machine(point: Self.point)
        _ = m.start()
        _ = m.headed(Self.answer(204, [("Upload-Offset", "0")]))
        var at = Self.point
        at.offset = 10
        let first = m.appended(Self.answer(409, [("Upload-Offset", "10")]))
        #expect(Self.request(first) == .append(at))
        #expect(first.reports == [.resumed(offset: 10, bodyLength: Self.length)])
        at.offset = 20
        #expect(Self.request(m.appended(Self.answer(409, [("Upload-Offset", "20")]))) == .append(at))
        let third = m.appended(Self.answer(409, [("Upload-Offset", "30")]))
        #expect(third.reports == [.resumable(nil, startedOver: "the server and the client disagree on the offset")])
        #expect(Self.request(third) == .ask)
        // The same offset again, or none: no agreement.
        var n = Self.machine(point: Self.point)
        _ = n.start()
        _ = n.headed(Self.answer(204, [("Upload-Offset", "0")]))
        #expect(
            n.appended(Self.answer(409, [("Upload-Offset", "0")])).reports.first
                == .resumable(nil, startedOver: "the server and the client disagree on the offset"))
    }

    /// Draft -12's retry rule: a `409` with `Upload-Complete: ?0` that names no offset sends the
    /// client to ask for it, and the append goes on from what the answer says; the third
    /// conflict of an attempt gives the server's copy up.
    @Test func aConflictThatNamesNoOffsetAsksForIt() {
        var m = Self.machine(point: Self.point)
        _ = m.start()
        _ = m.headed(Self.answer(204, [("Upload-Offset", "0")]))
        #expect(Self.request(m.appended(Self.answer(409, [("Upload-Complete", "?0")]))) == .head(Self.point))
        var at = Self.point
        at.offset = 40
        let resumed = m.headed(Self.answer(204, [("Upload-Offset", "40"), ("Upload-Length", "\(Self.length)")]))
        #expect(Self.request(resumed) == .append(at))
        #expect(Self.request(m.appended(Self.answer(409))) == .head(at), "no Upload-Complete at all is asked about too")
        _ = m.headed(Self.answer(204, [("Upload-Offset", "40")]))
        let third = m.appended(Self.answer(409))
        #expect(third.reports.first == .resumable(nil, startedOver: "the server and the client disagree on the offset"))
        #expect(Self.request(third) == .ask)
        // A 409 that is the endpoint's own answer (`Upload-Complete: ?1`) is final.
        var n = Self.machine(point: Self.point)
        _ = n.start()
        _ = n.headed(Self.answer(204, [("Upload-Offset", "0")]))
        #expect(Self.finished(n.appended(Self.answer(409, [("Upload-Complete", "?1")])))?.response?.status == 409)
    }

    /// A `429` before the upload is whole keeps it for the next attempt, which the retry policy
    /// starts after the `Retry-After` it names; one that is the endpoint's own answer is final.
    @Test func tooManyRequestsKeepsTheUploadForTheNextAttemptAfterItsRetryAfter() {
        var m = Self.machine(point: Self.point)
        _ = m.start()
        _ = m.headed(Self.answer(204, [("Upload-Offset", "0")]))
        let busy = Self.answer(429, [("Upload-Complete", "?0"), ("Retry-After", "7")])
        let kept = Self.finished(m.appended(busy))
        #expect(kept?.resume == Self.point)
        #expect(RetryPolicy(maxRetries: 3).delay(after: busy.outcome, response: busy.response, attempt: 1, now: Date()) == 7)
        var o = Machine(endpoint: Self.url, file: Self.file, fileSize: 5_000_000, point: nil, bodyLength: Self.length, threshold: 1 << 20, optimistic: true)
        _ = o.start()
        _ = o.answered(support: .unanswered, remembered: false)
        #expect(Self.finished(o.createdOptimistically(busy, announced: Self.point))?.resume == Self.point, "the optimistic creation's too")
        var n = Self.machine(point: Self.point)
        _ = n.start()
        _ = n.headed(Self.answer(204, [("Upload-Offset", "0")]))
        #expect(Self.finished(n.appended(Self.answer(429, [("Upload-Complete", "?1")])))?.resume == nil)
    }

    /// From version 10 an offset answer need not say `Upload-Complete`: an upload whose offset is
    /// its length is completed by the empty append (which has its answer again); one whose
    /// server names another length than the body's cannot be continued.
    @Test func anOffsetAnswerSaysWhereTheUploadIsByItsOffsetAndLength() {
        var point = Self.point
        point.version = 10
        var m = Self.machine(point: point)
        _ = m.start()
        var end = point
        end.offset = Self.length
        #expect(Self.request(m.headed(Self.answer(204, [("Upload-Offset", "\(Self.length)"), ("Upload-Length", "\(Self.length)")]))) == .append(end))
        #expect(Self.finished(m.appended(Self.answer(200, [("Upload-Complete", "?1")], body: "{}")))?.response?.status == 200)
        var n = Self.machine(point: point)
        _ = n.start()
        let other = n.headed(Self.answer(204, [("Upload-Offset", "10"), ("Upload-Length", "99")]))
        #expect(other.reports.first == .resumable(nil, startedOver: "the server has the upload as 99 bytes long, not \(Self.length)"))
    }

    @Test func theEndpointsAnswerToTheBodyIsFinalButAServerErrorBeforeCompletionIsNot() {
        for status in [200, 201, 400, 413, 422] {
            var m = Self.machine(point: Self.point)
            _ = m.start()
            _ = m.headed(Self.answer(204, [("Upload-Offset", "0")]))
            let done = m.appended(Self.answer(status))
            #expect(Self.finished(done)?.response?.status == status)
            #expect(Self.finished(done)?.resume == nil)
        }
        var e = Self.machine(point: Self.point)
        _ = e.start()
        _ = e.headed(Self.answer(204, [("Upload-Offset", "0")]))
        #expect(Self.finished(e.appended(Self.answer(503)))?.resume == Self.point)
        var c = Self.machine(point: Self.point)
        _ = c.start()
        _ = c.headed(Self.answer(204, [("Upload-Offset", "0")]))
        #expect(Self.finished(c.appended(Self.answer(500, [("Upload-Complete", "?1")])))?.resume == nil, "the endpoint's own 500")
    }

    @Test func aServerThatKeepsLosingTheUploadIsGivenUpAfterThreeRounds() {
        var m = Self.machine(point: Self.point)
        var decision = m.start()
        var rounds = 0
        while case .request(let request) = decision.next {
            switch request {
            case .head: decision = m.headed(Self.answer(404))
            case .ask: decision = m.answered(support: .supported(version: 8), remembered: false)
            case .create:
                rounds += 1
                decision = m.created(Self.created(), boundary: "b", bodyLength: Self.length)
            case .append: decision = m.appended(Self.answer(410))
            default:
                Issue.record("unexpected \(request)")
                return
            }
        }
        #expect(rounds == 2, "one round of HEAD, two creations")
        let failure = Self.finished(decision)
        guard case .failed(let why)? = failure?.outcome else {
            Issue.record("not a failure")
            return
        }
        #expect(why.message.contains("keeps losing the upload"))
    }

    @Test func inputsOutOfOrderEndTheAttemptInsteadOfCrashing() {
        var m = Self.machine()
        #expect(Self.finished(m.appended(Self.answer(200))) != nil)
        var n = Self.machine()
        _ = n.start()
        #expect(Self.finished(n.headed(Self.answer(200))) != nil)
    }

    // MARK: optimistic creation (the body in the creation request)

    static func optimistic() -> Machine {
        Machine(endpoint: url, file: file, fileSize: 5_000_000, point: nil, bodyLength: length, threshold: 1 << 20, optimistic: true)
    }

    static let interim = UploadResponse(
        status: 104, reason: "Upload Resumption Supported",
        headers: [("Location", "/uploads/7"), ("Upload-Draft-Interop-Version", "8")], body: [], bodyBytesTotal: 0)

    /// An origin that took the question and said nothing in time: where the 104 can be seen,
    /// the body goes as an optimistic creation (a plain server answers it as the ordinary
    /// upload, which ends the attempt); elsewhere, the ordinary way.
    @Test func anOriginSilentToTheQuestionGetsAnOptimisticCreationOrThePlainUpload() {
        var m = Self.optimistic()
        _ = m.start()
        #expect(Self.request(m.answered(support: .unanswered, remembered: false)) == .createOptimistically(version: ResumableFields.currentVersion))
        let plainAnswer = m.createdOptimistically(Self.answer(201, body: "{}"), announced: nil)
        #expect(Self.finished(plainAnswer)?.response?.status == 201)
        #expect(Self.finished(plainAnswer)?.resume == nil)
        var careful = Self.machine()
        _ = careful.start()
        #expect(Self.plain(careful.answered(support: .unanswered, remembered: false)))
    }

    @Test func whereInterimAnswersAreSeenTheBodyGoesInTheCreationRequest() {
        var m = Self.optimistic()
        _ = m.start()
        #expect(Self.request(m.answered(support: .supported(version: 8), remembered: true)) == .createOptimistically(version: 8))
        let announced = Machine.announcement(Self.interim, endpoint: Self.url, version: 8, boundary: "b", bodyLength: Self.length, file: Self.file)
        #expect(announced == Self.point)
        let done = m.createdOptimistically(Self.answer(200, body: "{}"), announced: announced)
        #expect(done.reports == [.resumable(nil, startedOver: nil)])
        #expect(Self.finished(done)?.response?.status == 200)
        #expect(Self.finished(done)?.resume == nil)
    }

    @Test func anAnnouncementNeedsOurVersionAndALocation() {
        let wrongVersion = UploadResponse(
            status: 104, reason: "", headers: [("Location", "/u/1"), ("Upload-Draft-Interop-Version", "6")], body: [], bodyBytesTotal: 0)
        let noVersion = UploadResponse(status: 104, reason: "", headers: [("Location", "/u/1")], body: [], bodyBytesTotal: 0)
        let noLocation = UploadResponse(
            status: 104, reason: "", headers: [("Upload-Draft-Interop-Version", "8"), ("Upload-Offset", "100")], body: [], bodyBytesTotal: 0)
        let early = UploadResponse(
            status: 103, reason: "", headers: [("Location", "/u/1"), ("Upload-Draft-Interop-Version", "8")], body: [], bodyBytesTotal: 0)
        for interim in [wrongVersion, noVersion, noLocation, early] {
            #expect(Machine.announcement(interim, endpoint: Self.url, version: 8, boundary: "b", bodyLength: Self.length, file: Self.file) == nil)
        }
        let absolute = UploadResponse(
            status: 104, reason: "", headers: [("Location", "https://other.test/r/9"), ("Upload-Draft-Interop-Version", "6")],
            body: [], bodyBytesTotal: 0)
        #expect(
            Machine.announcement(absolute, endpoint: Self.url, version: 6, boundary: "b", bodyLength: Self.length, file: Self.file)?.uploadURL
                == "https://other.test/r/9")
    }

    @Test func aCutAfterTheAnnouncementKeepsThePointAndACutBeforeItCannot() {
        var m = Self.optimistic()
        _ = m.start()
        _ = m.answered(support: .supported(version: 8), remembered: false)
        #expect(Self.finished(m.createdOptimistically(Self.failed(.connectionLost, bytes: 3_000_000), announced: Self.point))?.resume == Self.point)
        var n = Self.optimistic()
        _ = n.start()
        _ = n.answered(support: .supported(version: 8), remembered: false)
        let lost = Self.finished(n.createdOptimistically(Self.failed(.connectionLost, bytes: 3_000_000), announced: nil))
        #expect(lost?.resume == nil)
        #expect(lost?.bytesSent == 3_000_000)
    }

    @Test func aCancelledOptimisticCreationRemovesWhatWasAnnounced() {
        var m = Self.optimistic()
        _ = m.start()
        _ = m.answered(support: .supported(version: 8), remembered: false)
        let decision = m.createdOptimistically(Self.failed(.cancelled), announced: Self.point)
        #expect(decision.reports == [.resumable(nil, startedOver: nil)])
        #expect(Self.request(decision) == .delete(Self.point))
        #expect(Self.finished(m.deleted())?.resume == nil)
    }

    @Test func anOptimisticCreationsAnswerIsTheEndpointsButAServerErrorCanBeContinued() {
        for (status, keeps) in [(200, false), (413, false), (404, false), (503, true)] {
            var m = Self.optimistic()
            _ = m.start()
            _ = m.answered(support: .supported(version: 8), remembered: false)
            let ended = Self.finished(m.createdOptimistically(Self.answer(status), announced: Self.point))
            #expect(ended?.response?.status == status)
            #expect((ended?.resume != nil) == keeps, "\(status)")
        }
        // A server that ignored the invitation answered a plain upload.
        var plain = Self.optimistic()
        _ = plain.start()
        _ = plain.answered(support: .supported(version: 8), remembered: false)
        let answered = plain.createdOptimistically(Self.answer(201), announced: nil)
        #expect(answered.reports.isEmpty)
        #expect(Self.finished(answered)?.response?.status == 201)
    }

    // MARK: a server that limits each request (`max-append-size`)

    static func at(_ offset: Int64) -> ResumePoint {
        var point = Self.point
        point.offset = offset
        return point
    }

    @Test func theBodyGoesInPartsOfTheLimitTheCreationSaid() {
        var m = Self.machine()
        _ = m.start()
        _ = m.answered(support: .supported(version: 8), remembered: false)
        let created = m.created(
            Self.answer(201, [("Location", "/uploads/7"), ("Upload-Offset", "0"), ("Upload-Limit", "max-size=10000000, max-append-size=2000000")]),
            boundary: "b", bodyLength: Self.length)
        #expect(Self.request(created) == .appendPart(Self.point, end: 2_000_000))
        // Each part taken moves the point on, without a claim of resuming.
        let second = m.appended(Self.answer(204, [("Upload-Offset", "2000000"), ("Upload-Complete", "?0")]))
        #expect(second.reports == [.resumable(Self.at(2_000_000), startedOver: nil)])
        #expect(Self.request(second) == .appendPart(Self.at(2_000_000), end: 4_000_000))
        // A server that does not say its offset took the whole part.
        #expect(Self.request(m.appended(Self.answer(204))) == .append(Self.at(4_000_000)), "the rest fits: it completes the upload")
        let done = m.appended(Self.answer(200, body: "{}"))
        #expect(Self.finished(done)?.response?.status == 200)
    }

    /// Draft -12 (PR #3470): limits said mid-upload are followed from the next append on.
    @Test func aLimitAnAppendsAnswerSaysIsFollowedFromTheNextAppend() {
        var m = Self.machine()
        _ = m.start()
        _ = m.answered(support: .supported(version: 10), remembered: false)
        var point = Self.point
        point.version = 10
        let created = m.created(
            Self.answer(201, [("Location", "/uploads/7"), ("Upload-Limit", "max-append-size=2000000")]),
            boundary: "b", bodyLength: Self.length)
        #expect(Self.request(created) == .appendPart(point, end: 2_000_000))
        var at = point
        at.offset = 2_000_000
        let smaller = m.appended(Self.answer(204, [("Upload-Offset", "2000000"), ("Upload-Limit", "max-append-size=1000000, max-age=60")]))
        #expect(Self.request(smaller) == .appendPart(at, end: 3_000_000))
    }

    @Test func aRequestRefusedAsTooLargeWithTheLimitIsSentAgainInParts() {
        var m = Self.machine()
        _ = m.start()
        _ = m.answered(support: .supported(version: 8), remembered: false)
        #expect(Self.request(m.created(Self.created(), boundary: "b", bodyLength: Self.length)) == .append(Self.point))
        let limited = Self.answer(413, [("Upload-Limit", "max-append-size=3000000")])
        #expect(Self.request(m.appended(limited)) == .appendPart(Self.point, end: 3_000_000))
        // Without the limit in it, a 413 is the answer.
        var plain = Self.machine()
        _ = plain.start()
        _ = plain.answered(support: .supported(version: 8), remembered: false)
        _ = plain.created(Self.created(), boundary: "b", bodyLength: Self.length)
        #expect(Self.finished(plain.appended(Self.answer(413)))?.response?.status == 413)
    }

    @Test func aLimitKnownBeforehandOrLearntFromTheRefusalMakesTheCreationEmpty() {
        // Said by the OPTIONS answer: no body in the creation.
        var told = Self.optimistic()
        _ = told.start()
        #expect(
            Self.request(told.answered(support: .supported(version: 8), remembered: false, limit: UploadLimit(maxAppendSize: 1_000_000))) == .create(version: 8)
        )
        // Learnt from the creation's refusal: again, created empty.
        var m = Self.optimistic()
        _ = m.start()
        _ = m.answered(support: .supported(version: 8), remembered: false)
        let refused = m.createdOptimistically(Self.answer(413, [("Upload-Limit", "max-append-size=1000000")]), announced: nil)
        #expect(Self.request(refused) == .ask)
        #expect(Self.request(m.answered(support: .supported(version: 8), remembered: false)) == .create(version: 8))
        #expect(Self.request(m.created(Self.created(), boundary: "b", bodyLength: Self.length)) == .appendPart(Self.point, end: 1_000_000))
    }

    /// A limit no sensible server sets (one byte per request: a 5 MB body as five million
    /// requests) is a refusal with the reason; what the server keeps is deleted.
    @Test(arguments: ["max-append-size=1", "max-append-size=65535"])
    func anAbsurdAppendLimitIsRefusedWithItsReason(limit: String) {
        var m = Self.machine()
        _ = m.start()
        _ = m.answered(support: .supported(version: 8), remembered: false)
        let created = m.created(
            Self.answer(201, [("Location", "/uploads/7"), ("Upload-Offset", "0"), ("Upload-Limit", limit)]),
            boundary: "b", bodyLength: Self.length)
        #expect(Self.request(created) == .delete(Self.point))
        let done = m.deleted()
        guard case .failed(let failure)? = Self.finished(done)?.outcome else {
            Issue.record("not refused: \(done)")
            return
        }
        #expect(failure.description.contains("the server takes at most") && failure.description.contains("requests"), "\(failure)")
        // 64 KiB a request is followed.
        var fine = Self.machine()
        _ = fine.start()
        _ = fine.answered(support: .supported(version: 8), remembered: false)
        let parts = fine.created(
            Self.answer(201, [("Location", "/uploads/7"), ("Upload-Offset", "0"), ("Upload-Limit", "max-append-size=65536")]),
            boundary: "b", bodyLength: Self.length)
        #expect(Self.request(parts) == .appendPart(Self.point, end: 65_536))
    }

    @Test func aCutPartContinuesInPartsFromWhereTheServerHasIt() {
        var m = Self.machine(point: Self.at(1_500_000))
        _ = m.start()
        let headed = m.headed(Self.answer(204, [("Upload-Offset", "1500000"), ("Upload-Complete", "?0"), ("Upload-Limit", "max-append-size=2000000")]))
        #expect(headed.reports.contains(.resumed(offset: 1_500_000, bodyLength: Self.length)))
        #expect(Self.request(headed) == .appendPart(Self.at(1_500_000), end: 3_500_000))
    }

    @Test func underTheMinimumSizeTheUploadGoesTheOrdinaryWay() {
        // Under min-size the server offers no resuming: the ordinary way.
        var small = Self.machine()
        _ = small.start()
        #expect(Self.plain(small.answered(support: .supported(version: 8), remembered: false, limit: UploadLimit(minSize: 10_000_000))))
        // Within it: created as usual.
        var fits = Self.machine()
        _ = fits.start()
        #expect(
            Self.request(fits.answered(support: .supported(version: 8), remembered: false, limit: UploadLimit(maxSize: 10_000_000, minSize: 0)))
                == .create(version: 8))
    }
}
