import Foundation
import Testing
import UploadTesting

@Suite(
    .serialized, .timeLimit(.minutes(3)),
    .enabled(
        if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") && PythonDigests.available,
        "needs curl and Python's contentdigest and http_sf (pip install contentdigest http-sf)"))
struct DigestReceiverTests {
    let multipart = "Content-Type: multipart/form-data; boundary=\(FormBody.boundary)"
    let partial = "Content-Type: application/partial-upload"

    @Test func aPlainUploadIsCheckedAgainstItsDigestAndNothingIsKeptOnAMismatch() async throws {
        let receiver = try await ReceiverHarness.start()
        let form = FormBody(name: "d.png", size: 300_000)
        let body = form.write(0..<form.bytes.count, to: receiver.root + "/body")
        let other = FormBody(name: "d.png", size: 300_000).write(0..<form.bytes.count, to: receiver.root + "/other")

        let good = try await exchange([
            "-X", "POST", "-H", multipart, "-H", "Content-Digest: \(try PythonDigests.make(body, "sha-256"))",
            "-H", "Want-Repr-Digest: sha-512=10, sha-256=1", "--data-binary", "@" + body, receiver.url,
        ])
        #expect(good.status == 200, "\(good)")
        let answered = try #require(good["Repr-Digest"])
        #expect(answered.hasPrefix("sha-512=:"), "the algorithm most wanted: \(answered)")
        #expect(try PythonDigests.verify(answered, body))
        #expect(FileManager.default.contents(atPath: receiver.directory + "/d.png") == Data(form.content))

        // Another body under the first one's digest: refused, nothing stored or left behind.
        let before = try FileManager.default.contentsOfDirectory(atPath: receiver.directory).sorted()
        let bad = try await exchange([
            "-X", "POST", "-H", multipart, "-H", "Repr-Digest: \(try PythonDigests.make(body, "sha-256", "sha-512"))",
            "--data-binary", "@" + other, receiver.url,
        ])
        #expect(bad.status == 400, "\(bad)")
        #expect(
            bad.body.contains("integrity mismatch: Repr-Digest (sha-256, sha-512) does not match the upload received; nothing of it was kept"), "\(bad.body)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: receiver.directory).sorted() == before)

        // Algorithms not trusted here are read past; a field that is not a dictionary is refused.
        let legacy = try await exchange([
            "-X", "POST", "-H", multipart, "-H", "Content-Digest: \(try PythonDigests.make(other, "md5"))",
            "--data-binary", "@" + other, receiver.url,
        ])
        #expect(legacy.status == 200 && legacy["Repr-Digest"] == nil, "\(legacy)")
        let malformed = try await exchange(["-X", "POST", "-H", multipart, "-H", "Content-Digest: sha-256=abc", "--data-binary", "@" + other, receiver.url])
        #expect(malformed.status == 400)
        #expect(malformed.body.contains("Content-Digest is not a valid structured-field dictionary (RFC 9651)"), "\(malformed.body)")
        await receiver.cleanUp()
    }

    @Test func aResumableUploadChecksEachRequestAndTheWholeAndAnswersItsDigest() async throws {
        let receiver = try await ReceiverHarness.start()
        let form = FormBody(name: "r.png", size: 700_000)
        let whole = form.write(0..<form.bytes.count, to: receiver.root + "/whole")
        let first = form.write(0..<300_000, to: receiver.root + "/first")
        let rest = form.write(300_000..<form.bytes.count, to: receiver.root + "/rest")
        let created = try await exchange([
            "-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "-H", "Upload-Length: \(form.bytes.count)",
            "-H", "Upload-Draft-Interop-Version: 8", "-H", "Repr-Digest: \(try PythonDigests.make(whole, "sha-256"))",
            "-H", "Want-Repr-Digest: sha-256=5", "--data-binary", "", receiver.url,
        ])
        #expect(created.status == 201, "\(created)")
        let location = try #require(created["Location"])

        // A request whose content is not its Content-Digest is not appended.
        let wrong = try await exchange([
            "-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?0",
            "-H", "Content-Digest: \(try PythonDigests.make(rest, "sha-256"))", "--data-binary", "@" + first, location,
        ])
        #expect(wrong.status == 400, "\(wrong)")
        #expect(wrong.body.contains("integrity mismatch: Content-Digest (sha-256) does not match this request's content"))
        #expect(try await exchange(["-I", location])["Upload-Offset"] == "0")

        let right = try await exchange([
            "-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?0",
            "-H", "Content-Digest: \(try PythonDigests.make(first, "sha-256"))", "--data-binary", "@" + first, location,
        ])
        #expect(right.status == 204 && right["Upload-Offset"] == "300000", "\(right)")
        // The last request: the whole upload checked (its first part read back), its digest answered.
        let completed = try await exchange([
            "-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 300000", "-H", "Upload-Complete: ?1",
            "--data-binary", "@" + rest, location,
        ])
        #expect(completed.status == 200, "\(completed)")
        let answered = try #require(completed["Repr-Digest"])
        #expect(try PythonDigests.verify(answered, whole))
        #expect(FileManager.default.contents(atPath: receiver.directory + "/r.png") == Data(form.content))
        #expect(try await exchange([location])["Repr-Digest"] == answered, "the answer again, with its digest")

        // A whole that is not its Repr-Digest fails as a refused body does: nothing kept.
        let liar = try await exchange([
            "-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?1", "-H", "Upload-Draft-Interop-Version: 8",
            "-H", "Repr-Digest: \(try PythonDigests.make(first, "sha-256"))", "--data-binary", "@" + whole, receiver.url,
        ])
        #expect(liar.status == 400, "\(liar)")
        #expect(liar.body.contains("integrity mismatch: Repr-Digest (sha-256) does not match the upload received"))
        #expect(receiver.storedNames().filter { !$0.hasPrefix(".") } == ["r.png"])
        await receiver.cleanUp()
    }
}
