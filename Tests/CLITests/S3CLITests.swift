import Foundation
import ImagePreview
import Testing
import UploadCore
import UploadJournal
import UploadTesting

/// `send --to s3://…` as a user runs it, against moto's S3 (PyPI), which checks the signatures:
/// credentials from the environment or a profile in ~/.aws, nothing secret printed.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: S3Peer.available, "needs python3 with moto[server] and boto3 (.ci/run installs them)"))
struct S3CLITests {
    @Test func sendPutsEachFileUnderThePrefixWithTheEnvironmentsKeys() async throws {
        let server = try await S3Peer.start(buckets: ["holiday"])
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("s3-cli")
        let one = try await offPool { try TestFiles.writeImage(at: root + "/one.jpg", size: 2_000_000) }
        let two = try await offPool { try TestFiles.writeImage(at: root + "/two.jpg", size: 40_000) }
        let run = try await CLIRun.run(
            ["send", one, two, "--to", "s3://holiday/2026/", "--json"],
            environment: AgentCLITests.environment(root).merging(server.environment) { $1 })
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(server.object("holiday", "2026/one.jpg")?.size == 2_000_000)
        #expect(server.object("holiday", "2026/two.jpg")?.size == 40_000)
        #expect(!run.stdout.contains(server.secretAccessKey) && !run.stderr.contains(server.secretAccessKey))
    }

