import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// `s3://` uploads against moto's S3 (PyPI), which checks every signature against an IAM user
/// of its own: the objects arrive whole under their keys, and a refusal is said in S3's words.
@Suite(.enabled(if: S3Peer.available, "needs python3 with moto[server] and boto3 (.ci/run installs them)"))
struct S3ClientTests {
    static func send(_ path: String, to url: String, environment: [String: String]) async throws -> AttemptResult {
        let transport = try HTTPUploadTransport(exchanger: nil, environment: environment)
        let result = await transport.perform(try UploadRequest.forPath(path, url: url), observer: AttemptObserver())
        try await transport.shutdown()
        return result
    }

    @Test func filesArriveWholeUnderThePrefixAndTheirNames() async throws {
        let server = try await S3Peer.start(buckets: ["photos"])
        defer { server.stop() }
        for (name, size) in [("small one.jpg", 30_000), ("big.jpg", 3_000_000)] {
            let path = try await TestFiles.image(name, size: Int64(size), in: "s3")
            let result = try await Self.send(path, to: "s3://photos/2026/trip/", environment: server.environment)
            #expect(result.outcome.isSuccess, "\(result.outcome) \(result.response.map { String(decoding: $0.body, as: UTF8.self) } ?? "")")
            let stored = try #require(server.object("photos", "2026/trip/\(name)"))
            #expect(stored.size == size)
            #expect(stored.sha256 == (try await offPool { try PythonDigests.sha256Hex(path) }))
        }
        // A key of its own: the file goes there, whatever its name.
        let path = try await TestFiles.image("x.jpg", size: 1000, in: "s3-key")
        let result = try await Self.send(path, to: "s3://photos/cover.jpg", environment: server.environment)
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(server.keys("photos").contains("cover.jpg"))
    }

    @Test func aWrongSecretOrAMissingBucketIsSaidInS3sWords() async throws {
        let server = try await S3Peer.start(buckets: ["photos"])
        defer { server.stop() }
        let path = try await TestFiles.image("a.jpg", size: 5_000, in: "s3-refused")
        var wrong = server.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let refused = try await Self.send(path, to: "s3://photos/", environment: wrong)
        guard case .failed(let failure) = refused.outcome else {
            Issue.record("\(refused.outcome)")
            return
        }
        #expect(failure.message.hasPrefix("S3 403 SignatureDoesNotMatch"), "\(failure.message)")
        #expect(!failure.message.contains("not-the-secret"))
        let missing = try await Self.send(path, to: "s3://no-such-bucket/", environment: server.environment)
        guard case .failed(let gone) = missing.outcome else {
            Issue.record("\(missing.outcome)")
            return
        }
        #expect(gone.message.hasPrefix("S3 404 NoSuchBucket"), "\(gone.message)")
        #expect(server.keys("photos").isEmpty)
    }

    @Test func noCredentialsIsRefusedBeforeAnythingIsSent() async throws {
        let path = try await TestFiles.image("a.jpg", size: 5_000, in: "s3-nothing")
        let result = try await Self.send(path, to: "s3://photos/", environment: ["HOME": "/nonexistent"])
        guard case .failed(let failure) = result.outcome else {
            Issue.record("\(result.outcome)")
            return
        }
        #expect(failure.message.contains("no AWS credentials") && result.bytesSent == 0)
    }
}

/// Files over the threshold go in parts; a cut costs at most the part in flight, and a
/// cancelled upload leaves nothing on S3 to pay for.
@Suite(.enabled(if: S3Peer.available, "needs python3 with moto[server] and boto3 (.ci/run installs them)"))
struct S3MultipartClientTests {
    @Test func aLargeFileGoesInPartsAndArrivesWhole() async throws {
        let server = try await S3Peer.start(buckets: ["big"])
        defer { server.stop() }
        let path = try await TestFiles.image("video.jpg", size: 20_000_000, in: "s3-parts")
        let result = try await S3ClientTests.send(path, to: "s3://big/", environment: server.environment)
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        let stored = try #require(server.object("big", "video.jpg"))
        #expect(stored.size == 20_000_000)
        #expect(stored.sha256 == (try await offPool { try PythonDigests.sha256Hex(path) }))
        #expect(server.unfinishedUploads("big").isEmpty)
    }

