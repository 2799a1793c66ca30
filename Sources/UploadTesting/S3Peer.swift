import Foundation
import Glibc

/// An independent S3 for tests: moto's server (PyPI) on 127.0.0.1 and a free port
/// (`bench/s3_server.py`), which checks every request's SigV4 signature against an IAM user of
/// its own; the buckets named exist. Not ours, so an upload it takes is signed as AWS signs.
public final class S3Peer: @unchecked Sendable {
    public let port: Int
    public let accessKeyID: String
    public let secretAccessKey: String
    private let peer: PeerProcess
    private let lock = NSLock()
    public let logPath: String

    /// Whether python3 with moto's server and boto3 is on this machine (`.ci/run` installs them).
    public static let available: Bool = {
        PythonDigests.hasModules(["moto", "boto3", "flask"])
    }()

    /// `AWS_ENDPOINT_URL` for it.
    public var endpointURL: String { "http://127.0.0.1:\(port)" }

    /// The environment an uploadmon process needs to reach it (credentials, region, endpoint).
    public var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey, "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpointURL,
        ]
    }

    /// `checked`: signatures are verified (false: moto takes anything, for presigned URLs, whose
    /// query signature it cannot check).
    public static func start(buckets: [String], checked: Bool = true) async throws -> S3Peer {
        try await offPool { try S3Peer(buckets: buckets, checked: checked) }
    }

    public init(buckets: [String], checked: Bool = true) throws {
        let base = TestFiles.makeTemporaryDirectory("s3-peer")
        logPath = base + "/server.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        peer = try PeerProcess.launch("s3_server.py", [logPath] + (checked ? [] : ["--unchecked"]) + buckets, logPath: logPath, what: "the S3 server")
        let words = peer.firstLine.split(separator: " ").map(String.init)
        guard words.count == 3, let port = Int(words[0]) else {
            peer.stop()
            throw TusPeer.PeerError(message: "the S3 server did not start: \(peer.firstLine)")
        }
        self.port = port
        accessKeyID = words[1]
        secretAccessKey = words[2]
    }

    /// Size and SHA-256 (hex) of the object stored at `key`, or nil.
    public func object(_ bucket: String, _ key: String) -> (size: Int, sha256: String)? {
        let words = ask("get \(bucket) \(key)").split(separator: " ")
        guard words.count == 2, let size = Int(words[0]) else { return nil }
        return (size, String(words[1]))
    }

    /// The CRC-32C the object at `key` was stored with and its type (HeadObject's, nil when it
    /// has none), and the CRC-32C of its bytes as Python's crc32c works it out; all base64.
    public func checksum(_ bucket: String, _ key: String) -> (kept: String?, type: String?, ofBytes: String)? {
        let words = ask("checksum \(bucket) \(key)").split(separator: " ").map(String.init)
        guard words.count == 3 else { return nil }
        return (words[0] == "-" ? nil : words[0], words[1] == "-" ? nil : words[1], words[2])
    }

    /// The keys in `bucket`.
    public func keys(_ bucket: String) -> [String] {
        (try? JSONSerialization.jsonObject(with: Data(ask("keys \(bucket)").utf8)) as? [String]) ?? []
    }

    /// The keys of multipart uploads in `bucket` that were neither completed nor aborted.
    public func unfinishedUploads(_ bucket: String) -> [String] {
        (try? JSONSerialization.jsonObject(with: Data(ask("uploads \(bucket)").utf8)) as? [String]) ?? []
    }

    private func ask(_ line: String) -> String {
        lock.lock()
        defer { lock.unlock() }
        peer.input.fileHandleForWriting.write(Data((line + "\n").utf8))
        return PeerProcess.readLine(peer.output)
    }

    public func stop() { peer.stop() }
}