    /// A photo converted on the way into an object large enough for parts (over 8 MiB) is
    /// remembered by its original and the settings, as a one-PUT object is: sent again with
    /// `--skip-sent`, it is skipped without being converted again.
    @Test func aConvertedPhotoSentInPartsIsKnownAsSent() async throws {
        let server = try await S3Peer.start(buckets: ["big"])
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("s3-convert")
        let png = root + "/scan.png"
        try await offPool {
            // Grain everywhere: as a JPEG at quality 100 it stays well over the 8 MiB threshold.
            var seed: UInt32 = 1
            var rgb = [UInt8](repeating: 0, count: 3000 * 2400 * 3)
            for i in rgb.indices {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                rgb[i] = UInt8(truncatingIfNeeded: seed >> 24)
            }
            try PictureWriter.png(RGBImage(width: 3000, height: 2400, rgb: rgb), to: png)
        }
        let environment = AgentCLITests.environment(root).merging(server.environment) { $1 }
        let options = ["--to", "s3://big/", "--convert", "jpeg", "--quality", "100", "--skip-sent"]
        let first = try await CLIRun.run(["send", png] + options, environment: environment)
        #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
        let stored = try #require(server.object("big", "scan.jpg"))
        #expect(stored.size > 8 << 20, "\(stored.size) bytes: in parts")
        let again = try await CLIRun.run(["send", png] + options, environment: environment)
        #expect(
            again.status == 0 && again.stdout.contains("scan.png: skipped, already sent") && again.stdout.contains("as scan.jpg"),
            "\(again.stdout) \(again.stderr)")
    }

    @Test func aProfileInTheAWSFilesIsReadAsTheAWSToolsReadIt() async throws {
        let server = try await S3Peer.start(buckets: ["albums"])
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("s3-profile")
        try FileManager.default.createDirectory(atPath: root + "/home/.aws", withIntermediateDirectories: true)
        try "[uploads]\naws_access_key_id = \(server.accessKeyID)\naws_secret_access_key = \(server.secretAccessKey)\n"
            .write(toFile: root + "/home/.aws/credentials", atomically: true, encoding: .utf8)
        try "[profile uploads]\nregion = us-east-1\nendpoint_url = \(server.endpointURL)\n"
            .write(toFile: root + "/home/.aws/config", atomically: true, encoding: .utf8)
        let photo = try await offPool { try TestFiles.writeImage(at: root + "/cover.jpg", size: 10_000) }
        var environment = AgentCLITests.environment(root)
        environment["HOME"] = root + "/home"
        environment["AWS_PROFILE"] = "uploads"
        let run = try await CLIRun.run(["send", photo, "--to", "s3://albums/"], environment: environment)
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(server.object("albums", "cover.jpg")?.size == 10_000)
        let refused = try await CLIRun.run(["send", photo, "--to", "s3://albums/", "--create-dirs"], environment: environment)
        #expect(refused.status != 0 && refused.stderr.contains("S3 has none to make"))
    }

    @Test func theAgentPutsToS3WithTheCredentialsItWasStartedWith() async throws {
        let server = try await S3Peer.start(buckets: ["later"])
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("s3-agent")
        let environment = AgentCLITests.environment(root).merging(server.environment) { $1 }
        defer { if let pid = AgentCLITests.agentPID(root) { kill(pid, SIGKILL) } }
        let photo = try await offPool { try TestFiles.writeImage(at: root + "/bg.jpg", size: 1_200_000) }
        let queued = try await CLIRun.run(["send", photo, "--to", "s3://later/in/", "--background"], environment: environment)
        #expect(queued.status == 0, "\(queued.stderr)")
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await AgentCLITests.waitFor("the upload to finish") { try journal.snapshot(UploadID(1))?.state == .succeeded }
        #expect(server.object("later", "in/bg.jpg")?.size == 1_200_000)
    }

    /// The parts S3 has outlive the agent: killed with SIGKILL mid-upload, the next agent
    /// continues from them (ListParts) and the object is whole, put together once.
    @Test func anAgentKilledMidUploadContinuesFromThePartsS3Has() async throws {
        let server = try await S3Peer.start(buckets: ["vault"])
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("s3-kill")
        // Through a relay that cuts nothing and counts what crossed.
        let relay = try CuttingRelay(to: server.port, cutAfter: [])
        defer { relay.stop() }
        var environment = AgentCLITests.environment(root).merging(server.environment) { $1 }
        environment["AWS_ENDPOINT_URL"] = "http://127.0.0.1:\(relay.port)"
        defer { if let pid = AgentCLITests.agentPID(root) { kill(pid, SIGKILL) } }
        // Paced: 6 s for the file, so the kill lands after the first part and before the end.
        let big = try await offPool { try TestFiles.writeImage(at: root + "/big.jpg", size: 24_000_000) }
        let queued = try await CLIRun.run(["send", big, "--to", "s3://vault/", "--background", "--limit-rate", "4MB"], environment: environment)
        #expect(queued.status == 0, "\(queued.stderr)")
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await AgentCLITests.waitFor("the first part to be in") {
            (try journal.snapshot(UploadID(1))?.resume?.parts.count ?? 0) >= 1
        }
        let firstAgent = try #require(AgentCLITests.agentPID(root))
        #expect(kill(firstAgent, SIGKILL) == 0)
        try await AgentCLITests.waitFor("the agent to die") { kill(firstAgent, 0) != 0 }
        let kept = try #require(try journal.snapshot(UploadID(1))?.resume)
        #expect(kept.kind == .s3 && kept.uploadID != nil)

        let small = try TestFiles.writeImage(at: root + "/small.jpg", size: 2000)
        let again = try await CLIRun.run(["send", small, "--to", "s3://vault/", "--background"], environment: environment)
        #expect(again.status == 0, "\(again.stderr)")
        try await AgentCLITests.waitFor("both uploads to finish", seconds: 90) {
            try [1, 2].allSatisfy { try journal.snapshot(UploadID($0))?.state == .succeeded }
        }
        let resumed = try journal.entries(after: 0).compactMap {
            if case .resumed(let id, let offset, _) = $0.event, id == UploadID(1) { offset } else { nil }
        }
        #expect(resumed.count == 1 && (resumed.first ?? 0) >= Int64(kept.parts.count) * (8 << 20), "\(resumed) vs \(kept.parts.count) parts")
        #expect(server.object("vault", "big.jpg")?.sha256 == (try await offPool { try PythonDigests.sha256Hex(big) }))
        #expect(server.unfinishedUploads("vault").isEmpty)
        // Each part crossed about once: the file, the small one, at most the part in flight at
        // the kill again (one at a time under --limit-rate), and the requests' heads.
        #expect(relay.bytesToServer < 24_000_000 + 2000 + (8 << 20) + 200_000, "\(relay.bytesToServer) bytes crossed")
    }

    /// `presign` hands out a URL that curl (no credentials) and `send --put` can upload to;
    /// its signature is botocore's for the same request and time (moto cannot check a query
    /// signature, so here it takes the uploads unchecked).
    @Test func aPresignedURLTakesAnUploadWithoutTheCredentials() async throws {
        let server = try await S3Peer.start(buckets: ["shared"], checked: false)
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("s3-presign")
        let environment = AgentCLITests.environment(root).merging(server.environment) { $1 }
        let photo = try await offPool { try TestFiles.writeImage(at: root + "/p.jpg", size: 300_000) }
        let presigned = try await CLIRun.run(["presign", "s3://shared/by-curl.jpg", "--expires", "10m"], environment: environment)
        #expect(presigned.status == 0, "\(presigned.stderr)")
        let url = presigned.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(url.contains("X-Amz-Expires=600") && !url.contains(server.secretAccessKey))
        let curl = try await offPool { try ToolRun.output("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-T", photo, url]) }
        #expect(curl == "200", "\(curl)")
        #expect(server.object("shared", "by-curl.jpg")?.size == 300_000)

        let second = try await CLIRun.run(["presign", "s3://shared/by-send.jpg"], environment: environment)
        let put = try await CLIRun.run(
            ["send", photo, "--put", "--to", second.stdout.trimmingCharacters(in: .whitespacesAndNewlines)],
            environment: AgentCLITests.environment(root))
        #expect(put.status == 0, "\(put.stdout) \(put.stderr)")
        #expect(server.object("shared", "by-send.jpg")?.size == 300_000)

        let prefix = try await CLIRun.run(["presign", "s3://shared/folder/"], environment: environment)
        #expect(prefix.status != 0 && prefix.stderr.contains("presign needs an object's key"))
        let tooLong = try await CLIRun.run(["presign", "s3://shared/x.jpg", "--expires", "8d"], environment: environment)
        #expect(tooLong.status != 0 && tooLong.stderr.contains("--expires"))
    }

    /// A list of presigned URLs, one per object, as a service hands them out: each file goes to
    /// its own (`FILE URL` lines, or URLs paired in order with the files given), in the
    /// background too.
    @Test func aListOfPresignedURLsSendsEachFileToItsOwn() async throws {
        let server = try await S3Peer.start(buckets: ["shared"], checked: false)
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("s3-presign-list")
        let environment = AgentCLITests.environment(root).merging(server.environment) { $1 }
        defer { if let pid = AgentCLITests.agentPID(root) { kill(pid, SIGKILL) } }
        var urls: [String] = []
        for key in ["one.jpg", "two.jpg", "three.jpg", "four.jpg"] {
            let presigned = try await CLIRun.run(["presign", "s3://shared/list/" + key], environment: environment)
            #expect(presigned.status == 0, "\(presigned.stderr)")
            urls.append(presigned.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let a = try await offPool { try TestFiles.writeImage(at: root + "/a photo.jpg", size: 100_000) }
        let b = try await offPool { try TestFiles.writeImage(at: root + "/b.jpg", size: 200_000) }
        // The files named in the list; the credentials not in the environment: the URLs carry them.
        let list = root + "/urls.txt"
        try "# handed out by the demo\n\(a) \(urls[0])\n\n\(b)\t\(urls[1])\r\n".write(toFile: list, atomically: true, encoding: .utf8)
        let sent = try await CLIRun.run(["send", "--put", "--to", "@" + list], environment: AgentCLITests.environment(root))
        #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
        #expect(server.object("shared", "list/one.jpg")?.size == 100_000)
        #expect(server.object("shared", "list/two.jpg")?.size == 200_000)
        // URLs alone, paired in order with the files given, from standard input, in the background.
        let paired = try await CLIRun.run(
            ["send", a, b, "--put", "--to", "@-", "--background"], stdin: Data((urls[2] + "\n" + urls[3] + "\n").utf8),
            environment: AgentCLITests.environment(root))
        #expect(paired.status == 0, "\(paired.stdout) \(paired.stderr)")
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await AgentCLITests.waitFor("both uploads to finish") {
            try journal.snapshot(UploadID(1))?.state == .succeeded && journal.snapshot(UploadID(2))?.state == .succeeded
        }
        #expect(server.object("shared", "list/three.jpg")?.size == 100_000)
        #expect(server.object("shared", "list/four.jpg")?.size == 200_000)

        // One URL short: refused before anything is sent, saying so.
        try urls[0].write(toFile: list, atomically: true, encoding: .utf8)
        let short = try await CLIRun.run(["send", a, b, "--put", "--to", "@" + list], environment: AgentCLITests.environment(root))
        #expect(short.status == 64 && short.stderr.contains("has 1 URL(s) for 2 file(s)"), "\(short.stderr)")
        let monitor = try await CLIRun.run(["monitor", "--to", "@" + list], environment: AgentCLITests.environment(root))
        #expect(monitor.status == 64 && monitor.stderr.contains("the monitor needs one --to URL"), "\(monitor.stderr)")
        let netrc = try await CLIRun.run(["send", a, "--put", "--netrc", "--to", "@" + list], environment: AgentCLITests.environment(root))
        #expect(netrc.status == 64 && netrc.stderr.contains("--netrc finds the login for one --to URL"), "\(netrc.stderr)")
    }
}

/// An S3 upload's credentials are its signature and session token, made for the endpoint's
/// origin: a redirect to another origin is refused with where the server wanted the file, and
/// nothing reaches that origin. Two bare servers stand in for S3 and the place it points to.
@Suite(.serialized, .timeLimit(.minutes(2))) struct S3RedirectTests {
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var heads: [String] = []
        func add(_ head: String) {
            lock.lock()
            heads.append(head)
            lock.unlock()
        }
        var all: [String] {
            lock.lock()
            defer { lock.unlock() }
            return heads
        }
    }

    /// Answers every request with `answer` once its head and body are read.
    static func server(_ seen: Seen, answer: @escaping @Sendable () -> String) throws -> RawServer {
        try RawServer { connection in
            defer { connection.close() }
            while true {
                let head = connection.read(until: "\r\n\r\n", timeout: 10)
                guard head.contains("\r\n\r\n") else { return }
                seen.add(head)
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if length > 0 { _ = connection.read(exactly: length) }
                connection.write(answer())
            }
        }
    }

    @Test func aRedirectToAnotherOriginIsRefusedAndTheCredentialsStayHome() async throws {
        let landingSeen = Seen()
        let endpointSeen = Seen()
        let landing = try Self.server(landingSeen) { "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" }
        defer { landing.stop() }
        for target in ["http://127.0.0.1:\(landing.port)/landing", "http://localhost:\(landing.port)/landing"] {
            let endpoint = try Self.server(endpointSeen) { "HTTP/1.1 307 Temporary Redirect\r\nLocation: \(target)\r\nContent-Length: 0\r\n\r\n" }
            defer { endpoint.stop() }
            let root = TestFiles.makeTemporaryDirectory("s3-redirect")
            let photo = try await offPool { try TestFiles.writeImage(at: root + "/k.jpg", size: 20_000) }
            var environment = AgentCLITests.environment(root)
            environment["AWS_ACCESS_KEY_ID"] = "AKIDREDIRECTTEST"
            environment["AWS_SECRET_ACCESS_KEY"] = "secret-redirect-test"
            environment["AWS_SESSION_TOKEN"] = "session-token-redirect-test"
            environment["AWS_REGION"] = "us-east-1"
            environment["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:\(endpoint.port)"
            let run = try await CLIRun.run(["send", photo, "--to", "s3://bucket/k.jpg"], environment: environment)
            #expect(run.status != 0, "\(run.stdout) \(run.stderr)")
            let said = run.stdout + run.stderr
            #expect(said.contains("wanted the file at \(target)") && said.contains("another origin"), "\(said)")
            #expect(endpointSeen.all.contains { $0.contains("session-token-redirect-test") }, "the endpoint itself was not asked")
        }
        #expect(landingSeen.all.isEmpty, "the redirect's origin received: \(landingSeen.all)")
    }
}
