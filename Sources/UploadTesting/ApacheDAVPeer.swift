import Foundation
import Glibc

/// Apache's own WebDAV (Debian's apache2: mod_dav and mod_dav_fs) for tests, with a config of
/// its own on 127.0.0.1 and a free port, sharing a folder as `/dav/`, optionally behind a Basic
/// login (mod_auth_basic, a file made with `htpasswd`). The WebDAV server most Linux hosts
/// already have: `409` for a `PUT` into a missing folder, `405` for a `MKCOL` of one that
/// exists. It stops with `stop()`, and by itself when this process ends (a shell holds it and
/// kills it when its standard input closes).
public final class ApacheDAVPeer: @unchecked Sendable {
    public let port: Int
    /// The folder the server shares.
    public let root: String
    private let base: String
    private let process: Process
    private let input = Pipe()

    static let apache = "/usr/sbin/apache2"
    static let modules = "/usr/lib/apache2/modules"

    /// Whether Debian's apache2 (with mod_dav_fs) and htpasswd are here (`.ci/run` installs them).
    public static let available: Bool = {
        FileManager.default.isExecutableFile(atPath: apache) && FileManager.default.fileExists(atPath: modules + "/mod_dav_fs.so")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/htpasswd")
    }()

    /// The shared folder's URL (ends in `/`).
    public var url: String { "http://127.0.0.1:\(port)/dav/" }

    public static func start(login: (user: String, password: String)? = nil) async throws -> ApacheDAVPeer {
        try await offPool { try ApacheDAVPeer(login: login) }
    }

    public init(login: (user: String, password: String)? = nil) throws {
        base = TestFiles.makeTemporaryDirectory("apache-dav")
        root = base + "/shared"
        for folder in [root, base + "/lock"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // Run as root, Apache's workers are www-data: they write here.
            chmod(folder, 0o777)
        }
        port = try LoopbackSocket.freePort()
        var access = "Require all granted"
        if let login {
            let made = try ToolRun.run("/usr/bin/htpasswd", ["-bcB", base + "/htpasswd", login.user, login.password])
            guard made.status == 0 else { throw TusPeer.PeerError(message: "htpasswd failed: \(made.output)") }
            access = "AuthType Basic\n  AuthName \"dav\"\n  AuthUserFile \(base)/htpasswd\n  Require valid-user"
        }
        let modules = ["mpm_event", "authz_core", "authn_core", "authn_file", "auth_basic", "authz_user", "alias", "dav", "dav_fs"]
        let config = """
            ServerRoot "\(base)"
            ServerName 127.0.0.1
            PidFile \(base)/httpd.pid
            Listen 127.0.0.1:\(port)
            \(modules.map { "LoadModule \($0)_module \(Self.modules)/mod_\($0).so" }.joined(separator: "\n"))
            User www-data
            Group www-data
            ErrorLog \(base)/error.log
            LogFormat "%r %>s" short
            CustomLog \(base)/access.log short
            DavLockDB \(base)/lock/DavLock
            DocumentRoot \(base)/empty
            Alias /dav \(root)
            <Directory \(root)>
              Dav On
              \(access)
            </Directory>
            """
        try FileManager.default.createDirectory(atPath: base + "/empty", withIntermediateDirectories: true)
        try config.write(toFile: base + "/httpd.conf", atomically: true, encoding: .utf8)
        process = Process()
        // This process blocks nearly every signal on its threads and a child inherits that mask:
        // Apache would never see the SIGTERM that stops it. Unblocked before the shell starts.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import os, signal, sys
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            os.execv("/bin/sh", ["sh", "-c", sys.argv[1]])
            """, "\(Self.apache) -f \(base)/httpd.conf -DFOREGROUND & server=$!; read _; kill $server; wait $server",
        ]
        process.standardInput = input
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        // Ready when it accepts a connection.
        for _ in 0..<200 {
            if Self.accepts(port) { return }
            if !process.isRunning { break }
            usleep(50_000)
        }
        stop()
        throw TusPeer.PeerError(message: "Apache did not start: \(log) \((try? String(contentsOfFile: base + "/error.log", encoding: .utf8)) ?? "")")
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = LoopbackSocket.address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// The contents of a file the server stored, by its path under the shared folder.
    public func stored(_ path: String) -> Data? {
        FileManager.default.contents(atPath: root + "/" + path)
    }

    /// The requests it answered: `METHOD /path HTTP/1.1 STATUS`, one a line.
    public var log: String { (try? String(contentsOfFile: base + "/access.log", encoding: .utf8)) ?? "" }

    /// Stops Apache (SIGTERM to its main process, which ends its workers; the shell that holds
    /// it sees its input close). Nothing waits here: a test thread blocked while a server winds
    /// down stalls every other test's tasks.
    public func stop() {
        if let text = try? String(contentsOfFile: base + "/httpd.pid", encoding: .utf8), let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGTERM)
        }
        try? input.fileHandleForWriting.close()
    }
}
