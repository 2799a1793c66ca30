import Testing
import UploadCore
import UploadProtocols

/// Which way an attempt goes, from what is known before anything is sent and from what the
/// attempt learns on the way.
@Suite struct AttemptPlanTests {
    static let big: Int64 = 5_000_000
    static let small: Int64 = 64 * 1024
    static let offered = TusCapabilities(extensions: ["creation", "termination"], maxSize: 1 << 30)

    static func plan(
        _ asked: UploadProtocol = .auto, resume: Bool = true, point: ResumableProtocol? = nil, handedOut: Bool = false,
        size: Int64? = big, direct: Bool = true, httpProxy: Bool = false, inMemory: Bool = false, known: OriginSupport? = nil
    ) -> AttemptPlan {
        AttemptPlan(
            asked: asked, resume: resume, point: point, handedOut: handedOut, size: size,
            directPossible: direct, throughHTTPProxy: httpProxy, bodyInMemory: inMemory, known: known)
    }

    static func answer(_ status: Int, _ headers: [(String, String)] = []) -> AttemptResult {
        AttemptResult(
            outcome: .answered(status: status),
            response: UploadResponse(status: status, reason: "", headers: headers, body: [], bodyBytesTotal: 0), bytesSent: 0)
    }

    @Test func aSmallPhotoGoesAsOneRequestWithoutAQuestion() {
        #expect(Self.plan(size: Self.small, inMemory: true).route == .multipart(inOneWrite: true))
        // Over TLS (or a target that cannot go on the request line as is) not in one write.
        #expect(Self.plan(size: Self.small, direct: false, inMemory: true).route == .multipart(inOneWrite: false))
        // A pipe is never asked about nor resumed.
        #expect(Self.plan(size: nil).route == .multipart(inOneWrite: false))
        // Without resuming, no question either.
        #expect(Self.plan(resume: false).route == .multipart(inOneWrite: false))
    }

    @Test func aFileWorthResumingAsksOnceThenGoesAsTheOriginSpeaks() {
        var plan = Self.plan()
        #expect(plan.route == .ask)
        plan.learnt(.tus(Self.offered))
        #expect(plan.route == .tus(Self.offered))

        for (answer, route) in [
            (OriginSupport.supported(version: 10), AttemptPlan.Route.draft(optimistic: true)),
            (.silent, .draft(optimistic: true)),
            // No connection: the draft's machine asks again (and goes plainly when it cannot tell).
            (.unknown, .draft(optimistic: true)),
            (.unsupported, .multipart(inOneWrite: false)),
        ] {
            var other = Self.plan()
            other.learnt(answer)
            #expect(other.route == route, "\(answer)")
        }
        // Through an HTTP proxy the draft's creation is careful: a 104 there ends the request.
        var proxied = Self.plan(httpProxy: true)
        proxied.learnt(.supported(version: 10))
        #expect(proxied.route == .draft(optimistic: false))
    }

    @Test func whatIsKnownOfTheOriginSkipsTheQuestion() {
        #expect(Self.plan(known: .tus(Self.offered)).route == .tus(Self.offered))
        #expect(Self.plan(known: .supported(version: 9)).route == .draft(optimistic: true))
        #expect(Self.plan(known: .unsupported).route == .multipart(inOneWrite: false))
        // Known as tus, even a small file goes by tus.
        #expect(Self.plan(size: Self.small, known: .tus(Self.offered)).route == .tus(Self.offered))
    }

    @Test func multipartAskedForNeverGoesByTusButIsResumedByTheDraft() {
        #expect(Self.plan(.multipart, known: .tus(Self.offered)).route == .multipart(inOneWrite: false))
        #expect(Self.plan(.multipart, point: .tus).route == .draft(optimistic: true))
        #expect(Self.plan(.multipart, known: .supported(version: 10)).route == .draft(optimistic: true))
        var plan = Self.plan(.multipart)
        #expect(plan.route == .draft(optimistic: true))
        plan.draftWentPlain()
        #expect(plan.route == .multipart(inOneWrite: false))
    }

