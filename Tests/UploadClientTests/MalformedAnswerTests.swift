import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import UploadClient
import UploadCore
import UploadProtocols
import UploadTesting

/// An answer whose head HTTP does not allow (a control character in an S3-compatible server's
/// `ETag`) is refused, and the failure names the server's field, not only the parser's words.
@Suite(.timeLimit(.minutes(2))) struct MalformedAnswerTests {
    let folder = TestFiles.makeTemporaryDirectory("malformed-answer")

    @Test func theFieldWithTheBadByteIsFound() {
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nETag: \"abc\u{01}def\"\r\nX-Other: ok\r\n\r\n".utf8)
        #expect(MalformedAnswer.find(in: head) == MalformedAnswer(field: "ETag", byte: 0x01, inName: false))
        // A head the parser kept from a later line on (its status line read earlier).
        #expect(MalformedAnswer.find(in: Array("x-amz-id: 1\r\nETag: \u{7F}\r\n".utf8))?.field == "ETag")
        #expect(MalformedAnswer.find(in: Array("HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n".utf8)) == MalformedAnswer(field: "BadName", byte: 0x20, inName: true))
        #expect(MalformedAnswer.find(in: Array("HTTP/1.1 200 O\u{02}K\r\n\r\n".utf8)) == MalformedAnswer(field: nil, byte: 0x02, inName: false))
        #expect(MalformedAnswer.find(in: Array("HTTP/1.1 200 OK\r\nETag: \"a\tb\"\r\n\r\n".utf8)) == nil, "a tab is allowed")
        // A bad byte after the head's end (in the body) is not the head's.
        #expect(MalformedAnswer.find(in: Array("HTTP/1.1 200 OK\r\nA: b\r\n\r\n\u{01}".utf8)) == nil)
        let words = MalformedAnswer(field: "ETag", byte: 0x01, inName: false).description
        #expect(words.contains("ETag") && words.contains("control character (0x01)") && words.contains("malformed"), "\(words)")
    }

    @Test func aPlainUploadSaysWhichFieldOfTheAnswerWasRefused() async throws {
        let server = try answeringServer("200 OK", headers: ["ETag: \"9b2cf535f27731c974343645a3985328\u{01}\u{07}\""], body: "{}")
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/a.jpg", size: 5_000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], resume: false, digests: false)
        guard case .failed(let failure) = run.outcome() else {
            Issue.record("\(String(describing: run.outcome()))")
            return
        }
        #expect(failure.message.contains("ETag header") && failure.message.contains("0x01") && failure.message.contains("malformed"), "\(failure.message)")
    }

    /// An S3-compatible server (over http, as MinIO and rclone's are run on a LAN) that answers a
    /// part with an ETag holding control characters: the upload fails naming the field (the
    /// multipart upload stays for a retry to continue, as after any failure).
    @Test func anS3PartWithAControlCharacterInItsETagFailsNamingIt() async throws {
        let seen = Captures()
        let server = try RawServer { connection in
            let request = readRequest(connection)
            seen.add(request)
            let answer: String
            if request.head.hasPrefix("POST") && request.head.contains("?uploads") {
                let xml =
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><InitiateMultipartUploadResult><Bucket>big</Bucket><Key>v.jpg</Key><UploadId>u-1</UploadId></InitiateMultipartUploadResult>"
                answer = "HTTP/1.1 200 OK\r\nContent-Length: \(xml.utf8.count)\r\nConnection: close\r\n\r\n" + xml
            } else if request.head.hasPrefix("PUT") {
                answer = "HTTP/1.1 200 OK\r\nETag: \"part\u{01}\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            } else {
                answer = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"
            }
            connection.write(answer)
            connection.close()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/v.jpg", size: S3MultipartMachine.threshold + 1_000_000)
        let environment = [
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": "http://127.0.0.1:\(server.port)",
        ]
        let result = try await S3ClientTests.send(path, to: "s3://big/", environment: environment)
        guard case .failed(let failure) = result.outcome else {
            Issue.record("\(result.outcome)")
            return
        }
        #expect(failure.message.contains("ETag header") && failure.message.contains("control character (0x01)"), "\(failure.message)")
        #expect(seen.all.contains { $0.head.hasPrefix("PUT") && $0.head.contains("partNumber=") }, "a part was sent")
    }
}

/// An S3 that refuses what arrived for its checksum (`400 BadDigest`, as S3 does when the
/// CRC-32C sent is not that of the bytes it got): the object goes once more, then the upload
/// fails with S3's reason.
@Suite(.timeLimit(.minutes(2))) struct S3ChecksumRefusalTests {
    let folder = TestFiles.makeTemporaryDirectory("s3-bad-digest")
    static let environment = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_REGION": "us-east-1"]
    static let badDigest = "<Error><Code>BadDigest</Code><Message>The CRC32C you specified did not match the calculated checksum.</Message></Error>"

    func server(refusing count: Int, seen: Captures) throws -> RawServer {
        let refusals = NIOLockedValueBox(count)
        return try RawServer { connection in
            let request = readRequest(connection)
            seen.add(request)
            let refuse = refusals.withLockedValue { n -> Bool in
                defer { n -= 1 }
                return n > 0
            }
            let answer =
                refuse
                ? "HTTP/1.1 400 Bad Request\r\nContent-Type: application/xml\r\nContent-Length: \(Self.badDigest.utf8.count)\r\nConnection: close\r\n\r\n"
                    + Self.badDigest
                : "HTTP/1.1 200 OK\r\nETag: \"e\"\r\n\(S3Checksum.header): \(request.header(S3Checksum.header) ?? "")\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            connection.write(answer)
            connection.close()
        }
    }

    @Test func refusedOnceTheObjectGoesAgainAndIsVerified() async throws {
        let seen = Captures()
        let server = try server(refusing: 1, seen: seen)
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/a.jpg", size: 200_000)
        var environment = Self.environment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(server.port)"
        let result = try await S3ClientTests.send(path, to: "s3://photos/", environment: environment)
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(result.response?.verified == "crc32c")
        let puts = seen.all.filter { $0.head.hasPrefix("PUT") }
        #expect(puts.count == 2)
        var crc = CRC32C()
        crc.update(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(puts.allSatisfy { $0.header(S3Checksum.header) == crc.base64 && $0.body.count == 200_000 }, "\(puts.map(\.head))")
    }

    @Test func refusedTwiceTheUploadFailsWithS3sReason() async throws {
        let seen = Captures()
        let server = try server(refusing: 5, seen: seen)
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/b.jpg", size: 200_000)
        var environment = Self.environment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(server.port)"
        let result = try await S3ClientTests.send(path, to: "s3://photos/", environment: environment)
        guard case .failed(let failure) = result.outcome else {
            Issue.record("\(result.outcome)")
            return
        }
        #expect(failure.message.contains("BadDigest") && failure.message.contains("CRC32C"), "\(failure.message)")
        #expect(seen.all.filter { $0.head.hasPrefix("PUT") }.count == 2, "sent twice, not more")
    }
}
