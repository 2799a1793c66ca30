import Foundation
import Glibc
import Testing
import UploadTesting

/// A proxy we did not write, started on a free port for one test and stopped after it.
final class ExternalProxy: @unchecked Sendable {
    let port: Int
    let log: String
    private let process: Process

    /// tinyproxy (HTTP, CONNECT), with `BasicAuth user password` when `login` is given.
    static func tinyproxy(login: (String, String)? = nil) throws -> ExternalProxy {
        let port = try freePort()
        let folder = TestFiles.makeTemporaryDirectory("tinyproxy")
        var config = "Port \(port)\nListen 127.0.0.1\nTimeout 60\nMaxClients 50\nLogLevel Info\nLogfile \"\(folder)/log\"\nPidFile \"\(folder)/pid\"\n"
        if let login { config += "BasicAuth \(login.0) \(login.1)\n" }
        try Data(config.utf8).write(to: URL(fileURLWithPath: folder + "/conf"))
        return try ExternalProxy(port: port, log: folder + "/log", executable: "/usr/bin/tinyproxy", arguments: ["-d", "-c", folder + "/conf"])
    }

    /// microsocks (SOCKS5, no login).
    static func microsocks() throws -> ExternalProxy {
        let port = try freePort()
        return try ExternalProxy(port: port, log: "", executable: "/usr/bin/microsocks", arguments: ["-i", "127.0.0.1", "-p", String(port)])
    }

    private init(port: Int, log: String, executable: String, arguments: [String]) throws {
        self.port = port
        self.log = log
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 {
            if let connection = try? RawConnection.connect(to: port) { connection.close(); return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        kill(process.processIdentifier, SIGKILL)
        throw CancellationError()
    }

    var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    func stop() {
        // SIGKILL: tinyproxy in the foreground finishes its open connections first on SIGTERM.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    static func freePort() throws -> Int { try LoopbackSocket.freePort() }
}

/// Proxies as curl honours them, against tinyproxy and microsocks (Debian's), started by the tests.
@Suite(.serialized, .timeLimit(.minutes(3)),
       .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tinyproxy") && FileManager.default.isExecutableFile(atPath: "/usr/bin/microsocks"),
                "needs tinyproxy and microsocks"))
struct ProxyTests {
    @Test func uploadsGoThroughTheProxyTheEnvironmentNamesAsCurlReadsIt() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let proxy = try ExternalProxy.tinyproxy()
        defer { proxy.stop() }
        // A body streamed and one sent at once: both go to the proxy as absolute-form requests
        // (as curl sends them), not through CONNECT, which many proxies allow to port 443 only.
        let big = try TestFiles.writeImage(at: receiver.root + "/big.jpg", size: 3_000_000)
        let small = try TestFiles.writeImage(at: receiver.root + "/small.jpg", size: 2000)
        let viaLower = try await CLIRun.run(["send", big, small, "--to", receiver.url, "--no-resume"],
                                            environment: ["http_proxy": "http://127.0.0.1:\(proxy.port)"])
        #expect(viaLower.status == 0, "\(viaLower.stdout) \(viaLower.stderr)")
        #expect(receiver.storedNames() == ["big.jpg", "small.jpg"])
        let forwarded = proxy.logText.components(separatedBy: "POST http://127.0.0.1:\(receiver.port)/photo").count - 1
        #expect(forwarded == 2, "\(proxy.logText)")
        #expect(!proxy.logText.contains("): CONNECT "), "no CONNECT request: \(proxy.logText)")
        // A resumable upload goes through it too: created first, then appended, in plain
        // requests (tinyproxy takes an interim 104 for the answer, so no optimistic creation).
        let resumable = try TestFiles.writeImage(at: receiver.root + "/resumable.jpg", size: 2_500_000)
        // (Retries: under a fully loaded test run one attempt through tinyproxy has been seen to
        // fail, cause not yet known; what is asserted is the way the requests take.)
        let resumed = try await CLIRun.run(["send", resumable, "--to", receiver.url, "--retries", "3"],
                                           environment: ["http_proxy": "http://127.0.0.1:\(proxy.port)"])
        #expect(resumed.status == 0, "\(resumed.stdout) \(resumed.stderr)")
        #expect(receiver.storedNames().contains("resumable.jpg"))
        #expect(TestFiles.sameContents(resumable, receiver.directory + "/resumable.jpg"))
        #expect(proxy.logText.contains("PATCH http://127.0.0.1:\(receiver.port)/resumable/"), "\(proxy.logText)")
        #expect(!proxy.logText.contains("): CONNECT "), "no CONNECT request: \(proxy.logText)")

        // Upper-case HTTP_PROXY is not curl's: the upload goes direct, the proxy sees nothing new.
        let before = proxy.logText
        let upper = try await CLIRun.run(["send", small, "--to", receiver.url], environment: ["HTTP_PROXY": "http://127.0.0.1:\(proxy.port)"])
        #expect(upper.status == 0)
        #expect(proxy.logText == before)
        // no_proxy names the host: direct too.
        let bypass = try await CLIRun.run(["send", small, "--to", receiver.url],
                                          environment: ["http_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "127.0.0.1"])
        #expect(bypass.status == 0)
        #expect(proxy.logText == before)
    }

    @Test func aSOCKS5ProxyCarriesTheUploadAndARefusingProxyIsNamed() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let socks = try ExternalProxy.microsocks()
        defer { socks.stop() }
        let file = try TestFiles.writeImage(at: receiver.root + "/s.jpg", size: 500_000)
        let via = try await CLIRun.run(["send", file, "--to", receiver.url, "--proxy", "socks5h://127.0.0.1:\(socks.port)"])
        #expect(via.status == 0, "\(via.stdout) \(via.stderr)")
        #expect(receiver.storedNames() == ["s.jpg"])

        let guarded = try ExternalProxy.tinyproxy(login: ("ann", "proxy-secret-789"))
        defer { guarded.stop() }
        let refused = try await CLIRun.run(["send", file, "--to", receiver.url, "--proxy", "http://127.0.0.1:\(guarded.port)"])
        #expect(refused.status == 2, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stdout.contains("the proxy http://127.0.0.1:\(guarded.port) wants a login (407"), "\(refused.stdout)")
        let allowed = try await CLIRun.run(["send", file, "--to", receiver.url, "--proxy", "http://ann:proxy-secret-789@127.0.0.1:\(guarded.port)"])
        #expect(allowed.status == 0, "\(allowed.stdout) \(allowed.stderr)")
        #expect(!(allowed.stdout + allowed.stderr + refused.stdout + refused.stderr).contains("proxy-secret-789"))
    }
}
