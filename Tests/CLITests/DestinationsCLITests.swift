import Foundation
import Testing
import UploadTesting

/// Saved destinations through the real binary: added once, then `--to NAME` (or nothing) in
/// `send`, checked with one request; and bare `uploadmon` with nothing saved, on a terminal
/// (tmux) and off one.
@Suite(.serialized, .timeLimit(.minutes(5))) struct DestinationsCLITests {
    @Test func aSavedDestinationIsUsedByNameAndAsTheDefault() async throws {
        let captured = NSLockedHeads()
        let server = try RawServer { connection in
            let head = connection.read(until: "\r\n\r\n", timeout: 10)
            captured.add(head)
            if head.hasPrefix("OPTIONS") {
                let allowed = head.contains("X-Api-Key: k-from-file")
                connection.write(
                    allowed
                        ? "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n" : "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
            } else {
                _ = connection.read(until: "--\r\n", timeout: 10)
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            }
            connection.close()
        }
        defer { server.stop() }
        let home = TestFiles.makeTemporaryDirectory("destinations-cli")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = ["HOME": home, "XDG_CONFIG_HOME": "", "XDG_STATE_HOME": home + "/state", "XDG_RUNTIME_DIR": home + "/run"]
        let photo = try TestFiles.writeImage(at: home + "/a.jpg", size: 2000)
        try Data("X-Api-Key: k-from-file\n".utf8).write(to: URL(fileURLWithPath: home + "/site.headers"))

        // A secret written in the destination is refused, and nothing is saved.
        let inline = try await CLIRun.run(["destinations", "add", "site", "--to", server.url, "-H", "X-Api-Key: k-inline"], environment: environment)
        #expect(
            inline.status == 64 && inline.stderr.contains("the header X-Api-Key is written in the file itself") && !inline.stderr.contains("Usage:"),
            "\(inline.stderr)")
        let address = server.url.replacingOccurrences(of: "http://", with: "")  // as curl takes it
        let added = try await CLIRun.run(
            [
                "destinations", "add", "site", "--to", address, "--field", "upload", "-F", "album=trip",
                "-H", "@site.headers", "--protocol", "multipart",
            ], environment: environment, directory: home)
        #expect(added.status == 0 && added.stdout.contains("Added site (\(server.url)) as the default"), "\(added.stdout) \(added.stderr)")
        let file = try String(contentsOfFile: home + "/.config/uploadmon/destinations.toml", encoding: .utf8)
        #expect(file.contains("headers = [\"@\(home)/site.headers\"]") && !file.contains("k-from-file"), "\(file)")

        let listed = try await CLIRun.run(["destinations"], environment: environment)
        #expect(listed.status == 0 && listed.stdout.contains("* site  multipart  \(server.url)  (field upload, form: 1, headers: 1)"), "\(listed.stdout)")

        // By name, from another folder: the header file, the field and the form go with it.
        let byName = try await CLIRun.run(["send", photo, "--to", "site"], environment: environment, directory: "/")
        #expect(byName.status == 0, "\(byName.stdout) \(byName.stderr)")
        let post = captured.all.last(where: { $0.hasPrefix("POST") }) ?? ""
        #expect(post.contains("X-Api-Key: k-from-file"), "\(post)")
        // As the default, with the command line's field winning.
        let byDefault = try await CLIRun.run(["send", photo, "--field", "other", "--json"], environment: environment)
        #expect(byDefault.status == 0 && byDefault.stdout.contains(#""event":"finished""#), "\(byDefault.stdout) \(byDefault.stderr)")
        #expect(captured.all.filter { $0.hasPrefix("POST") }.count == 2)

        // check: one OPTIONS with the headers an upload carries; no upload.
        let before = captured.all.count
        let check = try await CLIRun.run(["destinations", "check", "site"], environment: environment)
        #expect(
            check.status == 0 && check.stdout.contains("OK site (\(server.url))") && check.stdout.contains("OPTIONS \(server.url) → 204"),
            "\(check.stdout) \(check.stderr)")
        #expect(captured.all.count == before + 1 && captured.all.last?.hasPrefix("OPTIONS") == true)
        // The same URL without the header file: the server's refusal is said, exit 1.
        let refused = try await CLIRun.run(["destinations", "check", "--to", server.url], environment: environment)
        #expect(refused.status == 1 && refused.stdout.contains("FAILED") && refused.stdout.contains("401 Unauthorized"), "\(refused.stdout)")
        let nobody = try await CLIRun.run(["destinations", "check", "--to", "http://127.0.0.1:9/photo"], environment: environment)
        #expect(nobody.status == 2 && nobody.stdout.contains("cannot reach it"), "\(nobody.stdout)")

        // A name that is not saved is said with the names there are.
        let typo = try await CLIRun.run(["send", photo, "--to", "stie"], environment: environment)
        #expect(
            typo.status == 64 && typo.stderr.contains("there is no destination stie in \(home)/.config/uploadmon/destinations.toml (it has site)"),
            "\(typo.stderr)")

        let removed = try await CLIRun.run(["destinations", "remove", "site"], environment: environment)
        #expect(removed.status == 0 && removed.stdout.contains("It was the default"), "\(removed.stdout)")
    }

    @Test func bareUploadmonWithNothingSavedSaysHowToStart() async throws {
        let home = TestFiles.makeTemporaryDirectory("first-run-cli")
        defer { try? FileManager.default.removeItem(atPath: home) }
        // Not a terminal: the ways to start, not the whole help; exit 64.
        let bare = try await CLIRun.run([], environment: ["HOME": home, "XDG_CONFIG_HOME": ""])
        #expect(bare.status == 64, "\(bare.stderr)")
        #expect(bare.stderr.contains("uploadmon demo") && bare.stderr.contains("uploadmon destinations add NAME --to URL"), "\(bare.stderr)")
        #expect(!bare.stderr.contains("Missing expected argument") && !bare.stderr.contains("SUBCOMMANDS"))
    }

    /// On a terminal, as a new user meets it: the first-run screen, a URL typed, then the monitor
    /// on it; the next bare `uploadmon` opens the monitor on the saved default at once.
    @Test func theFirstRunOnATerminalSavesTheURLAndOpensTheMonitor() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let home = receiver.root + "/home"
        let pictures = receiver.root + "/pictures"
        try FileManager.default.createDirectory(atPath: pictures, withIntermediateDirectories: true)
        _ = try TestFiles.writeImage(at: pictures + "/first.png", size: 5000)
        let environment = "HOME='\(home)' XDG_CONFIG_HOME= XDG_STATE_HOME='\(home)/state' XDG_RUNTIME_DIR="
        let tmux = try await TmuxSession.start("cd '\(pictures)' && env \(environment) \(CLIRun.binary) --no-agent --notify none", width: 110, height: 30)
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("Your choice [d/u/q]:") }
        try await tmux.send("u", "Enter")
        try await tmux.waitFor { $0.contains("URL (e.g.") }
        let address = receiver.url.replacingOccurrences(of: "http://", with: "")
        try await tmux.send("-l", address)
        try await tmux.send("Enter")
        try await tmux.waitFor { $0.contains("A name for it [server]:") }
        try await tmux.send("-l", "local")
        try await tmux.send("Enter")
        try await tmux.waitFor { $0.contains("first.png") }
        try await tmux.send("G")
        try await tmux.send("u")
        let done = try await tmux.waitFor { $0.contains("1 upload finished") }
        #expect(done.contains(receiver.url), "the monitor sends to the URL typed: \(done)")
        #expect(TestFiles.sameContents(pictures + "/first.png", receiver.directory + "/first.png"))
        try await tmux.send("q")
        try await tmux.waitFor { $0.contains("EXITED 0") }
        let file = try String(contentsOfFile: home + "/.config/uploadmon/destinations.toml", encoding: .utf8)
        #expect(file.contains("default = \"local\"") && file.contains("url = \"\(receiver.url)\""), "\(file)")

        // The next start goes straight to the monitor on the default.
        let again = try await TmuxSession.start("cd '\(pictures)' && env \(environment) \(CLIRun.binary) --no-agent --notify none", width: 110, height: 30)
        defer { again.kill() }
        let screen = try await again.waitFor { $0.contains("first.png") }
        #expect(!screen.contains("Your choice") && screen.contains(receiver.url), "\(screen)")
    }
}

