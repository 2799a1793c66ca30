import Foundation
import Glibc
import Testing
import UploadJournal
import UploadTesting

/// An account that is not root, to run the real binary as the people the tool is for run it.
/// As root (CI), a system account made for the tests (`uploadmon-user`), with a home and XDG
/// folders of its own and a copy of the binary it can read; commands drop to it with
/// `setpriv`. As anyone else, that account itself: it is already ordinary.
struct OrdinaryUser: Sendable {
    static let accountName = "uploadmon-user"
    let uid: uid_t
    let gid: gid_t
    let home: String
    let binary: String
    /// Whether commands drop privileges (the tests run as root).
    let drops: Bool

    /// The account for this run, made once; nil (with the reason) when it cannot be had.
    static let shared: Result<OrdinaryUser, OrdinaryUserError> = Result { try make() }.mapError { ($0 as? OrdinaryUserError) ?? OrdinaryUserError("\($0)") }

    static var available: Bool { (try? shared.get()) != nil }

    static func make() throws -> OrdinaryUser {
        let home = TestFiles.makeTemporaryDirectory("ordinary-home")
        guard geteuid() == 0 else {
            return OrdinaryUser(uid: getuid(), gid: getgid(), home: home, binary: CLIRun.binary, drops: false)
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { throw OrdinaryUserError("setpriv (util-linux) is missing") }
        if getpwnam(accountName) == nil {
            let made = try ToolRun.run(
                "/usr/sbin/useradd",
                [
                    "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                    "--shell", "/usr/sbin/nologin", accountName,
                ]
            ).status
            guard made == 0 || getpwnam(accountName) != nil else { throw OrdinaryUserError("useradd \(accountName) failed (\(made))") }
        }
        guard let entry = getpwnam(accountName) else { throw OrdinaryUserError("no account \(accountName)") }
        let (uid, gid) = (entry.pointee.pw_uid, entry.pointee.pw_gid)
        // The binary where the account can read it, whatever folder this checkout is in.
        let binary = home + "/bin/uploadmon"
        try FileManager.default.createDirectory(atPath: home + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: CLIRun.binary, toPath: binary)
        chmod(binary, 0o755)
        let user = OrdinaryUser(uid: uid, gid: gid, home: home, binary: binary, drops: true)
        for folder in [home, home + "/run", home + "/.local/state", home + "/.config", home + "/.cache", home + "/pictures"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try user.own(folder)
        }
        chmod(home, 0o700)
        chmod(home + "/run", 0o700)
        return user
    }

    /// Makes `path` the account's (and readable only as the account's files are).
    func own(_ path: String) throws {
        guard drops else { return }
        guard chown(path, uid, gid) == 0 else { throw OrdinaryUserError("chown \(path): \(String(cString: strerror(errno)))") }
    }

    /// The account's environment: its own HOME and XDG folders, nothing of the test process's.
    var environment: [String: String] {
        [
            "HOME": home, "XDG_RUNTIME_DIR": home + "/run", "XDG_STATE_HOME": home + "/.local/state", "XDG_CONFIG_HOME": home + "/.config",
            "XDG_CACHE_HOME": home + "/.cache", "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "USER": Self.accountName,
        ]
    }

    /// The command line that runs `arguments` of the binary as the account.
    func commandLine(_ arguments: [String], environment extra: [String: String] = [:]) -> [String] {
        let env = environment.merging(extra) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let drop = drops ? ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--"] : []
        return drop + ["/usr/bin/env", "-i"] + env + [binary] + arguments
    }

    /// The same, as one line for a shell (tmux's pane), keeping the terminal's TERM.
    func shellLine(_ arguments: [String], environment extra: [String: String] = [:]) -> String {
        var line = commandLine(arguments, environment: extra).map(Self.quoted)
        if let env = line.firstIndex(of: "'-i'") { line.insert("TERM=\"$TERM\"", at: env + 1) }
        return line.joined(separator: " ")
    }

    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    func run(_ arguments: [String], environment extra: [String: String] = [:], stdin: Data? = nil) async throws -> CLIRun {
        let line = commandLine(arguments, environment: extra)
        return try await offPool {
            try CLIRun.runProcess(line[0], Array(line.dropFirst()), environment: nil, directory: home, stdin: stdin)
        }
    }

    /// A picture of `size` bytes in the account's pictures folder, the account's own.
    func picture(_ name: String, size: Int64 = 30_000) throws -> String {
        let path = try TestFiles.writeImage(at: home + "/pictures/" + name, size: size)
        try own(path)
        return path
    }

    /// The account's journal, read from outside (root reads it; the account itself too).
    var journalPath: String { home + "/.local/state/uploadmon/journal.sqlite" }

    /// Stops the account's agent, if one runs.
    func stopAgent() async {
        _ = try? await run(["agent", "stop"])
    }
}

struct OrdinaryUserError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What a user's path depends on, as an ordinary account runs it: `send` over http and https,
/// the demo, the agent started on demand, PUT to WebDAV, S3 over http, a SOCKS5 proxy,
/// `agent install --print`, and the monitor in a terminal marking and uploading. Every test
/// and benchmark ran as root once, and a socket option only root may set failed every plain
/// http upload for everyone else: nothing here may need root.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: OrdinaryUser.available, "no ordinary account: \(OrdinaryUser.shared)"))
struct OrdinaryUserTests {
    var user: OrdinaryUser { try! OrdinaryUser.shared.get() }