    @Test func aCutUploadContinuesFromThePartsS3Has() async throws {
        let server = try await S3Peer.start(buckets: ["big"])
        defer { server.stop() }
        let path = try await TestFiles.image("cut.jpg", size: 20_000_000, in: "s3-cut")
        // moto closes each connection after its answer: every part has one of its own. The
        // first part goes whole, the second is cut 4 MB in.
        let relay = try CuttingRelay(to: server.port, cutAfter: [4_000_000], sparing: 1)
        defer { relay.stop() }
        var environment = server.environment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(relay.port)"
        let transport = try HTTPUploadTransport(exchanger: nil, environment: environment)
        var request = try UploadRequest.forPath(path, url: "s3://big/")
        let first = await transport.perform(request, observer: AttemptObserver())
        #expect(!first.outcome.isSuccess)
        let point = try #require(first.resume)
        #expect(point.kind == .s3 && point.parts.map(\.number) == [1], "\(point.parts)")
        request.resume = point
        let before = relay.bytesToServer
        let second = await transport.perform(request, observer: AttemptObserver())
        try await transport.shutdown()
        #expect(second.outcome.isSuccess, "\(second.outcome)")
        // Only the parts after the first went again (12 MB of the file, and the requests' heads).
        #expect(relay.bytesToServer - before < 12_100_000, "\(relay.bytesToServer - before)")
        #expect(server.object("big", "cut.jpg")?.sha256 == (try await offPool { try PythonDigests.sha256Hex(path) }))
    }

    /// Within the share the queue gives it, an upload's parts go side by side: a 40 MB file at
    /// a share of three has three parts in flight (moto gives each its own connection).
    @Test func partsGoSideBySideWithinTheUploadsShare() async throws {
        let server = try await S3Peer.start(buckets: ["big"])
        defer { server.stop() }
        let path = try await TestFiles.image("wide.jpg", size: 40_000_000, in: "s3-wide")
        let relay = try CuttingRelay(to: server.port, cutAfter: [])
        defer { relay.stop() }
        var environment = server.environment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(relay.port)"
        let transport = try HTTPUploadTransport(exchanger: nil, environment: environment)
        let progress = NIOLockedValueBox<[Int64]>([])
        let observer = AttemptObserver(progress: { _, total, _ in progress.withLockedValue { $0.append(total) } }, share: { 3 })
        let result = await transport.perform(try UploadRequest.forPath(path, url: "s3://big/"), observer: observer)
        try await transport.shutdown()
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(server.object("big", "wide.jpg")?.sha256 == (try await offPool { try PythonDigests.sha256Hex(path) }))
        // (That no more than the share start is the machine's test: the relay may still hold a
        // finished part's connection for a moment after its answer.)
        #expect(relay.mostOpenAtOnce >= 3, "\(relay.mostOpenAtOnce) connections at once")
        // One progress for the whole file, whatever order the parts' bytes went in.
        let totals = progress.withLockedValue { $0 }
        #expect(totals.last == 40_000_000 && totals.allSatisfy { $0 <= 40_000_000 })
        #expect(result.bytesSent >= 40_000_000)
    }

    @Test func aDiscardedUploadIsAbortedOnS3() async throws {
        let server = try await S3Peer.start(buckets: ["big"])
        defer { server.stop() }
        let path = try await TestFiles.image("gone.jpg", size: 20_000_000, in: "s3-abort")
        let relay = try CuttingRelay(to: server.port, cutAfter: [4_000_000], sparing: 1)
        defer { relay.stop() }
        var environment = server.environment
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(relay.port)"
        let transport = try HTTPUploadTransport(exchanger: nil, environment: environment)
        let request = try UploadRequest.forPath(path, url: "s3://big/")
        let first = await transport.perform(request, observer: AttemptObserver())
        let point = try #require(first.resume)
        #expect(server.unfinishedUploads("big") == ["gone.jpg"])
        let said = await transport.discard(point, of: request)
        try await transport.shutdown()
        #expect(said == "removed from the server")
        #expect(server.unfinishedUploads("big").isEmpty)
    }
}

/// A proxy for `s3://` is chosen by the host the requests go to, not by the bucket's name.
@Suite struct S3ProxyChoiceTests {
    static let keys = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "HOME": "/nonexistent"]

    @Test func theRequestsHostNamesTheProxy() {
        let aws = Self.keys.merging(["AWS_REGION": "eu-west-1"]) { $1 }
        let url = S3AccessSource.requestURL(for: "s3://photos/2026/", environment: aws)
        #expect(url.hasPrefix("https://photos.s3.eu-west-1.amazonaws.com/"), "\(url)")
        let proxy = "http://proxy.example:3128"
        #expect(ProxyRules(proxy: proxy, noProxy: "amazonaws.com", environment: [:]).proxy(for: url) == nil)
        #expect(ProxyRules(proxy: proxy, noProxy: "photos", environment: [:]).proxy(for: url) == proxy, "a bucket's name is no host")
        // An S3-compatible service at its own address: http_proxy for an http:// one.
        let local = Self.keys.merging(["AWS_ENDPOINT_URL": "http://10.1.2.3:9000"]) { $1 }
        let minio = S3AccessSource.requestURL(for: "s3://photos/", environment: local)
        #expect(minio.hasPrefix("http://10.1.2.3:9000/photos/"), "\(minio)")
        #expect(ProxyRules(environment: ["http_proxy": proxy, "https_proxy": "http://other:1"]).proxy(for: minio) == proxy)
        #expect(ProxyRules(environment: ["http_proxy": proxy, "no_proxy": "10.0.0.0/8"]).proxy(for: minio) == nil)
        // No credentials: left as it is (the upload then says what is missing).
        #expect(S3AccessSource.requestURL(for: "s3://photos/", environment: ["HOME": "/nonexistent"]) == "s3://photos/")
        #expect(S3AccessSource.requestURL(for: "https://h/p", environment: local) == "https://h/p")
    }
}

