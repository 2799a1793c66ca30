import Foundation
import Testing
import UploadCore
import UploadProtocols

/// tus 1.0.0 on the client, input by input: what each answer leads to.
@Suite struct TusUploadMachineTests {
    typealias Machine = TusUploadMachine
    static let url = Endpoint("http://example.test/files/")!
    static let file = FileFingerprint(size: 10_000_000, modificationNanoseconds: 1_700_000_000_000_000_000)
    static let length: Int64 = 10_000_000
    static let resource = "http://example.test/files/abc"
    static let point = ResumePoint.tus(uploadURL: resource, bodyLength: length, file: file)

    static func machine(
        point: ResumePoint? = nil, capabilities: TusCapabilities = .assumed, chunk: Int64? = nil,
        length: Int64 = length
    ) -> Machine {
        Machine(endpoint: url, file: file, length: length, point: point, capabilities: capabilities, chunkSize: chunk)
    }

    static func answer(_ status: Int, _ headers: [(String, String)] = [], sent: Int64 = 0) -> AttemptResult {
        AttemptResult(
            outcome: .answered(status: status),
            response: UploadResponse(status: status, reason: "", headers: [("Tus-Resumable", "1.0.0")] + headers, body: [], bodyBytesTotal: 0),
            bytesSent: sent)
    }

    static func failed(_ kind: UploadFailure.Kind) -> AttemptResult {
        AttemptResult(outcome: .failed(UploadFailure(kind, "\(kind)")), response: nil, bytesSent: 0)
    }

    static func request(_ decision: Machine.Decision) -> Machine.Request? {
        if case .request(let request) = decision.next { return request }
        return nil
    }

    static func finished(_ decision: Machine.Decision) -> AttemptResult? {
        if case .finish(let result) = decision.next { return result }
        return nil
    }

    static func at(_ offset: Int64, expires: String? = nil) -> ResumePoint {
        var point = Self.point
        point.offset = offset
        point.expires = expires
        return point
    }

    /// A creation answered with a success but no upload URL made nothing to send the file to:
    /// a protocol error, never the upload's success.
    @Test func aCreationWithoutAnUploadURLIsAFailureNotASuccess() throws {
        for headers in [[(String, String)](), [("Location", "ftp://elsewhere/x")]] {
            var m = Self.machine()
            _ = m.start()
            let end = try #require(Self.finished(m.created(Self.answer(201, headers))))
            guard case .failed(let failure) = end.outcome else {
                Issue.record("\(end.outcome)")
                continue
            }
            #expect(failure.message.contains("answered 201 to the creation"), "\(failure.message)")
        }
        var stream = TusStreamMachine(endpoint: Self.url, capabilities: .assumed)
        _ = stream.start()
        guard case .finish(let end) = stream.created(Self.answer(200)), case .failed = end.outcome else {
            Issue.record("a streamed tus creation without Location counted as success")
            return
        }
    }

    @Test func aNewUploadIsCreatedThenSentWholeInOnePatch() {
        var m = Self.machine()
        #expect(Self.request(m.start()) == .create(length: Self.length, withBody: false))
        let created = m.created(Self.answer(201, [("Location", "/files/abc")]))
        #expect(created.reports == [.resumable(Self.point, startedOver: nil), .sending(bodyLength: Self.length)])
        #expect(Self.request(created) == .patch(Self.point, end: Self.length))
        let done = m.patched(Self.answer(204, [("Upload-Offset", "\(Self.length)")], sent: Self.length))
        #expect(done.reports == [.resumable(nil, startedOver: nil)])
        let result = Self.finished(done)
        #expect(result?.outcome == .answered(status: 204))
        #expect(result?.response?.textBody == "stored at \(Self.resource) (10.0 MB)")
        #expect(result?.resume == nil)
    }

