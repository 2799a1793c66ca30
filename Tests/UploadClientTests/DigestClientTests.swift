import Foundation
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// Every upload carries its SHA-256 and asks for the server's (RFC 9530); the answer's digest
/// verifies it or fails the attempt. The fields sent are checked by Python's `contentdigest`
/// and `http_sf`, not by this project's code.
@Suite(.serialized, .timeLimit(.minutes(2)),
       .enabled(if: PythonDigests.available, "needs Python's contentdigest and http_sf (pip install contentdigest http-sf)"))
struct DigestClientTests {
    let folder = TestFiles.makeTemporaryDirectory("digests")

    @Test func theDigestSentIsThatOfTheBodyAndAServerSayingNothingGetsNoClaim() async throws {
        let captures = Captures()
        let server = try answeringServer("200 OK", body: "{}", captures: captures)
        defer { server.stop() }
        // A photo held in memory carries its digest up front; a larger file, whose digest is
        // known only once it was read to send it, asks for the server's only.
        let small = try TestFiles.writeImage(at: folder + "/small.jpg", size: 20_000)
        let large = try TestFiles.writeImage(at: folder + "/large.jpg", size: 3_000_000)
        for path in [small, large] {
            let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], resume: false)
            #expect(run.outcome() == .answered(status: 200))
            #expect(run.response()?.verified == nil, "a server that says nothing about digests proves nothing")
            let request = try #require(captures.all.last)
            #expect(request.header("Want-Repr-Digest") == "sha-256=10")
            #expect(try PythonDigests.run(["-c", "import http_sf, sys; http_sf.parse(sys.argv[1].encode(), tltype='dictionary')", "sha-256=10"]).status == 0)
            guard path == small else {
                #expect(request.header("Content-Digest") == nil)
                continue
            }
            let body = folder + "/sent"
            _ = FileManager.default.createFile(atPath: body, contents: Data(request.body))
            let claimed = try #require(request.header("Content-Digest"))
            #expect(claimed.hasPrefix("sha-256=:"))
            #expect(try PythonDigests.verify(claimed, body), "\(claimed)")
        }
        // `--no-digest`: neither field.
        let off = try await UploadRun.run([try UploadRequest.forPath(small, url: server.url)], resume: false, digests: false)
        #expect(off.outcome() == .answered(status: 200))
        #expect(captures.all.last?.header("Content-Digest") == nil && captures.all.last?.header("Want-Repr-Digest") == nil)
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
            let run = try await UploadRun.run([try UploadRequest.forPath(small, url: receiver.url), try UploadRequest.forPath(large, url: receiver.url)],
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