    @Test func tusAskedForAsksOnceAndAssumesTheCoreWithoutAnAnswer() {
        var plan = Self.plan(.tus, size: Self.small)
        #expect(plan.route == .ask)
        plan.learnt(.unknown)
        #expect(plan.route == .tus(.assumed))
        #expect(Self.plan(.tus, point: .tus).route == .tus(.assumed))
        #expect(Self.plan(.tus, known: .unsupported).route == .tus(.assumed))
        #expect(Self.plan(.tus, size: nil, known: .tus(Self.offered)).route == .tus(Self.offered))
    }

    @Test func anUploadURLHandedOutIsTusAndNeverAsked() {
        #expect(Self.plan(.multipart, handedOut: true).route == .tus(.assumed))
        #expect(Self.plan(handedOut: true, known: .tus(Self.offered)).route == .tus(Self.offered))
    }

    @Test func aPointContinuesInItsOwnProtocol() {
        #expect(Self.plan(point: .tus).route == .tus(.assumed))
        #expect(Self.plan(point: .draft, known: .unsupported).route == .draft(optimistic: true))
        #expect(Self.plan(point: .draft, size: Self.small).route == .draft(optimistic: true))
    }

    @Test func aRememberedTusOriginRefusingAsNoTusServerIsLeftForTheOrdinaryWay() {
        var plan = Self.plan(known: .tus(Self.offered))
        #expect(plan.route == .tus(Self.offered))
        let refused = plan.tusAttemptRefused(Self.answer(404))
        #expect(refused)
        #expect(plan.route == .multipart(inOneWrite: false))
        // A refusal that the ordinary upload would meet too, or one in tus's own words, is final.
        for status in [401, 403, 407, 413] {
            var final = Self.plan(known: .tus(Self.offered))
            let isFinal = final.tusAttemptRefused(Self.answer(status))
            #expect(!isFinal, "\(status)")
        }
        var spoken = Self.plan(known: .tus(Self.offered))
        let inTusWords = spoken.tusAttemptRefused(Self.answer(400, [("Tus-Resumable", "1.0.0")]))
        #expect(!inTusWords)
        var asked = Self.plan(.tus, known: .tus(Self.offered))
        let askedForTus = asked.tusAttemptRefused(Self.answer(404))
        #expect(!askedForTus)
        var success = Self.plan(known: .tus(Self.offered))
        let succeeded = success.tusAttemptRefused(Self.answer(204))
        #expect(!succeeded)
    }

    @Test func aTusServerRefusingTheMultipartBodyIsAskedAfreshAndGetsTheFileByTus() {
        var plan = Self.plan(size: Self.small, inMemory: true, known: .unsupported)
        #expect(plan.route == .multipart(inOneWrite: true))
        let notTus = plan.plainAnsweredAsTus(Self.answer(415))
        #expect(!notTus)
        let shown = plan.plainAnsweredAsTus(Self.answer(415, [("Tus-Resumable", "1.0.0")]))
        #expect(shown)
        #expect(plan.route == .ask && plan.askAfresh)
        plan.learnt(.tus(Self.offered))
        #expect(plan.route == .tus(Self.offered) && !plan.askAfresh)
        // Once only; and never under `--protocol multipart`.
        let again = plan.plainAnsweredAsTus(Self.answer(415, [("Tus-Resumable", "1.0.0")]))
        #expect(!again)
        var multipart = Self.plan(.multipart, size: Self.small)
        let underMultipart = multipart.plainAnsweredAsTus(Self.answer(415, [("Tus-Resumable", "1.0.0")]))
        #expect(!underMultipart)
    }

