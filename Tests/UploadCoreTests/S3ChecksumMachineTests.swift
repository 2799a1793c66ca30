import Testing
import UploadCore
import UploadProtocols

/// S3's checks of what arrives, as the multipart machine keeps them: the creation says CRC-32C
/// over the whole object, each part carries its own, the completion the whole one, and S3's
/// answers confirm it; a part refused for its checksum goes once more, then the upload fails.
@Suite struct S3ChecksumMachineTests {
    typealias Machine = S3MultipartMachine
    typealias T = S3MultipartMachineTests
    static let size: Int64 = 20 << 20
    /// The CRCs of the three parts (8, 8 and 4 MiB), made up: the machine only combines them.
    static let crcs = [CRC32C(value: 0x1111_1111), CRC32C(value: 0x2222_2222), CRC32C(value: 0x3333_3333)]
    static var whole: CRC32C { crcs[0].followed(by: crcs[1], length: 8 << 20).followed(by: crcs[2], length: 4 << 20) }

    static func partAnswer(_ etag: String, _ crc: CRC32C?, sent: Int64) -> AttemptResult {
        T.answer(200, [("ETag", etag)] + (crc.map { [(S3Checksum.header, $0.base64)] } ?? []), sent: sent)
    }

    static func badDigest() -> AttemptResult {
        T.answer(400, body: "<Error><Code>BadDigest</Code><Message>The CRC32C you specified did not match the calculated checksum.</Message></Error>")
    }

    func created(checksums: Bool = true) -> Machine {
        var m = Machine(objectURL: T.url, file: T.file, size: Self.size, point: nil, checksums: checksums)
        _ = m.start()
        _ = m.created(T.answer(200, body: "<UploadId>U</UploadId>"))
        return m
    }

