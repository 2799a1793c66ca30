import Foundation
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// Every upload carries its SHA-256 and asks for the server's (RFC 9530); the answer's digest
/// verifies it or fails the attempt. The fields sent are checked by Python's `contentdigest`
/// and `http_sf`, not by this project's code.
@Suite(
    .serialized, .timeLimit(.minutes(2)),
    .enabled(if: PythonDigests.available, "needs Python's contentdigest and http_sf (pip install contentdigest http-sf)"))
struct DigestClientTests {
    let folder = TestFiles.makeTemporaryDirectory("digests")

    /// A server that says nothing of digests is asked for its digest and gets no claim — and
    /// costs no digest of the body: none is worked out, none is sent.
    @Test func aServerSayingNothingGetsNoClaimAndNoDigestOfTheBody() async throws {
        let captures = Captures()
        let server = try answeringServer("200 OK", body: "{}", captures: captures)
        defer { server.stop() }
        let small = try TestFiles.writeImage(at: folder + "/small.jpg", size: 20_000)
        let large = try TestFiles.writeImage(at: folder + "/large.jpg", size: 3_000_000)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(small, url: server.url), try UploadRequest.forPath(large, url: server.url)],
            concurrency: 1, resume: false)
        #expect(run.outcome(1) == .answered(status: 200) && run.outcome(2) == .answered(status: 200))
        #expect(
            run.record(1).response?.verified == nil && run.record(2).response?.verified == nil,
            "a server that says nothing about digests proves nothing")
        #expect(captures.all.count == 2)
        for request in captures.all {
            #expect(request.header("Want-Repr-Digest") == "sha-256=10")
            #expect(request.header("Content-Digest") == nil, "no digest of the body for a server that never showed it looks")
        }
        #expect(try PythonDigests.run(["-c", "import http_sf, sys; http_sf.parse(sys.argv[1].encode(), tltype='dictionary')", "sha-256=10"]).status == 0)
        // The file's own digest ("already sent") is worked out all the same.
        #expect(run.contents() == [try PythonDigests.sha256Hex(small), try PythonDigests.sha256Hex(large)])
        // `--no-digest`: neither field.
        let off = try await UploadRun.run([try UploadRequest.forPath(small, url: server.url)], resume: false, digests: false)
        #expect(off.outcome() == .answered(status: 200))
        #expect(captures.all.last?.header("Content-Digest") == nil && captures.all.last?.header("Want-Repr-Digest") == nil)
    }

    /// A server that answers with the digest of what it received verifies the first upload (the
    /// body hashed once after the answer); from then on the origin is known to look, and a photo
    /// held in memory carries its digest up front (`Content-Digest`, checked by Python here).
    @Test func anOriginThatAnswersADigestGetsOneUpFrontFromThenOn() async throws {
        let captures = Captures()
        let server = try RawServer { connection in
            let request = readRequest(connection)
            captures.add(request)
            let body = FileManager.default.temporaryDirectory.path + "/digest-\(UUID().uuidString)"
            _ = FileManager.default.createFile(atPath: body, contents: Data(request.body))
            let digest = (try? PythonDigests.make(body, "sha-256")) ?? "sha-256=:AAAA:"
            connection.write("HTTP/1.1 200 OK\r\nRepr-Digest: \(digest)\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            connection.close()
        }
        defer { server.stop() }
        let first = try TestFiles.writeImage(at: folder + "/first.jpg", size: 20_000)
        let second = try TestFiles.writeImage(at: folder + "/second.jpg", size: 30_000)
        let large = try TestFiles.writeImage(at: folder + "/big.jpg", size: 2_000_000)
        let run = try await UploadRun.run(
            [
                try UploadRequest.forPath(first, url: server.url), try UploadRequest.forPath(second, url: server.url),
                try UploadRequest.forPath(large, url: server.url),
            ], concurrency: 1, resume: false)
        for id in 1...3 {
            #expect(run.outcome(id) == .answered(status: 200))
            #expect(run.record(id).response?.verified == "sha-256", "upload \(id)")
        }
        let requests = captures.all
        #expect(requests.count == 3)
        #expect(requests.first?.header("Content-Digest") == nil, "not known to look yet: nothing worked out before the answer")
        let request = try #require(requests.dropFirst().first)
        let sent = folder + "/sent"
        _ = FileManager.default.createFile(atPath: sent, contents: Data(request.body))
        let claimed = try #require(request.header("Content-Digest"))
        #expect(claimed.hasPrefix("sha-256=:"))
        #expect(try PythonDigests.verify(claimed, sent), "\(claimed)")
    }

    @Test func anAnswerWhoseDigestIsNotWhatWasSentFailsTheAttemptAndItIsSentAgain() async throws {
        // Large: its digest is computed as it streams.
        let path = try TestFiles.writeImage(at: folder + "/m.jpg", size: 1_500_000)
        let wrong = DigestFields.value([.sha256: Array(repeating: 7, count: 32)])
        let seen = Captures()
        let server = try RawServer { connection in
            let request = readRequest(connection)
            seen.add(request)
            // First a digest of other bytes; then the right one, made by Python from what arrived.
            var digest = wrong
            if seen.all.count > 1 {
                let body = FileManager.default.temporaryDirectory.path + "/digest-\(UUID().uuidString)"
                _ = FileManager.default.createFile(atPath: body, contents: Data(request.body))
                digest = (try? PythonDigests.make(body, "sha-256")) ?? wrong
            }
            connection.write("HTTP/1.1 200 OK\r\nRepr-Digest: \(digest)\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            connection.close()
        }
        defer { server.stop() }
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], retryPolicy: RetryPolicy(maxRetries: 1), resume: false)
        #expect(run.attempts() == 2)
        let retried = run.events.compactMap { if case .retryScheduled(_, _, _, let reason) = $0 { reason } else { nil } }
        #expect(retried.count == 1 && retried[0].contains("integrity mismatch: the server's Repr-Digest (sha-256) is not that of what was sent"), "\(retried)")
        #expect(run.outcome() == .answered(status: 200))
        #expect(run.record().response?.verified == "sha-256")
        #expect(run.record().response?.verifiedText == "verified (sha-256)")

        // With no retry left the mismatch is the upload's end, said as such: never "OK".
        let liar = try answeringServer("200 OK", headers: ["Repr-Digest: \(wrong)"], body: "{}")
        defer { liar.stop() }
        let once = try await UploadRun.run([try UploadRequest.forPath(path, url: liar.url)], resume: false)
        #expect(once.failure()?.kind == .integrityMismatch)
        #expect(once.record().state == .failed)
        #expect(once.record().response?.verified == nil)
    }

    @Test func theReceiverProvesPlainAndResumableUploads() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let small = try TestFiles.writeImage(at: folder + "/a.jpg", size: 20_000)
        let large = try TestFiles.writeImage(at: folder + "/b.jpg", size: 3_000_000)
        for resume in [true, false] {
            let run = try await UploadRun.run(
                [try UploadRequest.forPath(small, url: receiver.url), try UploadRequest.forPath(large, url: receiver.url)],
                resume: resume)
            #expect(run.record(1).response?.verified == "sha-256", "resume \(resume)")
            #expect(run.record(2).response?.verified == "sha-256", "resume \(resume)")
            // The files' own digests, for "already sent" by content.
            #expect(run.record(1).contentSHA256 == (try PythonDigests.sha256Hex(small)))
            #expect(run.record(2).contentSHA256 == (try PythonDigests.sha256Hex(large)))
        }
        #expect(TestFiles.sameContents(large, receiver.directory + "/b.jpg"))
    }
}