    @Test func chunksFollowTheServersOffset() {
        var m = Self.machine(chunk: 4_000_000)
        _ = m.start()
        #expect(Self.request(m.created(Self.answer(201, [("Location", Self.resource)]))) == .patch(Self.point, end: 4_000_000))
        // The server took less than the chunk: the next one starts where it stopped.
        let second = m.patched(Self.answer(204, [("Upload-Offset", "3000000")]))
        #expect(second.reports == [.resumable(Self.at(3_000_000), startedOver: nil)])
        #expect(Self.request(second) == .patch(Self.at(3_000_000), end: 7_000_000))
        #expect(Self.request(m.patched(Self.answer(204, [("Upload-Offset", "7000000")]))) == .patch(Self.at(7_000_000), end: Self.length))
        #expect(Self.finished(m.patched(Self.answer(204, [("Upload-Offset", "\(Self.length)")])))?.outcome.isSuccess == true)
    }

    @Test func aSmallFileGoesInTheCreationWhenTheServerTakesIt() {
        var m = Self.machine(capabilities: TusCapabilities(extensions: ["creation", "creation-with-upload"]), length: 50_000)
        let start = m.start()
        #expect(start.reports == [.sending(bodyLength: 50_000)])
        #expect(Self.request(start) == .create(length: 50_000, withBody: true))
        let done = m.created(Self.answer(201, [("Location", Self.resource), ("Upload-Offset", "50000")]))
        #expect(Self.finished(done)?.outcome == .answered(status: 201))
        // Without the extension, an empty creation.
        var plain = Self.machine(length: 50_000)
        #expect(Self.request(plain.start()) == .create(length: 50_000, withBody: false))
    }

    /// A creation cut while it carried the file leaves no upload URL: whatever the server kept
    /// of it cannot be continued. The next attempt (given what this one learnt of the link)
    /// creates empty, so its body's cut can be continued or, from a server that keeps nothing
    /// of a cut, noticed.
    @Test func aCreationCutWithItsBodyIsNotSentWithTheBodyAgain() throws {
        let capabilities = TusCapabilities(extensions: ["creation", "creation-with-upload"])
        var m = Self.machine(capabilities: capabilities, length: 900_000)
        #expect(Self.request(m.start()) == .create(length: 900_000, withBody: true))
        var cut = Self.failed(.connectionLost)
        cut.bytesSent = 600_000
        let ended = try #require(Self.finished(m.created(cut)))
        #expect(ended.resume == nil)
        #expect(m.link.cutAfter == 600_000)
        var next = Self.machine(capabilities: capabilities, length: 900_000)
        next.link = m.link
        #expect(Self.request(next.start()) == .create(length: 900_000, withBody: false))
        // A smaller file than the cut request still goes in its creation; a cancel teaches nothing.
        var small = Self.machine(capabilities: capabilities, length: 500_000)
        small.link = m.link
        #expect(Self.request(small.start()) == .create(length: 500_000, withBody: true))
        var cancelled = Self.machine(capabilities: capabilities, length: 900_000)
        _ = cancelled.start()
        var stop = Self.failed(.cancelled)
        stop.bytesSent = 600_000
        _ = cancelled.created(stop)
        #expect(cancelled.link.cutAfter == nil)
    }

