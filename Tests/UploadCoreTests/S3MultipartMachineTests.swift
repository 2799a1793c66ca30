import Testing
import UploadCore
import UploadProtocols

/// S3's multipart upload, answer by answer.
@Suite struct S3MultipartMachineTests {
    typealias Machine = S3MultipartMachine
    static let url = "https://b.s3.eu-west-1.amazonaws.com/a.jpg"
    static let file = FileFingerprint(size: 20 << 20, modificationNanoseconds: 1)
    static let size: Int64 = 20 << 20

    static func answer(_ status: Int, _ headers: [(String, String)] = [], body: String = "", sent: Int64 = 0) -> AttemptResult {
        AttemptResult(
            outcome: .answered(status: status),
            response: UploadResponse(status: status, reason: "", headers: headers, body: Array(body.utf8), bodyBytesTotal: Int64(body.utf8.count)),
            bytesSent: sent)
    }

    static func request(_ decision: Machine.Decision) -> Machine.Request? {
        if case .request(let request) = decision.next { return request }
        return nil
    }

    /// The parts a decision starts (nil: it starts none and waits for none).
    static func parts(_ decision: Machine.Decision) -> [Machine.Part]? {
        if case .parts(_, let parts) = decision.next { return parts }
        return nil
    }

    static func part(_ number: Int, _ from: Int64, _ to: Int64) -> [Machine.Part] { [Machine.Part(number: number, from: from, to: to)] }

    static func finished(_ decision: Machine.Decision) -> AttemptResult? {
        if case .finish(let result) = decision.next { return result }
        return nil
    }

    @Test func partsAreSizedForS3sLimits() {
        #expect(Machine.partSize(for: 20 << 20) == 8 << 20)
        #expect(Machine.partSize(for: 20 << 20, preferred: 1 << 20) == 5 << 20)
        // 100 GiB in at most 10,000 parts: 11 MiB each (rounded up to whole MiB).
        #expect(Machine.partSize(for: 100 << 30) == 11 << 20)
        #expect(Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: nil).plannedParts.map(\.number) == [1, 2, 3])
        #expect(Machine(objectURL: Self.url, file: Self.file, size: 0, point: nil).plannedParts == Self.part(1, 0, 0))
    }