/// `D` in the monitor, in tmux: the next uploads go to the destination chosen; those queued
/// before go where they were going.
@Suite(.serialized, .timeLimit(.minutes(3))) struct DestinationSwitchTmuxTests {
    @Test func theMonitorSwitchesWhereTheNextUploadsGo() async throws {
        let first = try await ReceiverHarness.start()
        let second = try await ReceiverHarness.start()
        defer {
            Task {
                await first.cleanUp()
                await second.cleanUp()
            }
        }
        let home = first.root + "/home"
        let pictures = first.root + "/pictures"
        try FileManager.default.createDirectory(atPath: pictures, withIntermediateDirectories: true)
        _ = try TestFiles.writeImage(at: pictures + "/a.png", size: 3000)
        _ = try TestFiles.writeImage(at: pictures + "/b.png", size: 3000)
        let environment = ["HOME": home, "XDG_CONFIG_HOME": ""]
        for (name, receiver) in [("first", first), ("second", second)] {
            let added = try await CLIRun.run(["destinations", "add", name, "--to", receiver.url], environment: environment)
            #expect(added.status == 0, "\(added.stderr)")
        }
        let tmux = try await TmuxSession.start(
            "cd '\(pictures)' && env HOME='\(home)' XDG_CONFIG_HOME= \(CLIRun.binary) --no-agent --notify none", width: 110, height: 30)
        defer { tmux.kill() }
        let opened = try await tmux.waitFor { $0.contains("b.png") }
        #expect(opened.contains("uploadmon → first · \(first.url)"), "the default, by name: \(opened)")
        try await tmux.send("u")  // a.png, under the cursor
        try await tmux.waitFor { $0.contains("1 upload finished") }
        try await tmux.send("D")
        try await tmux.waitFor { $0.contains("Send to") && $0.contains("second") }
        try await tmux.send("j")
        try await tmux.send("Enter")
        let switched = try await tmux.waitFor { $0.contains("uploadmon → second · \(second.url)") }
        #expect(switched.contains("Uploads queued from now on go to second"), "\(switched)")
        try await tmux.send("j")
        try await tmux.send("u")  // b.png
        try await tmux.waitFor { $0.contains("All 2 uploads finished") }
        #expect(first.storedNames() == ["a.png"] && second.storedNames() == ["b.png"], "\(first.storedNames()) \(second.storedNames())")
        try await tmux.send("q")
        try await tmux.waitFor { $0.contains("EXITED 0") }
    }
}
