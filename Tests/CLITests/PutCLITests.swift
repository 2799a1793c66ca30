import Foundation
import Testing
import UploadCore
import UploadJournal
import UploadTesting

/// `--put` from the command line and through the agent, against WsgiDAV (PyPI): curl `-T`'s
/// rules, `--create-dirs`, what is refused up front, and `-u`-style logins by netrc.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: WebDAVPeer.available, "needs python3 with wsgidav and cheroot (.ci/run installs them)"))
struct PutCLITests {
    @Test func sendPutsEachFileUnderItsNameMakingTheFolders() async throws {
        let server = try await WebDAVPeer.start()
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("put-cli")
        let one = try await offPool { try TestFiles.writeImage(at: root + "/one.jpg", size: 3_000_000) }
        let two = try await offPool { try TestFiles.writeImage(at: root + "/two 2.jpg", size: 20_000) }
        let refused = try await CLIRun.run(
            ["send", one, "--to", server.url + "trip/day1/", "--put", "--json"],
            environment: AgentCLITests.environment(root))
        #expect(refused.status != 0)
        #expect(refused.stdout.contains("\"status\":409"), "\(refused.stdout)")
        let run = try await CLIRun.run(
            ["send", one, two, "--to", server.url + "trip/day1/", "--put", "--create-dirs", "--json"],
            environment: AgentCLITests.environment(root))
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(server.stored("trip/day1/one.jpg") == FileManager.default.contents(atPath: one))
        #expect(server.stored("trip/day1/two 2.jpg") == FileManager.default.contents(atPath: two))
        let lines = run.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let started = lines.filter { $0["event"] as? String == "started" }.compactMap { $0["url"] as? String }
        #expect(started.contains(server.url + "trip/day1/two%202.jpg"), "\(started)")
    }

    @Test func theAgentPutsAsTheCommandSaid() async throws {
        let server = try await WebDAVPeer.start()
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("put-agent")
        let env = AgentCLITests.environment(root)
        defer { if let pid = AgentCLITests.agentPID(root) { kill(pid, SIGKILL) } }
        let photo = try await offPool { try TestFiles.writeImage(at: root + "/bg.jpg", size: 1_500_000) }
        let queued = try await CLIRun.run(["send", photo, "--to", server.url + "later/", "--put", "--create-dirs", "--background"], environment: env)
        #expect(queued.status == 0, "\(queued.stderr)")
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await AgentCLITests.waitFor("the upload to finish") { try journal.snapshot(UploadID(1))?.state == .succeeded }
        #expect(server.stored("later/bg.jpg") == FileManager.default.contents(atPath: photo))
    }

    @Test func whatAPutCannotCarryIsRefusedUpFront() async throws {
        let root = TestFiles.makeTemporaryDirectory("put-refusals")
        let photo = try await offPool { try TestFiles.writeImage(at: root + "/p.jpg", size: 2_000) }
        for (arguments, says) in [
            (["--put", "--protocol", "tus"], "--put sends a PUT; it cannot go with --protocol tus"),
            (["--create-dirs"], "--create-dirs makes WebDAV folders for --put; add --put"),
            (["--put", "-F", "album=x"], "--put sends the file's bytes alone"),
        ] {
            let run = try await CLIRun.run(["send", photo, "--to", "http://127.0.0.1:9/dav/"] + arguments, environment: AgentCLITests.environment(root))
            #expect(run.status != 0)
            #expect(run.stderr.contains(says), "\(arguments): \(run.stderr)")
        }
    }
}