    @Test func aCutPatchKeepsThePointAndTheNextAttemptAsksTheOffset() {
        var m = Self.machine()
        _ = m.start()
        _ = m.created(Self.answer(201, [("Location", Self.resource)]))
        let cut = Self.finished(m.patched(Self.failed(.connectionLost)))
        #expect(cut?.resume == Self.point)
        var next = Self.machine(point: cut?.resume)
        #expect(Self.request(next.start()) == .head(Self.point))
        let headed = next.headed(
            Self.answer(
                200,
                [
                    ("Upload-Offset", "6000000"), ("Upload-Length", "\(Self.length)"),
                    ("Upload-Expires", "Mon, 30 Nov 2026 21:00:00 GMT"),
                ]))
        let resumed = Self.at(6_000_000, expires: "Mon, 30 Nov 2026 21:00:00 GMT")
        #expect(
            headed.reports == [
                .resumable(resumed, startedOver: nil), .sending(bodyLength: Self.length),
                .resumed(offset: 6_000_000, bodyLength: Self.length),
            ])
        #expect(Self.request(headed) == .patch(resumed, end: Self.length))
    }

    /// A server that keeps nothing of a cut `PATCH` names, after the cut, the offset the cut
    /// request began at: the rest goes in chunks sized from the link, and it is said (for the
    /// shell to remember of the origin). One that kept part of it, or a cut too early to tell,
    /// changes nothing.
    @Test func aServerThatKeptNothingOfACutPatchGetsTheRestInChunks() {
        let cutAfter: Int64 = 4_000_000
        var m = Self.machine()
        _ = m.start()
        _ = m.created(Self.answer(201, [("Location", Self.resource)]))
        let cut = Self.finished(m.patched(AttemptResult(outcome: .failed(UploadFailure(.connectionLost, "cut")), response: nil, bytesSent: cutAfter)))
        #expect(cut?.resume?.unconfirmed == cutAfter && cut?.resume?.offset == 0)

        var next = Self.machine(point: cut?.resume)
        next.link = LinkEstimate(roundTrip: 0.05, throughput: 40_000_000)  // 2 MB of round trip: 40 MB by the 5 % rule
        _ = next.start()
        let headed = next.headed(Self.answer(200, [("Upload-Offset", "0"), ("Upload-Length", "\(Self.length)")]))
        let chunk = next.link.chunk
        #expect(next.link.cutAfter == cutAfter)
        #expect(chunk == 524_288 * 2, "an eighth of what the cut request carried (500 kB), at least 1 MiB: \(chunk)")
        #expect(headed.reports.first == .discardsCutRequests(chunk: chunk))
        #expect(Self.request(headed) == .patch(Self.at(0), end: chunk))
        #expect(Self.request(next.patched(Self.answer(204, [("Upload-Offset", "\(chunk)")], sent: chunk))) == .patch(Self.at(chunk), end: 2 * chunk))

        // It kept part of the cut request: the rest in one, nothing said.
        var kept = Self.machine(point: cut?.resume)
        _ = kept.start()
        let partly = kept.headed(Self.answer(200, [("Upload-Offset", "3000000")]))
        #expect(!partly.reports.contains(.discardsCutRequests(chunk: LinkEstimate.defaultChunk)))
        #expect(Self.request(partly) == .patch(Self.at(3_000_000), end: Self.length))
        // Cut after too little to tell.
        var early = Self.point
        early.unconfirmed = 100_000
        var little = Self.machine(point: early)
        _ = little.start()
        #expect(Self.request(little.headed(Self.answer(200, [("Upload-Offset", "0")]))) == .patch(Self.at(0), end: Self.length))
        // A size the user asked for stays.
        var asked = Machine(endpoint: Self.url, file: Self.file, length: Self.length, point: cut?.resume, capabilities: .assumed, chunkSize: 3_000_000)
        _ = asked.start()
        let own = asked.headed(Self.answer(200, [("Upload-Offset", "0")]))
        #expect(own.reports.first == .discardsCutRequests(chunk: 3_000_000) && Self.request(own) == .patch(Self.at(0), end: 3_000_000))
    }

    /// An origin remembered to keep nothing of a cut request gets chunks from the first `PATCH`.
    @Test func anOriginKnownToDiscardCutRequestsGetsChunksFromTheStart() {
        var m = Self.machine(capabilities: TusCapabilities(discardsCutRequests: true))
        _ = m.start()
        #expect(Self.request(m.created(Self.answer(201, [("Location", Self.resource)]))) == .patch(Self.point, end: LinkEstimate.defaultChunk))
        // Where requests to it were cut is remembered too: chunks of an eighth of that.
        var n = Self.machine(capabilities: TusCapabilities(discardsCutRequests: true, cutAfter: 16 << 20))
        _ = n.start()
        #expect(Self.request(n.created(Self.answer(201, [("Location", Self.resource)]))) == .patch(Self.point, end: 2 << 20))
        let decoded = try? JSONDecoder().decode(TusCapabilities.self, from: Data(#"{"extensions":["creation"],"checksumAlgorithms":[]}"#.utf8))
        #expect(decoded == TusCapabilities(), "capabilities remembered before this was learnt still read")
    }

    /// A `413` whose answer names the most one request may carry (aiohttp's words) sends the
    /// rest in chunks of that; one that names no size, or several, is the upload's answer.
    @Test func aRefusalNamingTheSizeOneRequestMayCarryIsTakenAsTheServersRule() {
        func refused(_ body: String) -> AttemptResult {
            AttemptResult(
                outcome: .answered(status: 413),
                response: UploadResponse(status: 413, reason: "", headers: [], body: Array(body.utf8), bodyBytesTotal: Int64(body.utf8.count)),
                bytesSent: 0)
        }
        var m = Self.machine()
        _ = m.start()
        _ = m.created(Self.answer(201, [("Location", Self.resource)]))
        let limited = m.patched(refused("Maximum request body size 2097152 exceeded."))
        #expect(limited.reports == [.requestLimit(bytes: 2_097_152)])
        #expect(Self.request(limited) == .patch(Self.point, end: 2_097_152))
        #expect(Self.request(m.patched(Self.answer(204, [("Upload-Offset", "2097152")], sent: 2_097_152))) == .patch(Self.at(2_097_152), end: 4_194_304))
        // Nothing to read a size from, or more than one size: the server's answer, as it came.
        for body in ["Request Entity Too Large", "body of 10000000 bytes over the limit of 2097152 or 3145728", ""] {
            var n = Self.machine()
            _ = n.start()
            _ = n.created(Self.answer(201, [("Location", Self.resource)]))
            let final = n.patched(refused(body))
            #expect(Self.finished(final)?.response?.status == 413, "\(body)")
            #expect(Self.finished(final)?.resume == Self.point, "kept: another attempt may go in chunks")
        }
        // The number must be under what was sent, and is taken in whole 64 KiB.
        #expect(Machine.requestLimit(in: refused("limit 20000000").response!, sent: 10_000_000) == nil)
        #expect(Machine.requestLimit(in: refused("limit: 1000000 bytes").response!, sent: 10_000_000) == 983_040)
        #expect(Machine.requestLimit(in: refused("limit 1000").response!, sent: 10_000_000) == nil, "under 64 KiB is no rule to follow")
        // Remembered of the origin: chunks of it from the first PATCH.
        var o = Self.machine(capabilities: TusCapabilities(maxRequest: 3_000_000))
        _ = o.start()
        #expect(Self.request(o.created(Self.answer(201, [("Location", Self.resource)]))) == .patch(Self.point, end: 3_000_000))
    }

    /// Chunks whose round trip costs 5 % of their sending time, and no larger: a cut loses one.
    @Test func aChunkIsTwentyRoundTripsOfTheLink() {
        #expect(LinkEstimate().chunk == 4 << 20, "nothing known yet")
        #expect(LinkEstimate(roundTrip: 0.05, throughput: 10_000_000).chunk == 10_027_008)
        #expect(LinkEstimate(roundTrip: 0.0002, throughput: 1_000_000_000).chunk == 4_063_232, "loopback")
        #expect(LinkEstimate(roundTrip: 0.00001, throughput: 1_000_000).chunk == 1 << 20, "at least 1 MiB")
        #expect(LinkEstimate(roundTrip: 2, throughput: 100_000_000).chunk == 64 << 20, "at most 64 MiB")
        #expect(
            LinkEstimate(roundTrip: 0.05, throughput: 10_000_000, cutAfter: 40_000_000).chunk == 5_046_272,
            "a link that cut a 40 MB request: an eighth of that, in whole 64 KiB")
        #expect(
            LinkEstimate(roundTrip: 0.001, throughput: 10_000_000, cutAfter: 400_000_000).chunk == 1 << 20,
            "the 5 % size when it is the smaller")
        var link = LinkEstimate()
        link.cut(after: 100_000)
        #expect(link.cutAfter == nil, "too little to say")
        link.cut(after: 30_000_000)
        link.cut(after: 20_000_000)
        link.cut(after: 25_000_000)
        #expect(link.cutAfter == 20_000_000, "the least seen")
        link.answered(after: 0.2)
        link.answered(after: 0.05)
        link.answered(after: 0.3)
        #expect(link.roundTrip == 0.05, "the least seen")
        link.sent(1000, in: 1)
        #expect(link.throughput == nil, "too little to say")
        link.sent(10_000_000, in: 1)
        link.sent(30_000_000, in: 1)
        #expect(link.throughput == 20_000_000)
    }

    @Test func anUploadTheServerAlreadyHasWholeEndsAtTheHead() {
        var m = Self.machine(point: Self.point)
        _ = m.start()
        let done = m.headed(Self.answer(200, [("Upload-Offset", "\(Self.length)")]))
        #expect(Self.finished(done)?.outcome == .answered(status: 200))
        #expect(Self.finished(done)?.response?.textBody?.hasPrefix("stored at \(Self.resource)") == true)
    }

    @Test func anUploadTheServerLostOrLetExpireStartsOver() {
        for (status, why) in [
            (404, "the server no longer has the upload"), (410, "the server let the upload expire"), (403, "the server no longer has the upload"),
        ] {
            var m = Self.machine(point: Self.at(5_000_000))
            _ = m.start()
            let gone = m.headed(Self.answer(status))
            #expect(gone.reports == [.resumable(nil, startedOver: why)])
            #expect(Self.request(gone) == .create(length: Self.length, withBody: false))
        }
        // …and a server whose upload is of another length.
        var m = Self.machine(point: Self.point)
        _ = m.start()
        let other = m.headed(Self.answer(200, [("Upload-Offset", "0"), ("Upload-Length", "5")]))
        #expect(Self.request(other) == .create(length: Self.length, withBody: false))
    }

    @Test func aServerThatKeepsLosingTheUploadIsGivenUpAfterThreeRounds() {
        var m = Self.machine(point: Self.point)
        _ = m.start()
        _ = m.headed(Self.answer(404))
        _ = m.created(Self.answer(201, [("Location", Self.resource)]))
        _ = m.patched(Self.answer(404))
        _ = m.created(Self.answer(201, [("Location", Self.resource)]))
        let last = m.patched(Self.answer(410))
        #expect(
            Self.finished(last)?.outcome == .failed(UploadFailure(.other, "the server keeps losing the upload (the server let the upload expire); giving up")))
    }

    @Test func anOffsetConflictAsksTheServersOffset() {
        var m = Self.machine(point: Self.at(1_000))
        _ = m.start()
        _ = m.headed(Self.answer(204, [("Upload-Offset", "1000")]))
        #expect(Self.request(m.patched(Self.answer(409))) == .head(Self.at(1_000)))
        #expect(Self.request(m.headed(Self.answer(204, [("Upload-Offset", "2000")]))) == .patch(Self.at(2_000), end: Self.length))
        #expect(Self.request(m.patched(Self.answer(409))) == .head(Self.at(2_000)))
        _ = m.headed(Self.answer(204, [("Upload-Offset", "2000")]))
        // A third conflict in a row: the two sides cannot agree; start over.
        let third = m.patched(Self.answer(409))
        #expect(third.reports == [.resumable(nil, startedOver: "the server and the client disagree on the offset")])
    }

    @Test func aDamagedChunkIsSentAgainAndOnlyThatChunk() {
        var m = Self.machine(chunk: 4_000_000)
        _ = m.start()
        _ = m.created(Self.answer(201, [("Location", Self.resource)]))
        _ = m.patched(Self.answer(204, [("Upload-Offset", "4000000")]))
        #expect(Self.request(m.patched(Self.answer(460))) == .patch(Self.at(4_000_000), end: 8_000_000))
        #expect(Self.request(m.patched(Self.answer(460))) == .patch(Self.at(4_000_000), end: 8_000_000))
        let given = Self.finished(m.patched(Self.answer(460)))
        #expect(given?.outcome.isSuccess == false)
        if case .failed(let failure)? = given?.outcome { #expect(failure.kind == .integrityMismatch) }
        #expect(given?.resume == Self.at(4_000_000), "the next attempt continues from there")
    }

    @Test func aServerThatTakesNothingIsNotAskedForever() {
        var m = Self.machine(point: Self.at(100))
        _ = m.start()
        _ = m.headed(Self.answer(204, [("Upload-Offset", "100")]))
        #expect(Self.request(m.patched(Self.answer(204, [("Upload-Offset", "100")]))) == .patch(Self.at(100), end: Self.length))
        #expect(Self.request(m.patched(Self.answer(204, [("Upload-Offset", "100")]))) == .patch(Self.at(100), end: Self.length))
        #expect(
            Self.finished(m.patched(Self.answer(204, [("Upload-Offset", "100")])))?.outcome
                == .failed(UploadFailure(.other, "the server takes no bytes at offset 100")))
        // An offset past the file or going back is not usable.
        var back = Self.machine(point: Self.at(100))
        _ = back.start()
        _ = back.headed(Self.answer(204, [("Upload-Offset", "100")]))
        #expect(Self.finished(back.patched(Self.answer(204, [("Upload-Offset", "50")])))?.outcome.isSuccess == false)
    }

    @Test func refusalsAreTheUploadsAnswerAndServerErrorsKeepThePoint() {
        var refused = Self.machine()
        _ = refused.start()
        #expect(Self.finished(refused.created(Self.answer(413)))?.outcome == .answered(status: 413))
        var failing = Self.machine(point: Self.at(10))
        _ = failing.start()
        _ = failing.headed(Self.answer(200, [("Upload-Offset", "10")]))
        let server = Self.finished(failing.patched(Self.answer(503)))
        #expect(server?.outcome == .answered(status: 503))
        #expect(server?.resume == Self.at(10))
    }

    @Test func aCancelTerminatesTheUploadWhenTheServerLetsIt() {
        var m = Self.machine(capabilities: TusCapabilities(extensions: ["creation", "termination"]))
        _ = m.start()
        _ = m.created(Self.answer(201, [("Location", Self.resource)]))
        let cancelled = m.patched(Self.failed(.cancelled))
        #expect(cancelled.reports == [.resumable(nil, startedOver: nil)])
        #expect(Self.request(cancelled) == .delete(Self.point))
        #expect(Self.finished(m.deleted())?.outcome == .failed(UploadFailure(.cancelled, "cancelled")))
        // Without `termination`, the upload is only forgotten.
        var plain = Self.machine()
        _ = plain.start()
        _ = plain.created(Self.answer(201, [("Location", Self.resource)]))
        #expect(Self.finished(plain.patched(Self.failed(.fileError)))?.resume == nil)
    }

    @Test func aFileLargerThanTheServerTakesIsRefusedAtOnce() {
        var m = Self.machine(capabilities: TusCapabilities(maxSize: 1_000_000))
        let refused = Self.finished(m.start())
        #expect(
            refused?.outcome
                == .failed(
                    UploadFailure(
                        .other,
                        "the server takes uploads of at most 1.00 MB (Tus-Max-Size); this one is 10.0 MB")))
    }

    @Test func anUploadURLHandedOutIsContinuedAndNeverCreated() {
        var m = Machine(endpoint: Self.url, file: Self.file, length: Self.length, point: nil, capabilities: .assumed, handedOut: Self.resource)
        #expect(Self.request(m.start()) == .head(Self.point))
        #expect(Self.request(m.headed(Self.answer(204, [("Upload-Offset", "0")]))) == .patch(Self.point, end: Self.length))
        var gone = Machine(endpoint: Self.url, file: Self.file, length: Self.length, point: nil, capabilities: .assumed, handedOut: Self.resource)
        _ = gone.start()
        #expect(
            Self.finished(gone.headed(Self.answer(404)))?.outcome
                == .failed(
                    UploadFailure(
                        .other,
                        "the upload URL given with --upload-url cannot be continued: the server no longer has the upload")))
    }

    @Test func aPointOfAnotherFileOrTheDraftIsNotContinued() {
        var changed = Self.point
        changed.file = FileFingerprint(size: 10_000_000, modificationNanoseconds: 1)
        var m = Self.machine(point: changed)
        let start = m.start()
        #expect(start.reports == [.resumable(nil, startedOver: "the file changed since the upload began")])
        #expect(Self.request(start) == .create(length: Self.length, withBody: false))
        let draft = ResumePoint(uploadURL: Self.resource, version: 9, boundary: "b", bodyLength: Self.length, file: Self.file)
        var d = Self.machine(point: draft)
        #expect(Self.request(d.start()) == .create(length: Self.length, withBody: false))
    }
}