    @Test func everyPartAndTheWholeObjectAreCheckedAndTheAnswerSaysVerified() throws {
        var m = Machine(objectURL: T.url, file: T.file, size: Self.size, point: nil, checksums: true)
        #expect(m.sendsChecksums, "the creation says CRC-32C")
        _ = m.start()
        let created = m.created(T.answer(200, body: "<UploadId>U</UploadId>"))
        guard case .resumable(let point?, nil)? = created.reports.first else {
            Issue.record("\(created.reports)")
            return
        }
        #expect(point.checksum == "crc32c", "the journal keeps what the upload was created with")
        _ = m.partUploaded(1, Self.partAnswer("e1", Self.crcs[0], sent: 8 << 20), sent: Self.crcs[0])
        _ = m.partUploaded(2, Self.partAnswer("e2", Self.crcs[1], sent: 8 << 20), sent: Self.crcs[1])
        let last = m.partUploaded(3, Self.partAnswer("e3", Self.crcs[2], sent: 4 << 20), sent: Self.crcs[2])
        guard case .complete(_, let body, let whole)? = T.request(last) else {
            Issue.record("\(last.next)")
            return
        }
        #expect(whole == Self.whole)
        #expect(body.contains("<Part><PartNumber>2</PartNumber><ETag>e2</ETag><ChecksumCRC32C>\(Self.crcs[1].base64)</ChecksumCRC32C></Part>"), "\(body)")
        let done = try #require(
            T.finished(
                m.completed(
                    T.answer(
                        200,
                        body:
                            "<CompleteMultipartUploadResult><ETag>x</ETag><ChecksumCRC32C>\(Self.whole.base64)</ChecksumCRC32C><ChecksumType>FULL_OBJECT</ChecksumType></CompleteMultipartUploadResult>"
                    ))))
        #expect(done.outcome.isSuccess)
        #expect(done.response?.verified == "crc32c" && done.response?.verifiedText == "verified (crc32c)")
    }

    @Test func aCompletionNamingAnotherValueIsAnIntegrityFailure() throws {
        var m = created()
        for (index, crc) in Self.crcs.enumerated() { _ = m.partUploaded(index + 1, Self.partAnswer("e\(index)", crc, sent: 1), sent: crc) }
        let done = try #require(
            T.finished(
                m.completed(
                    T.answer(
                        200,
                        body:
                            "<CompleteMultipartUploadResult><ETag>x</ETag><ChecksumCRC32C>AAAAAA==</ChecksumCRC32C></CompleteMultipartUploadResult>"))))
        guard case .failed(let failure) = done.outcome else {
            Issue.record("\(done.outcome)")
            return
        }
        #expect(failure.kind == .integrityMismatch && failure.message.contains("AAAAAA=="), "\(failure.message)")
    }

    @Test func aServerThatKeepsNoChecksumsSaysNothingAndTheUploadStillSucceeds() throws {
        var m = created()
        for (index, crc) in Self.crcs.enumerated() { _ = m.partUploaded(index + 1, Self.partAnswer("e\(index)", nil, sent: 1), sent: crc) }
        // No part's answer named a value, nor does the completion's: nothing is asked (rclone's
        // server would read the whole object again to answer).
        let done = try #require(T.finished(m.completed(T.answer(200, body: "<CompleteMultipartUploadResult><ETag>x</ETag></CompleteMultipartUploadResult>"))))
        #expect(done.outcome.isSuccess && done.response?.verified == nil && done.response?.status == 200)
    }

    @Test func whatS3KeptIsAskedWhenTheCompletionDoesNotSay() throws {
        var m = created()
        for (index, crc) in Self.crcs.enumerated() { _ = m.partUploaded(index + 1, Self.partAnswer("e\(index)", crc, sent: 1), sent: crc) }
        #expect(T.request(m.completed(T.answer(200, body: "<CompleteMultipartUploadResult><ETag>x</ETag></CompleteMultipartUploadResult>"))) == .confirm)
        let done = try #require(T.finished(m.confirmed(T.answer(200, [(S3Checksum.header, Self.whole.base64), ("x-amz-checksum-type", "FULL_OBJECT")]))))
        #expect(done.outcome.isSuccess && done.response?.verified == "crc32c")
        // Another value kept: the object is not what was sent.
        var other = created()
        for (index, crc) in Self.crcs.enumerated() { _ = other.partUploaded(index + 1, Self.partAnswer("e\(index)", crc, sent: 1), sent: crc) }
        _ = other.completed(T.answer(200, body: "<CompleteMultipartUploadResult><ETag>x</ETag></CompleteMultipartUploadResult>"))
        let wrong = try #require(T.finished(other.confirmed(T.answer(200, [(S3Checksum.header, "AAAAAA==")]))))
        #expect(!wrong.outcome.isSuccess)
        // A composite value (the parts' CRCs hashed together) says nothing of the bytes.
        var composite = created()
        for (index, crc) in Self.crcs.enumerated() { _ = composite.partUploaded(index + 1, Self.partAnswer("e\(index)", crc, sent: 1), sent: crc) }
        _ = composite.completed(T.answer(200, body: "<CompleteMultipartUploadResult><ETag>x</ETag></CompleteMultipartUploadResult>"))
        let unsaid = try #require(T.finished(composite.confirmed(T.answer(200, [(S3Checksum.header, "AAAAAA==-3")]))))
        #expect(unsaid.outcome.isSuccess && unsaid.response?.verified == nil)
    }

    @Test func aPartRefusedForItsChecksumGoesOnceMoreThenTheUploadFailsWithTheReason() throws {
        var m = created()
        // Refused once: the same part again, and the upload goes on.
        #expect(T.parts(m.partUploaded(1, Self.badDigest(), sent: Self.crcs[0])) == T.part(1, 0, 8 << 20))
        #expect(T.parts(m.partUploaded(1, Self.partAnswer("e1", Self.crcs[0], sent: 8 << 20), sent: Self.crcs[0])) == T.part(2, 8 << 20, 16 << 20))
        // Refused twice: no new part, and the attempt fails saying why, keeping what S3 has.
        _ = m.partUploaded(2, Self.badDigest(), sent: Self.crcs[1])
        let ended = try #require(T.finished(m.partUploaded(2, Self.badDigest(), sent: Self.crcs[1])))
        guard case .failed(let failure) = ended.outcome else {
            Issue.record("\(ended.outcome)")
            return
        }
        #expect(failure.kind == .integrityMismatch)
        #expect(failure.message.contains("part 2") && failure.message.contains("BadDigest") && failure.message.contains("twice"), "\(failure.message)")
        #expect(ended.resume?.parts.map(\.number) == [1], "the part S3 checked and kept stays for a retry")
    }

    @Test func aPartKeptWithAnotherValueThanSentGoesAgain() {
        var m = created()
        let wrong = Self.partAnswer("e1", CRC32C(value: 7), sent: 8 << 20)
        #expect(T.parts(m.partUploaded(1, wrong, sent: Self.crcs[0])) == T.part(1, 0, 8 << 20))
        // Not kept, for the progress either (the shell's tally would count its bytes twice).
        #expect(Machine.keptPart(wrong, sent: Self.crcs[0]) == nil)
        #expect(Machine.keptPart(Self.partAnswer("e1", Self.crcs[0], sent: 1), sent: Self.crcs[0]) == "e1")
        #expect(Machine.keptPart(Self.partAnswer("e1", nil, sent: 1), sent: Self.crcs[0]) == "e1", "a server that says nothing kept it")
    }

    @Test func anUploadCreatedWithoutChecksumsIsContinuedWithout() throws {
        // A journal's point from before: its parts go without, and the completion carries none.
        let point = ResumePoint.s3(
            objectURL: T.url, uploadID: "OLD", partSize: 8 << 20, bodyLength: Self.size, file: T.file,
            parts: [S3Part(number: 1, etag: "e1", size: 8 << 20)])
        var m = Machine(objectURL: T.url, file: T.file, size: Self.size, point: point, checksums: true)
        #expect(!m.sendsChecksums)
        _ = m.start()
        _ = m.listed(
            T.answer(200, body: "<ListPartsResult><Part><PartNumber>1</PartNumber><ETag>e1</ETag><Size>8388608</Size></Part></ListPartsResult>"), width: 2)
        _ = m.partUploaded(2, Self.partAnswer("e2", nil, sent: 1))
        let last = m.partUploaded(3, Self.partAnswer("e3", nil, sent: 1))
        guard case .complete(_, let body, let whole)? = T.request(last) else {
            Issue.record("\(last.next)")
            return
        }
        #expect(whole == nil && !body.contains("Checksum"))
    }

    @Test func aContinuedUploadTakesThePartsValuesFromS3sList() throws {
        let point = ResumePoint.s3(objectURL: T.url, uploadID: "U", partSize: 8 << 20, bodyLength: Self.size, file: T.file, checksum: "crc32c")
        var m = Machine(objectURL: T.url, file: T.file, size: Self.size, point: point, checksums: true)
        _ = m.start()
        let listed = m.listed(
            T.answer(
                200,
                body: "<ListPartsResult>"
                    + "<Part><PartNumber>1</PartNumber><ETag>e1</ETag><Size>8388608</Size><ChecksumCRC32C>\(Self.crcs[0].base64)</ChecksumCRC32C></Part>"
                    + "<Part><PartNumber>2</PartNumber><ETag>e2</ETag><Size>8388608</Size><ChecksumCRC32C>\(Self.crcs[1].base64)</ChecksumCRC32C></Part>"
                    + "</ListPartsResult>"))
        #expect(T.parts(listed) == T.part(3, 16 << 20, 20 << 20))
        let last = m.partUploaded(3, Self.partAnswer("e3", Self.crcs[2], sent: 1), sent: Self.crcs[2])
        guard case .complete(_, _, let whole)? = T.request(last) else {
            Issue.record("\(last.next)")
            return
        }
        #expect(whole == Self.whole)
    }

    @Test func refusalsForAChecksumAreToldFromOtherRefusals() {
        #expect(S3Checksum.refusedForChecksum(Self.badDigest().response!))
        #expect(
            S3Checksum.refusedForChecksum(
                T.answer(400, body: "<Error><Code>InvalidRequest</Code><Message>Value for x-amz-checksum-crc32c header is invalid.</Message></Error>").response!
            ))
        #expect(
            !S3Checksum.refusedForChecksum(T.answer(400, body: "<Error><Code>InvalidRequest</Code><Message>Bucket is missing.</Message></Error>").response!))
        #expect(!S3Checksum.refusedForChecksum(T.answer(403, body: "<Error><Code>BadDigest</Code></Error>").response!))
    }
}