    @Test func sendOverHTTPAndHTTPS() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let photo = try user.picture("plain.jpg")
        let plain = try await user.run(["send", photo, "--to", receiver.url])
        #expect(plain.status == 0, "\(plain.stdout) \(plain.stderr)")
        #expect(plain.stdout.contains("plain.jpg OK 200"), "\(plain.stdout) \(plain.stderr)")
        #expect(TestFiles.sameContents(photo, receiver.directory + "/plain.jpg"))

        let folder = TestFiles.makeTemporaryDirectory("ordinary-tls")
        let certificates = try TestCertificates.make(in: folder)
        for file in [certificates.caCertificate] { chmod(file, 0o644) }
        let secure = try await ReceiverHarness.start(tls: .init(certificateChain: certificates.serverCertificate, privateKey: certificates.serverKey))
        defer { Task { await secure.cleanUp() } }
        let secret = try user.picture("secure.jpg")
        let https = try await user.run([
            "send", secret, "--to", secure.url.replacingOccurrences(of: "http://", with: "https://"),
            "--cacert", certificates.caCertificate,
        ])
        #expect(https.status == 0, "\(https.stdout) \(https.stderr)")
        #expect(https.stdout.contains("secure.jpg OK 200"), "\(https.stdout) \(https.stderr)")
    }

    /// The demo as a newcomer runs it first: in its own folder, and it says it worked only
    /// when the pictures arrived.
    @Test func theDemoWorksForAnOrdinaryAccount() async throws {
        let run = try await user.run(["demo", "--headless", "--big-mb", "2", "--rate-mb", "100"])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("The receiver stored 5 files"), "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("/uploadmon-demo-\(user.uid)/"), "\(run.stdout)")
    }

    /// A phone's HEIC converted on the way out, as the account: sent as a JPEG of the size
    /// asked, remembered in the account's own journal (a second `--skip-sent` skips it), and
    /// `uploadmon convert` writes into the account's folder.
    @Test(
        .enabled(
            if: ["/usr/bin/heif-enc", "/usr/bin/djpeg"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
            "needs heif-enc and djpeg (.ci/run installs them)"))
    func aHEICConvertedOnTheWayOut() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let (heic, _, _) = try await offPool { try ConvertCLITests().photos(user.home + "/pictures") }
        try user.own(heic)
        let options = ["--convert", "jpeg", "--max-dimension", "400", "--skip-sent"]
        let sent = try await user.run(["send", heic, "--to", receiver.url] + options)
        #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
        #expect(receiver.storedNames() == ["IMG_0001.jpg"], "\(sent.stdout) \(sent.stderr)")
        #expect(try ConvertCLITests().size(receiver.directory + "/IMG_0001.jpg") == (400, 300))
        let again = try await user.run(["send", heic, "--to", receiver.url] + options)
        #expect(again.status == 0 && again.stdout.contains("skipped, already sent"), "\(again.stdout) \(again.stderr)")
        let out = user.home + "/pictures/converted"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try user.own(out)
        let converted = try await user.run(["convert", heic, "-o", out, "--convert", "jpeg", "--max-dimension", "200"])
        #expect(converted.status == 0, "\(converted.stdout) \(converted.stderr)")
        #expect(try ConvertCLITests().size(out + "/IMG_0001.jpg") == (200, 150))
        var info = stat()
        #expect(stat(out + "/IMG_0001.jpg", &info) == 0 && info.st_uid == user.uid, "written as the account")
    }