/// tus's fields as written and read.
@Suite struct TusFieldsTests {
    @Test func metadataIsKeyAndBase64ValueInOrderEachKeyOnce() throws {
        let value = try TusFields.metadata([("album", "Été 2026"), ("filename", "x.jpg"), ("empty", ""), ("album", "again")])
        #expect(value == "album w4l0w6kgMjAyNg==,filename eC5qcGc=,empty")
        #expect(throws: TusFields.MetadataProblem(key: "my album")) { try TusFields.metadata([("my album", "x")]) }
        #expect(throws: TusFields.MetadataProblem(key: "a,b")) { try TusFields.metadata([("a,b", "x")]) }
        #expect(throws: TusFields.MetadataProblem(key: "")) { try TusFields.metadata([("", "x")]) }
    }

    @Test func aChecksumIsTheAlgorithmAndTheBase64OfTheDigestAsTheSpecShowsIt() throws {
        var sha1 = try #require(TusChecksum("sha1"))
        Array("hello world".utf8).withUnsafeBytes { sha1.update($0) }
        #expect(sha1.fieldValue() == "sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=", "the protocol's own example")
        #expect(TusChecksum("crc32") == nil)
        let offered = TusCapabilities(extensions: ["creation", "checksum"], checksumAlgorithms: ["md5", "sha1", "crc32"])
        #expect(TusChecksum.algorithm(for: offered) == "sha1")
        #expect(TusChecksum.algorithm(for: TusCapabilities(extensions: ["creation"], checksumAlgorithms: ["sha1"])) == nil, "not listed as an extension")
        // Chunks of a bounded size then (each is read once more to hash it), unless one was asked.
        var m = TusUploadMachine(
            endpoint: Endpoint("http://h/files/")!, file: FileFingerprint(size: 100_000_000, modificationNanoseconds: 1), length: 100_000_000,
            point: nil, capabilities: offered)
        _ = m.start()
        let created = m.created(
            AttemptResult(
                outcome: .answered(status: 201),
                response: UploadResponse(
                    status: 201, reason: "", headers: [("Location", "/files/1")], body: [], bodyBytesTotal: 0), bytesSent: 0))
        guard case .request(.patch(_, let end)) = created.next else {
            Issue.record("\(created.next)")
            return
        }
        #expect(end == TusUploadMachine.checksumChunk)
    }

