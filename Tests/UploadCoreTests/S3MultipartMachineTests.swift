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
        AttemptResult(outcome: .answered(status: status),
                      response: UploadResponse(status: status, reason: "", headers: headers, body: Array(body.utf8), bodyBytesTotal: Int64(body.utf8.count)),
                      bytesSent: sent)
    }

    static func request(_ decision: Machine.Decision) -> Machine.Request? {
        if case .request(let request) = decision.next { return request }
        return nil
    }

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
    }

    @Test func aNewUploadIsCreatedSentInPartsAndPutTogether() throws {
        var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: nil)
        #expect(Self.request(m.start()) == .create)
        let created = m.created(Self.answer(200, body: "<InitiateMultipartUploadResult><UploadId>U1</UploadId></InitiateMultipartUploadResult>"))
        guard case .resumable(let point?, nil)? = created.reports.first else { Issue.record("\(created.reports)"); return }
        #expect(point.uploadID == "U1" && point.kind == .s3 && point.parts.isEmpty)
        #expect(Self.request(created) == .uploadPart(uploadID: "U1", number: 1, from: 0, to: 8 << 20))
        #expect(Self.request(m.partUploaded(Self.answer(200, [("ETag", "\"e1\"")], sent: 8 << 20))) == .uploadPart(uploadID: "U1", number: 2, from: 8 << 20, to: 16 << 20))
        let second = m.partUploaded(Self.answer(200, [("ETag", "\"e2\"")], sent: 8 << 20))
        guard case .resumable(let kept?, nil)? = second.reports.first else { Issue.record("\(second.reports)"); return }
        #expect(kept.parts.map(\.etag) == ["\"e1\"", "\"e2\""] && kept.offset == 16 << 20)
        let last = m.partUploaded(Self.answer(200, [("ETag", "\"e3\"")], sent: 4 << 20))
        #expect(Self.request(last) == .complete(uploadID: "U1", body: "<CompleteMultipartUpload>"
            + "<Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag></Part><Part><PartNumber>2</PartNumber><ETag>&quot;e2&quot;</ETag></Part>"
            + "<Part><PartNumber>3</PartNumber><ETag>&quot;e3&quot;</ETag></Part></CompleteMultipartUpload>"))
        let done = try #require(Self.finished(m.completed(Self.answer(200, body: "<CompleteMultipartUploadResult><ETag>x</ETag></CompleteMultipartUploadResult>"))))
        #expect(done.outcome.isSuccess && done.bytesSent == Self.size && done.resume == nil)
    }

    @Test func aCompletionWhoseOKCarriesAnErrorFailedAndKeepsTheParts() throws {
        var m = Machine(objectURL: Self.url, file: Self.file, size: 1, point: nil)
        _ = m.start()
        _ = m.created(Self.answer(200, body: "<UploadId>U</UploadId>"))
        _ = m.partUploaded(Self.answer(200, [("ETag", "e")], sent: 1))
        let failed = try #require(Self.finished(m.completed(Self.answer(200, body: "<Error><Code>InternalError</Code></Error>"))))
        #expect(!failed.outcome.isSuccess && failed.resume?.parts.count == 1)
    }

    @Test func aLaterAttemptSendsOnlyThePartsS3DoesNotHave() {
        let point = ResumePoint.s3(objectURL: Self.url, uploadID: "U1", partSize: 8 << 20, bodyLength: Self.size, file: Self.file,
                                   parts: [S3Part(number: 1, etag: "old", size: 8 << 20)])
        var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: point)
        #expect(Self.request(m.start()) == .listParts(uploadID: "U1"))
        // S3 has parts 1 and 2 (the second's answer was lost) and a stray of another size.
        let listed = m.listed(Self.answer(200, body: "<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>&quot;a&quot;</ETag><Size>8388608</Size></Part>"
            + "<Part><PartNumber>2</PartNumber><ETag>\"b\"</ETag><Size>8388608</Size></Part><Part><PartNumber>3</PartNumber><ETag>c</ETag><Size>5</Size></Part></ListPartsResult>"))
        #expect(Self.request(listed) == .uploadPart(uploadID: "U1", number: 3, from: 16 << 20, to: 20 << 20))
        if case .resumed(let offset, _)? = listed.reports.first { #expect(offset == 16 << 20) } else { Issue.record("\(listed.reports)") }
    }

    @Test func anUploadS3NoLongerHasStartsOverOnce() {
        let point = ResumePoint.s3(objectURL: Self.url, uploadID: "gone", partSize: 8 << 20, bodyLength: Self.size, file: Self.file)
        var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: point)
        _ = m.start()
        let again = m.listed(Self.answer(404, body: "<Error><Code>NoSuchUpload</Code></Error>"))
        #expect(Self.request(again) == .create)
        guard case .resumable(nil, let why?)? = again.reports.first else { Issue.record("\(again.reports)"); return }
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
        _ = m.partUploaded(Self.answer(200, [("ETag", "e1")], sent: 8 << 20))
        let cut = AttemptResult(outcome: .failed(UploadFailure(.connectionLost, "reset")), response: nil, bytesSent: 3 << 20)
        let ended = try #require(Self.finished(m.partUploaded(cut)))
        #expect(ended.resume?.parts.map(\.number) == [1])
        #expect(ended.bytesSent == 11 << 20)
    }

    /// rclone writes an ETag's quotes as numeric references; S3 as named ones or bare.
    @Test func listedETagsAreReadWhateverTheirEscaping() {
        let point = ResumePoint.s3(objectURL: Self.url, uploadID: "U", partSize: 8 << 20, bodyLength: Self.size, file: Self.file)
        var m = Machine(objectURL: Self.url, file: Self.file, size: Self.size, point: point)
        _ = m.start()
        let listed = m.listed(Self.answer(200, body: "<Part><PartNumber>1</PartNumber><ETag>&#34;a1&#34;</ETag><Size>8388608</Size></Part>"
            + "<Part><PartNumber>2</PartNumber><ETag>&#x22;b2&quot;</ETag><Size>8388608</Size></Part>"))
        #expect(Self.request(listed) == .uploadPart(uploadID: "U", number: 3, from: 16 << 20, to: 20 << 20))
        let complete = m.partUploaded(Self.answer(200, [("ETag", "\"c3\"")], sent: 4 << 20))
        #expect(Self.request(complete) == .complete(uploadID: "U", body: "<CompleteMultipartUpload>"
            + "<Part><PartNumber>1</PartNumber><ETag>&quot;a1&quot;</ETag></Part><Part><PartNumber>2</PartNumber><ETag>&quot;b2&quot;</ETag></Part>"
            + "<Part><PartNumber>3</PartNumber><ETag>&quot;c3&quot;</ETag></Part></CompleteMultipartUpload>"))
    }
}
