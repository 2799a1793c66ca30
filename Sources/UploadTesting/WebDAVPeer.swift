import Foundation
import Glibc

/// An independent WebDAV server for tests: WsgiDAV (PyPI) on cheroot, on 127.0.0.1 and a free
/// port (`bench/webdav_server.py`), sharing a folder of its own as `/dav/`. It is not ours, so
/// `--put` and `--create-dirs` are checked against how a WebDAV server answers (`409` for a
/// missing folder, `405` for a `MKCOL` of one that exists). It stops with `stop()`, and by
/// itself when this process ends.
public final class WebDAVPeer: @unchecked Sendable {
    public let port: Int
    /// The folder the server shares.
    public let root: String
    private let peer: PeerProcess
    private let logPath: String

    /// Whether python3 with WsgiDAV and cheroot is on this machine (`.ci/run` installs them).
    public static let available: Bool = {
        PythonDigests.hasModules(["wsgidav", "cheroot"])
    }()

    /// The shared folder's URL (ends in `/`).
    public var url: String { "http://127.0.0.1:\(port)/dav/" }

    /// Starts one off the cooperative pool; `login` (`user:password`): every request needs it.
    public static func start(login: String? = nil) async throws -> WebDAVPeer {
        try await offPool { try WebDAVPeer(login: login) }
    }

    public init(login: String? = nil) throws {
        let base = TestFiles.makeTemporaryDirectory("webdav-peer")
        root = base + "/shared"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        logPath = base + "/server.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        peer = try PeerProcess.launch("webdav_server.py", [root, logPath] + (login.map { [$0] } ?? []), logPath: logPath, what: "the WebDAV server")
        guard let port = Int(peer.firstLine.trimmingCharacters(in: .whitespaces)) else {
            peer.stop()
            throw TusPeer.PeerError(message: "the WebDAV server did not start: \(peer.firstLine)")
        }
        self.port = port
    }

    /// The contents of a file the server stored, by its path under the shared folder.
    public func stored(_ path: String) -> Data? {
        FileManager.default.contents(atPath: root + "/" + path)
    }

    /// What the server logged (requests and their answers).
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    public func stop() { peer.stop() }
}