/// What S3 checks of what arrives: every object and every part goes with its CRC-32C, and a
/// multipart upload is completed with the whole object's, which moto works out itself from the
/// parts it put together (with Python's crc32c): equal, the upload is verified.
@Suite(.enabled(if: S3Peer.available && PythonDigests.hasModules(["crc32c"]), "needs moto[server], boto3 and crc32c (.ci/run installs them)"))
struct S3ChecksumClientTests {
    @Test func aMultipartUploadIsVerifiedByTheWholeObjectsCRC() async throws {
        let server = try await S3Peer.start(buckets: ["big"])
        defer { server.stop() }
        let path = try await TestFiles.image("whole.jpg", size: 21_000_000, in: "s3-crc")
        let result = try await S3ClientTests.send(path, to: "s3://big/", environment: server.environment)
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(result.response?.verified == "crc32c", "moto's CompleteMultipartUpload named the object's CRC-32C, equal to ours")
        let stored = try #require(server.checksum("big", "whole.jpg"))
        #expect(stored.type == "FULL_OBJECT" && stored.kept == stored.ofBytes, "\(stored)")
    }

    @Test func anObjectInOnePutCarriesTheCRCOfItsBytes() async throws {
        let server = try await S3Peer.start(buckets: ["photos"])
        defer { server.stop() }
        let path = try await TestFiles.image("one.jpg", size: 300_000, in: "s3-crc-one")
        let result = try await S3ClientTests.send(path, to: "s3://photos/", environment: server.environment)
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        // moto keeps the value sent; Python's crc32c over the bytes it stored says it is theirs.
        let stored = try #require(server.checksum("photos", "one.jpg"))
        #expect(stored.kept != nil && stored.kept == stored.ofBytes, "\(stored)")
        #expect(result.response?.verified == "crc32c")
    }

    /// `--strip-location`: the CRC is that of the edited bytes, those that leave (a CRC of the
    /// file on disk would make S3 refuse every stripped photo).
    @Test(arguments: [20_000, 12_000_000])
    func aPhotoSentWithoutItsLocationCarriesTheCRCOfWhatLeaves(size: Int) async throws {
        let server = try await S3Peer.start(buckets: ["photos"])
        defer { server.stop() }
        var bytes = PictureWriter.locatedJPEGHead
        bytes += (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 >> 3) == 0xFF ? 0xFE : UInt8(truncatingIfNeeded: $0 &* 131 >> 3) } + [0xFF, 0xD9]
        let folder = TestFiles.makeTemporaryDirectory("s3-crc-strip")
        let path = folder + "/located.jpg"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let transport = try HTTPUploadTransport(stripLocation: true, exchanger: nil, environment: server.environment)
        let result = await transport.perform(try UploadRequest.forPath(path, url: "s3://photos/"), observer: AttemptObserver())
        try await transport.shutdown()
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(result.response?.verified == "crc32c")
        let stored = try #require(server.checksum("photos", "located.jpg"))
        #expect(stored.kept == stored.ofBytes, "\(stored)")
        var original = CRC32C()
        original.update(bytes)
        #expect(stored.ofBytes != original.base64, "the stored photo is the stripped one")
    }

    @Test func withoutDigestsNothingIsSentToCheck() async throws {
        let server = try await S3Peer.start(buckets: ["photos"])
        defer { server.stop() }
        let path = try await TestFiles.image("plain.jpg", size: 300_000, in: "s3-crc-off")
        let transport = try HTTPUploadTransport(digests: false, exchanger: nil, environment: server.environment)
        let result = await transport.perform(try UploadRequest.forPath(path, url: "s3://photos/"), observer: AttemptObserver())
        try await transport.shutdown()
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(server.checksum("photos", "plain.jpg")?.kept == nil)
        #expect(result.response?.verified == nil)
    }
}