    @Test func anOptionsAnswerSaysWhatTheServerOffers() {
        func options(_ status: Int, _ headers: [(String, String)]) -> UploadResponse {
            UploadResponse(status: status, reason: "", headers: headers, body: [], bodyBytesTotal: 0)
        }
        let offered = TusCapabilities(
            options: options(
                204,
                [
                    ("Tus-Version", "1.0.0,0.2.2"), ("Tus-Extension", "creation, Termination,checksum"),
                    ("Tus-Max-Size", "1073741824"), ("Tus-Checksum-Algorithm", "sha1,md5"),
                ]))
        #expect(offered == TusCapabilities(extensions: ["creation", "termination", "checksum"], maxSize: 1_073_741_824, checksumAlgorithms: ["sha1", "md5"]))
        #expect(TusCapabilities(options: options(204, [("Tus-Version", "0.2.2")])) == nil, "a version not spoken here")
        #expect(TusCapabilities(options: options(404, [("Tus-Version", "1.0.0")])) == nil)
        #expect(TusCapabilities(options: options(204, [("Accept-Patch", "application/partial-upload")])) == nil)
        #expect(TusCapabilities.speaksTus(options(412, [("Tus-Version", "1.0.0")])))
        #expect(!TusCapabilities.speaksTus(options(400, [])))
    }

    @Test func aResumePointKeptBeforeTusReadsAsTheDrafts() throws {
        let old = #"{"uploadURL":"http://h/u/1","version":8,"boundary":"b","bodyLength":10,"file":{"size":5,"modificationNanoseconds":1},"offset":3}"#
        let point = try JSONDecoder().decode(ResumePoint.self, from: Data(old.utf8))
        #expect(point.kind == .draft && point.offset == 3 && point.expires == nil)
        let tus = ResumePoint.tus(uploadURL: "http://h/f/1", bodyLength: 10, file: point.file, offset: 4, expires: "x")
        #expect(try JSONDecoder().decode(ResumePoint.self, from: JSONEncoder().encode(tus)) == tus)
    }
}