    /// `send --background` starts the account's own agent, which sends the file.
    @Test func theAgentStartsOnDemandAndSends() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        defer { Task { await user.stopAgent() } }
        let photo = try user.picture("later.jpg")
        let queued = try await user.run(["send", photo, "--to", receiver.url, "--background"])
        #expect(queued.status == 0, "\(queued.stdout) \(queued.stderr)")
        try await AgentCLITests.waitFor("the agent's upload", seconds: 60) { receiver.storedNames().contains("later.jpg") }
        let status = try await user.run(["status"])
        #expect(status.status == 0, "\(status.stderr)")
        let install = try await user.run(["agent", "install", "--print"])
        #expect(install.status == 0 && install.stdout.contains("ExecStart="), "\(install.stdout) \(install.stderr)")
    }

    @Test(.enabled(if: WebDAVPeer.available, "needs WsgiDAV (.ci/run installs it)"))
    func putToWebDAV() async throws {
        let server = try await WebDAVPeer.start()
        defer { server.stop() }
        let photo = try user.picture("dav.jpg")
        let run = try await user.run(["send", photo, "--put", "--to", server.url])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(server.stored("dav.jpg")?.count == 30_000)
    }

    @Test(.enabled(if: S3Peer.available, "needs moto (.ci/run installs it)"))
    func s3OverHTTP() async throws {
        let server = try await S3Peer.start(buckets: ["mine"])
        defer { server.stop() }
        let photo = try user.picture("s3.jpg")
        let run = try await user.run(["send", photo, "--to", "s3://mine/"], environment: server.environment)
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(server.object("mine", "s3.jpg")?.size == 30_000)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/microsocks"), "needs microsocks (.ci/run installs it)"))
    func throughASOCKS5Proxy() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let proxy = try ExternalProxy.microsocks()
        defer { proxy.stop() }
        let photo = try user.picture("socks.jpg")
        let run = try await user.run(["send", photo, "--to", receiver.url, "--proxy", "socks5h://127.0.0.1:\(proxy.port)"])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(receiver.storedNames().contains("socks.jpg"))
    }

    /// The monitor in a terminal: mark everything, upload, watch it arrive (through the
    /// account's agent, as the monitor does by default), quit.
    @Test(.enabled(if: TmuxSession.isAvailable, "needs tmux"))
    func theMonitorMarksAndUploads() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        defer { Task { await user.stopAgent() } }
        let folder = user.home + "/pictures/roll"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try user.own(folder)
        for index in 0..<3 {
            let path = try TestFiles.writeImage(at: folder + "/img-\(index).png", size: 20_000)
            try user.own(path)
        }
        let tmux = try await TmuxSession.start(user.shellLine([folder, "--to", receiver.url, "--notify", "none"]))
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("img-0.png") }
        try await tmux.send("*")
        try await tmux.send("u")
        let screen = try await tmux.waitFor { $0.contains("3 ok") }
        #expect(screen.contains("3 ok") && !screen.contains("Permission denied"), "\(screen)")
        #expect(Set(receiver.storedNames()) == ["img-0.png", "img-1.png", "img-2.png"])
        try await tmux.send("q")
        let after = try await tmux.waitFor { $0.contains("EXITED") }
        #expect(after.contains("EXITED 0"), "\(after)")
    }
}