    @Test func putAskedForIsAPutWhateverIsKnown() {
        #expect(Self.plan(.put, known: .tus(Self.offered)).route == .put(inOneWrite: false))
        #expect(Self.plan(.put, point: .draft).route == .put(inOneWrite: false))
        #expect(Self.plan(.put, size: Self.small, inMemory: true).route == .put(inOneWrite: true))
        #expect(Self.plan(.put, size: Self.small, direct: false, inMemory: true).route == .put(inOneWrite: false))
    }

    @Test func aRequestGoesOnOurOwnConnectionWhereItCan() {
        #expect(AttemptPlan.carrier(directPossible: true, bodyLength: 10, hasBody: true) == .direct)
        #expect(AttemptPlan.carrier(directPossible: true, bodyLength: nil, hasBody: false) == .direct)
        // A pipe's body of unknown length, and TLS, go by AsyncHTTPClient.
        #expect(AttemptPlan.carrier(directPossible: true, bodyLength: nil, hasBody: true) == .client)
        #expect(AttemptPlan.carrier(directPossible: false, bodyLength: 10, hasBody: true) == .client)
    }
}

/// The discovery question, answer by answer.
@Suite struct DiscoveryMachineTests {
    static func answer(_ status: Int, _ headers: [(String, String)] = []) -> AttemptResult {
        AttemptPlanTests.answer(status, headers)
    }

    static func failed(_ kind: UploadFailure.Kind) -> AttemptResult {
        AttemptResult(outcome: .failed(UploadFailure(kind, "\(kind)")), response: nil, bytesSent: 0)
    }

    @Test func itAsksInOurVersionAndOnceMoreInTheOneAnOlderServerNames() {
        var machine = DiscoveryMachine()
        #expect(machine.start() == .ask(version: ResumableFields.currentVersion))
        let refused = machine.answered(Self.answer(400, [("Upload-Draft-Interop-Version", "8")]), late: false)
        #expect(refused.next == .ask(version: 8))
        let spoken = machine.answered(Self.answer(204, [("Upload-Draft-Interop-Version", "8")]), late: false)
        #expect(spoken.next == .done(.supported(version: 8)))
        #expect(spoken.reports == [.limit(nil)])
    }

    @Test func twoRefusalsAreAnAnswer() {
        var machine = DiscoveryMachine()
        _ = machine.start()
        _ = machine.answered(Self.answer(400, [("Upload-Draft-Interop-Version", "8")]), late: false)
        #expect(machine.answered(Self.answer(400, [("Upload-Draft-Interop-Version", "6")]), late: false).next == .done(.unsupported))
    }

    @Test func aTusServerSaysWhatItOffersAndADigestWishIsNoted() {
        var machine = DiscoveryMachine()
        _ = machine.start()
        let decision = machine.answered(
            Self.answer(
                204,
                [
                    ("Tus-Resumable", "1.0.0"), ("Tus-Version", "1.0.0"), ("Tus-Extension", "creation,termination"),
                    ("Tus-Max-Size", "1000"), ("Want-Repr-Digest", "sha-256=10"),
                ]), late: false)
        #expect(decision.next == .done(.tus(TusCapabilities(extensions: ["creation", "termination"], maxSize: 1000))))
        #expect(decision.reports == [.verifies])
    }

    @Test func noAnswerSaysWhetherToAskAgain() {
        for (result, late, verdict) in [
            (Self.failed(.cannotConnect), false, OriginSupport.unknown),
            (Self.failed(.connectTimeout), false, .unknown),
            (Self.failed(.cancelled), true, .silent),
            (Self.failed(.noAnswer), false, .unsupported),
            (Self.answer(405), false, .unsupported),
            (Self.answer(204, [("Upload-Limit", "max-size=100")]), false, .supported(version: ResumableFields.currentVersion)),
        ] {
            var machine = DiscoveryMachine()
            _ = machine.start()
            #expect(machine.answered(result, late: late).next == .done(verdict), "\(result.outcome) late \(late)")
        }
    }
}