    @Test func aNewUploadIsCreatedSentInPartsAndPutTogether() throws {
        var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: nil)
        #expect(Self.request(m.start()) == .create)
        let created = m.created(Self.answer(200, body: "<InitiateMultipartUploadResult><UploadId>U1</UploadId></InitiateMultipartUploadResult>"))
        guard case .resumable(let point?, nil)? = created.reports.first else {
            Issue.record("\(created.reports)")
            return
        }
        #expect(point.uploadID == "U1" && point.kind == .s3 && point.parts.isEmpty)
        #expect(Self.parts(created) == Self.part(1, 0, 8 << 20))
        #expect(Self.parts(m.partUploaded(1, Self.answer(200, [("ETag", "\"e1\"")], sent: 8 << 20))) == Self.part(2, 8 << 20, 16 << 20))
        let second = m.partUploaded(2, Self.answer(200, [("ETag", "\"e2\"")], sent: 8 << 20))
        guard case .resumable(let kept?, nil)? = second.reports.first else {
            Issue.record("\(second.reports)")
            return
        }
        #expect(kept.parts.map(\.etag) == ["\"e1\"", "\"e2\""] && kept.offset == 16 << 20)
        let last = m.partUploaded(3, Self.answer(200, [("ETag", "\"e3\"")], sent: 4 << 20))
        #expect(
            Self.request(last)
                == .complete(
                    uploadID: "U1",
                    body: "<CompleteMultipartUpload>"
                        + "<Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag></Part><Part><PartNumber>2</PartNumber><ETag>&quot;e2&quot;</ETag></Part>"
                        + "<Part><PartNumber>3</PartNumber><ETag>&quot;e3&quot;</ETag></Part></CompleteMultipartUpload>"))
        let done = try #require(
            Self.finished(m.completed(Self.answer(200, body: "<CompleteMultipartUploadResult><ETag>x</ETag></CompleteMultipartUploadResult>"))))
        #expect(done.outcome.isSuccess && done.bytesSent == Self.size && done.resume == nil)
    }

    @Test func aCompletionWhoseOKCarriesAnErrorFailedAndKeepsTheParts() throws {
        var m = Machine(objectURL: Self.url, file: Self.file, size: 1, point: nil)
        _ = m.start()
        _ = m.created(Self.answer(200, body: "<UploadId>U</UploadId>"))
        _ = m.partUploaded(1, Self.answer(200, [("ETag", "e")], sent: 1))
        let failed = try #require(Self.finished(m.completed(Self.answer(200, body: "<Error><Code>InternalError</Code></Error>"))))
        #expect(!failed.outcome.isSuccess && failed.resume?.parts.count == 1)
    }

    /// A `200` to `POST ?uploads` that names no upload (or names it past what was kept of the
    /// answer) made nothing: a protocol error, never the upload's success, and no part goes.
    @Test func aCreationAnsweredWithoutAnUploadIdIsAFailureNotASuccess() throws {
        for body in [
            "<InitiateMultipartUploadResult><Bucket>b</Bucket></InitiateMultipartUploadResult>", "", "<UploadId></UploadId>",
            String(repeating: " ", count: 1 << 20),
        ] {
            var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: nil)
            _ = m.start()
            let decision = m.created(Self.answer(200, body: body))
            let failed = try #require(Self.finished(decision))
            #expect(!failed.outcome.isSuccess, "\(failed.outcome)")
            guard case .failed(let failure) = failed.outcome else {
                Issue.record("\(failed.outcome)")
                continue
            }
            #expect(failure.message.contains("without an UploadId") && failure.message.contains("nothing of the file was sent"), "\(failure.message)")
            #expect(failed.bytesSent == 0 && failed.resume == nil)
        }
    }

    /// A `200` to putting the parts together that says neither an error nor the result is not
    /// taken as done: the parts are kept for the next attempt, which asks S3 what it has.
    @Test func aCompletionWhoseOKSaysNothingIsNotTakenAsDone() throws {
        var m = Machine(objectURL: Self.url, file: Self.file, size: 1, point: nil)
        _ = m.start()
        _ = m.created(Self.answer(200, body: "<UploadId>U</UploadId>"))
        _ = m.partUploaded(1, Self.answer(200, [("ETag", "e")], sent: 1))
        let failed = try #require(Self.finished(m.completed(Self.answer(200, body: "{\"ok\":true}"))))
        #expect(!failed.outcome.isSuccess && failed.resume?.parts.count == 1)
        guard case .failed(let failure) = failed.outcome else {
            Issue.record("\(failed.outcome)")
            return
        }
        #expect(failure.message.contains("without naming the object it made"), "\(failure.message)")
    }

    @Test func aLaterAttemptSendsOnlyThePartsS3DoesNotHave() {
        let point = ResumePoint.s3(
            objectURL: Self.url, uploadID: "U1", partSize: 8 << 20, bodyLength: Self.size, file: Self.file,
            parts: [S3Part(number: 1, etag: "old", size: 8 << 20)])
        var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: point)
        #expect(Self.request(m.start()) == .listParts(uploadID: "U1"))
        // S3 has parts 1 and 2 (the second's answer was lost) and a stray of another size.
        let listed = m.listed(
            Self.answer(
                200,
                body: "<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>&quot;a&quot;</ETag><Size>8388608</Size></Part>"
                    + "<Part><PartNumber>2</PartNumber><ETag>\"b\"</ETag><Size>8388608</Size></Part><Part><PartNumber>3</PartNumber><ETag>c</ETag><Size>5</Size></Part></ListPartsResult>"
            ))
        #expect(Self.parts(listed) == Self.part(3, 16 << 20, 20 << 20))
        if case .resumed(let offset, _)? = listed.reports.first { #expect(offset == 16 << 20) } else { Issue.record("\(listed.reports)") }
    }

    @Test func anUploadS3NoLongerHasStartsOverOnce() {
        let point = ResumePoint.s3(objectURL: Self.url, uploadID: "gone", partSize: 8 << 20, bodyLength: Self.size, file: Self.file)
        var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: point)
        _ = m.start()
        let again = m.listed(Self.answer(404, body: "<Error><Code>NoSuchUpload</Code></Error>"))
        #expect(Self.request(again) == .create)
        guard case .resumable(nil, let why?)? = again.reports.first else {
            Issue.record("\(again.reports)")
            return
        }
        #expect(why.contains("NoSuchUpload"))
    }

    @Test func anotherFileOrDestinationIsNotContinued() {
        let point = ResumePoint.s3(objectURL: Self.url, uploadID: "U", partSize: 8 << 20, bodyLength: Self.size, file: Self.file)
        var changed = Machine(objectURL: Self.url, file: FileFingerprint(size: Self.size, modificationNanoseconds: 2), size: Self.size, point: point)
        #expect(Self.request(changed.start()) == .create)
        var elsewhere = Machine(objectURL: Self.url + "x", file: Self.file, size: Self.size, point: point)
        #expect(Self.request(elsewhere.start()) == .create)
    }

    @Test func aCutPartKeepsWhatS3Has() throws {
        var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: nil)
        _ = m.start()
        _ = m.created(Self.answer(200, body: "<UploadId>U</UploadId>"))
        _ = m.partUploaded(1, Self.answer(200, [("ETag", "e1")], sent: 8 << 20))
        let cut = AttemptResult(outcome: .failed(UploadFailure(.connectionLost, "reset")), response: nil, bytesSent: 3 << 20)
        let ended = try #require(Self.finished(m.partUploaded(2, cut)))
        #expect(ended.resume?.parts.map(\.number) == [1])
        #expect(ended.bytesSent == 11 << 20)
    }

    /// rclone writes an ETag's quotes as numeric references; S3 as named ones or bare.
    @Test func listedETagsAreReadWhateverTheirEscaping() {
        let point = ResumePoint.s3(objectURL: Self.url, uploadID: "U", partSize: 8 << 20, bodyLength: Self.size, file: Self.file)
        var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: point)
        _ = m.start()
        let listed = m.listed(
            Self.answer(
                200,
                body: "<Part><PartNumber>1</PartNumber><ETag>&#34;a1&#34;</ETag><Size>8388608</Size></Part>"
                    + "<Part><PartNumber>2</PartNumber><ETag>&#x22;b2&quot;</ETag><Size>8388608</Size></Part>"))
        #expect(Self.parts(listed) == Self.part(3, 16 << 20, 20 << 20))
        let complete = m.partUploaded(3, Self.answer(200, [("ETag", "\"c3\"")], sent: 4 << 20))
        #expect(
            Self.request(complete)
                == .complete(
                    uploadID: "U",
                    body: "<CompleteMultipartUpload>"
                        + "<Part><PartNumber>1</PartNumber><ETag>&quot;a1&quot;</ETag></Part><Part><PartNumber>2</PartNumber><ETag>&quot;b2&quot;</ETag></Part>"
                        + "<Part><PartNumber>3</PartNumber><ETag>&quot;c3&quot;</ETag></Part></CompleteMultipartUpload>"))
    }

    // MARK: Parts side by side

    static let big: Int64 = 40 << 20
    static let bigFile = FileFingerprint(size: 40 << 20, modificationNanoseconds: 1)

    static func created(width: Int) -> (Machine, Machine.Decision) {
        var m = Machine(objectURL: Self.url, file: Self.bigFile, size: Self.big, point: nil)
        _ = m.start()
        let first = m.created(Self.answer(200, body: "<UploadId>U</UploadId>"), width: width)
        return (m, first)
    }

    @Test func partsGoSideBySideWithinTheWidthAndThePartsArePutTogetherInOrder() throws {
        var (m, first) = Self.created(width: 3)
        #expect(Self.parts(first)?.map(\.number) == [1, 2, 3])
        // Part 2 answers first: one more starts in its place.
        #expect(Self.parts(m.partUploaded(2, Self.answer(200, [("ETag", "e2")]), width: 3))?.map(\.number) == [4])
        // The share shrank to one (other uploads started): nothing new while two are in flight.
        #expect(Self.parts(m.partUploaded(1, Self.answer(200, [("ETag", "e1")]), width: 1)) == [])
        #expect(Self.parts(m.partUploaded(4, Self.answer(200, [("ETag", "e4")]), width: 1)) == [])
        // It grew again: the last part, alone.
        let fifth = m.partUploaded(3, Self.answer(200, [("ETag", "e3")]), width: 4)
        #expect(Self.parts(fifth)?.map(\.number) == [5])
        guard case .resumable(let kept?, nil)? = fifth.reports.first else {
            Issue.record("\(fifth.reports)")
            return
        }
        #expect(kept.parts.map(\.number) == [1, 2, 3, 4] && kept.offset == 32 << 20)
        guard case .complete(_, let body, _)? = Self.request(m.partUploaded(5, Self.answer(200, [("ETag", "e5")]), width: 4)) else {
            Issue.record("not completed")
            return
        }
        #expect(body.components(separatedBy: "<PartNumber>").dropFirst().map { $0.prefix(1) } == ["1", "2", "3", "4", "5"])
    }

    @Test func aFailedPartStartsNoOtherAndTheAttemptEndsWhenThePartsInFlightHaveAnswered() throws {
        var (m, first) = Self.created(width: 3)
        #expect(Self.parts(first)?.count == 3)
        let cut = AttemptResult(outcome: .failed(UploadFailure(.connectionLost, "reset")), response: nil, bytesSent: 1 << 20)
        #expect(Self.parts(m.partUploaded(1, cut, width: 3)) == [])
        // A part in flight still lands and is kept.
        #expect(Self.parts(m.partUploaded(3, Self.answer(200, [("ETag", "e3")], sent: 8 << 20), width: 3)) == [])
        let ended = try #require(Self.finished(m.partUploaded(2, cut, width: 3)))
        guard case .failed(let failure) = ended.outcome else {
            Issue.record("\(ended.outcome)")
            return
        }
        #expect(failure.kind == .connectionLost)
        #expect(ended.resume?.parts.map(\.number) == [3] && ended.bytesSent == 10 << 20)
    }

    @Test func aPartS3NoLongerKnowsStartsOverOnceThePartsInFlightAnswered() {
        var (m, _) = Self.created(width: 2)
        #expect(Self.parts(m.partUploaded(1, Self.answer(404, body: "<Error><Code>NoSuchUpload</Code></Error>"), width: 2)) == [])
        #expect(Self.request(m.partUploaded(2, Self.answer(404), width: 2)) == .create)
    }

    @Test func anAnswerForAPartNotInFlightIsAMisuse() throws {
        var (m, _) = Self.created(width: 1)
        let wrong = try #require(Self.finished(m.partUploaded(2, Self.answer(200, [("ETag", "e")]))))
        #expect(!wrong.outcome.isSuccess)
    }

    /// S3 lists at most 1,000 parts a page: a truncated answer is followed by the next page,
    /// and only then are the missing parts sent.
    @Test func everyPageOfTheListIsReadBeforeThePartsGo() {
        let point = ResumePoint.s3(objectURL: Self.url, uploadID: "U", partSize: 8 << 20, bodyLength: Self.big, file: Self.bigFile)
        var m = Machine(objectURL: Self.url, file: Self.bigFile, size: Self.big, point: point)
        _ = m.start()
        let part = { (n: Int) in "<Part><PartNumber>\(n)</PartNumber><ETag>e\(n)</ETag><Size>8388608</Size></Part>" }
        let first = m.listed(
            Self.answer(
                200,
                body: "<ListPartsResult><IsTruncated>true</IsTruncated><NextPartNumberMarker>2</NextPartNumberMarker>"
                    + part(1) + part(2) + "</ListPartsResult>"), width: 4)
        #expect(Self.request(first) == .listParts(uploadID: "U", after: 2))
        let second = m.listed(Self.answer(200, body: "<ListPartsResult><IsTruncated>false</IsTruncated>" + part(4) + "</ListPartsResult>"), width: 4)
        #expect(Self.parts(second)?.map(\.number) == [3, 5])
        if case .resumed(let offset, _)? = second.reports.first { #expect(offset == 24 << 20) } else { Issue.record("\(second.reports)") }
    }
}