/// The ordinary upload and the redirects it is given.
@Suite struct PlainUploadMachineTests {
    static let endpoint = Endpoint("http://h:1/photo")!
    static let token = [RequestHeader(name: "Authorization", value: "Bearer t")]

    static func redirect(_ status: Int, to location: String, sent: Int64 = 10) -> AttemptResult {
        AttemptResult(
            outcome: .answered(status: status),
            response: UploadResponse(status: status, reason: "", headers: [("Location", location)], body: [], bodyBytesTotal: 0),
            bytesSent: sent)
    }

    static func sent(_ next: PlainUploadMachine.Next) -> (Endpoint, [RequestHeader])? {
        if case .send(let endpoint, let headers) = next { return (endpoint, headers) }
        return nil
    }

    static func finished(_ next: PlainUploadMachine.Next) -> AttemptResult? {
        if case .finish(let result) = next { return result }
        return nil
    }

    /// Without `--location`, a redirect to another origin ends the attempt: nothing is sent
    /// there, and the failure says where the server wanted the file and what would follow it.
    @Test func aRedirectToAnotherOriginIsFollowedOnlyWhenAsked() throws {
        for elsewhere in ["http://h:2/x", "https://h:1/x", "http://10.0.0.1:1/photo", "http://localhost:1/photo"] {
            var machine = PlainUploadMachine(endpoint: Self.endpoint, headers: Self.token, canSendAgain: true)
            let end = try #require(Self.finished(machine.answered(Self.redirect(308, to: elsewhere))), "\(elsewhere)")
            guard case .failed(let failure) = end.outcome else {
                Issue.record("\(elsewhere): followed")
                continue
            }
            #expect(
                failure.message.contains("wanted the file at \(Endpoint(elsewhere)!.shown)") && failure.message.contains("-L (--location)"),
                "\(failure.message)")
        }
        var put = PutUploadMachine(endpoint: Self.endpoint, fileName: "k.jpg", headers: [], canSendAgain: true, createDirs: false)
        guard case .finish(let end) = put.answered(Self.redirect(307, to: "http://h:2/landing")), case .failed = end.outcome else {
            Issue.record("a PUT followed a redirect to another origin without --location")
            return
        }
        // Within the origin, as before.
        var machine = PlainUploadMachine(endpoint: Self.endpoint, headers: Self.token, canSendAgain: true)
        #expect(Self.sent(machine.answered(Self.redirect(307, to: "/moved")))?.0.url == "http://h:1/moved")
    }

    @Test func aRedirectIsFollowedWithTheHeadersOnlyOnTheEndpointsOrigin() throws {
        var machine = PlainUploadMachine(endpoint: Self.endpoint, headers: Self.token, canSendAgain: true, followsOtherOrigins: true)
        #expect(Self.sent(machine.start())?.1 == Self.token)
        let same = try #require(Self.sent(machine.answered(Self.redirect(307, to: "/elsewhere"))))
        #expect(same.0.url == "http://h:1/elsewhere" && same.1 == Self.token)
        #expect(!machine.isFirstRequest)
        let other = try #require(Self.sent(machine.answered(Self.redirect(308, to: "http://h:2/x"))))
        #expect(other.0.url == "http://h:2/x" && other.1.isEmpty)
        // Relative to where the last one pointed.
        let relative = try #require(Self.sent(machine.answered(Self.redirect(307, to: "y"))))
        #expect(relative.0.url == "http://h:2/y" && relative.1.isEmpty)
        let done = try #require(Self.finished(machine.answered(AttemptPlanTests.answer(201))))
        #expect(done.response?.status == 201)
        #expect(done.bytesSent == 30)
    }

    /// A signed upload (S3: the signature and session token are made for the endpoint's
    /// origin) follows a redirect within that origin, and none to another: the attempt ends
    /// saying where the server wanted the file, with nothing sent there.
    @Test func aSignedUploadNeverFollowsARedirectToAnotherOrigin() throws {
        var machine = PlainUploadMachine(endpoint: Self.endpoint, headers: Self.token, canSendAgain: true, signed: true, followsOtherOrigins: true)
        let same = try #require(Self.sent(machine.answered(Self.redirect(307, to: "/moved"))))
        #expect(same.0.url == "http://h:1/moved" && same.1 == Self.token)
        for elsewhere in ["http://h:2/landing", "https://h:1/landing", "http://localhost:1/landing", "http://h2:1/x"] {
            // Not even with --location: the signature is the origin's.
            var machine = PlainUploadMachine(endpoint: Self.endpoint, headers: [], canSendAgain: true, signed: true, followsOtherOrigins: true)
            let end = try #require(Self.finished(machine.answered(Self.redirect(307, to: elsewhere, sent: 10))), "\(elsewhere)")
            guard case .failed(let failure) = end.outcome else {
                Issue.record("\(elsewhere): \(end.outcome)")
                continue
            }
            #expect(failure.message.contains("wanted the file at \(Endpoint(elsewhere)!.shown)"), "\(failure.message)")
            #expect(failure.message.contains("another origin") && failure.message.contains("http://h:1"), "\(failure.message)")
            #expect(end.response?.status == 307 && end.bytesSent == 10)
        }
        // Through the PUT machine, as S3's single PUT goes.
        var put = PutUploadMachine(endpoint: Self.endpoint, fileName: "k.jpg", headers: [], canSendAgain: true, createDirs: false, signed: true)
        guard case .finish(let end) = put.answered(Self.redirect(307, to: "http://h:2/landing")), case .failed = end.outcome else {
            Issue.record("a signed PUT followed a redirect to another origin")
            return
        }
    }

    @Test func otherAnswersAndUnusableLocationsAreTheAnswer() {
        for result in [Self.redirect(302, to: "/x"), Self.redirect(307, to: "ftp://h/x"), AttemptPlanTests.answer(307)] {
            var machine = PlainUploadMachine(endpoint: Self.endpoint, headers: [], canSendAgain: true)
            _ = machine.start()
            #expect(Self.finished(machine.answered(result))?.response?.status == result.response?.status)
        }
        // A pipe's body cannot be read again.
        var pipe = PlainUploadMachine(endpoint: Self.endpoint, headers: [], canSendAgain: false)
        #expect(Self.finished(pipe.answered(Self.redirect(307, to: "/x")))?.response?.status == 307)
    }

    @Test func moreThanFiveRedirectsEndTheAttemptNamingTheLast() throws {
        var machine = PlainUploadMachine(endpoint: Self.endpoint, headers: [], canSendAgain: true)
        for hop in 1...PlainUploadMachine.maxRedirects {
            #expect(Self.sent(machine.answered(Self.redirect(307, to: "/hop\(hop)"))) != nil)
        }
        let end = try #require(Self.finished(machine.answered(Self.redirect(307, to: "/hop6?token=s3cret"))))
        guard case .failed(let failure) = end.outcome else {
            Issue.record("\(end.outcome)")
            return
        }
        #expect(failure.kind == .tooManyRedirects)
        #expect(failure.message == "more than 5 redirects; the last pointed to http://h:1/hop6?token=***")
        #expect(end.bytesSent == 60)
    }
}

/// What a removal of an upload resource came to, in words.
@Suite struct RemovalWordsTests {
    @Test func goneOrWhyNot() {
        for status in [200, 204, 404, 410] {
            #expect(ResumableUploadMachine.removal(AttemptPlanTests.answer(status)) == "removed from the server", "\(status)")
        }
        #expect(ResumableUploadMachine.removal(AttemptPlanTests.answer(403)) == "the server answered 403 to its removal")
        let cut = AttemptResult(outcome: .failed(UploadFailure(.cannotConnect, "connection refused")), response: nil, bytesSent: 0)
        #expect(ResumableUploadMachine.removal(cut).hasPrefix("not removed: "))
    }
}
