import Foundation
import ImagePreview
import Testing
import UploadCore
import UploadJournal
import UploadTesting

/// `--convert`, `--max-dimension`, `--max-bytes` from the command line and through the agent,
/// against the built-in receiver; what arrives is read with djpeg (libjpeg-turbo-progs).
@Suite(
    .serialized, .timeLimit(.minutes(4)),
    .enabled(
        if: ["/usr/bin/heif-enc", "/usr/bin/djpeg"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
        "needs heif-enc and djpeg (.ci/run installs libheif-examples and libjpeg-turbo-progs)"))
struct ConvertCLITests {
    /// A phone's HEIC (4:3, 1600 x 1200), a screenshot PNG (1000 x 2000) and a small JPEG.
    func photos(_ root: String) throws -> (heic: String, png: String, small: String) {
        var rgb = [UInt8](repeating: 128, count: 1600 * 1200 * 3)
        for y in 0..<1200 {
            for x in 0..<1600 {
                rgb[(y * 1600 + x) * 3] = UInt8(x * 255 / 1600)
                rgb[(y * 1600 + x) * 3 + 1] = UInt8(y * 255 / 1200)
            }
        }
        let jpeg = root + "/source.jpg"
        try PictureWriter.jpeg(RGBImage(width: 1600, height: 1200, rgb: rgb), to: jpeg, quality: 92)
        let heic = root + "/IMG_0001.HEIC"
        let encode = Process()
        encode.executableURL = URL(fileURLWithPath: "/usr/bin/heif-enc")
        encode.arguments = ["-q", "80", "-o", heic, jpeg]
        encode.standardOutput = FileHandle.nullDevice
        try encode.run()
        encode.waitUntilExit()
        let png = root + "/shot.png"
        try PictureWriter.png(RGBImage(width: 1000, height: 2000, rgb: [UInt8](repeating: 200, count: 1000 * 2000 * 3)), to: png)
        let small = root + "/small.jpg"
        try PictureWriter.jpeg(RGBImage(width: 300, height: 200, rgb: [UInt8](repeating: 90, count: 300 * 200 * 3)), to: small)
        return (heic, png, small)
    }

    /// The size djpeg reads in `path`.
    func size(_ path: String) throws -> (Int, Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/djpeg")
        process.arguments = ["-pnm", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let header = String(decoding: data.prefix(32), as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard process.terminationStatus == 0, header.count >= 3, let w = Int(header[1]), let h = Int(header[2]) else { return (0, 0) }
        return (w, h)
    }

    @Test func sendConvertsWhatMustChangeAndNamesItAfterItsFormat() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let (heic, png, small) = try await offPool { try photos(receiver.root) }
        let plan = try await CLIRun.run(["send", heic, png, small, "--to", receiver.url, "--convert", "jpeg", "--max-dimension", "512", "--dry-run"])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("as IMG_0001.jpg") && plan.stdout.contains("as shot.jpg"), "\(plan.stdout)")
        #expect(plan.stdout.contains("photos as JPEG q85, at most 512 px"), "\(plan.stdout)")
        #expect(receiver.storedNames().isEmpty)

        let run = try await CLIRun.run(["send", heic, png, small, "--to", receiver.url, "--convert", "jpeg", "--max-dimension", "512"])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(receiver.storedNames() == ["IMG_0001.jpg", "shot.jpg", "small.jpg"], "\(receiver.storedNames())")
        #expect(try size(receiver.directory + "/IMG_0001.jpg") == (512, 384))
        #expect(try size(receiver.directory + "/shot.jpg") == (256, 512))
        // Already a JPEG within the size: sent as it is, byte for byte.
        #expect(FileManager.default.contents(atPath: receiver.directory + "/small.jpg") == FileManager.default.contents(atPath: small))
    }

    @Test func theAgentConvertsAsTheCommandSaid() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let root = TestFiles.makeTemporaryDirectory("convert-agent")
        let env = AgentCLITests.environment(root)
        defer { if let pid = AgentCLITests.agentPID(root) { kill(pid, SIGKILL) } }
        let (heic, _, _) = try await offPool { try photos(root) }
        let queued = try await CLIRun.run(["send", heic, "--to", receiver.url, "--convert", "jpeg", "--max-bytes", "60k", "--background"], environment: env)
        #expect(queued.status == 0, "\(queued.stderr)")
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await AgentCLITests.waitFor("the upload to finish") { try journal.snapshot(UploadID(1))?.state == .succeeded }
        #expect(receiver.storedNames() == ["IMG_0001.jpg"])
        let stored = FileManager.default.contents(atPath: receiver.directory + "/IMG_0001.jpg")
        #expect((stored?.count ?? .max) <= 60 * 1024)
        #expect(try size(receiver.directory + "/IMG_0001.jpg") == (1600, 1200))
    }

    /// `--skip-sent` knows a photo sent converted by its original and the settings, whether the
    /// agent or a foreground `send` sent it, under any name; other settings send it again.
    @Test func skipSentKnowsAPhotoSentConvertedWithTheSameSettings() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let root = TestFiles.makeTemporaryDirectory("convert-skip")
        let env = AgentCLITests.environment(root)
        defer { if let pid = AgentCLITests.agentPID(root) { kill(pid, SIGKILL) } }
        let (heic, png, _) = try await offPool { try photos(root) }
        let settings = ["--convert", "jpeg", "--max-dimension", "512"]
        let queued = try await CLIRun.run(["send", heic, "--to", receiver.url, "--background"] + settings, environment: env)
        #expect(queued.status == 0, "\(queued.stderr)")
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await AgentCLITests.waitFor("the upload to finish") { try journal.snapshot(UploadID(1))?.state == .succeeded }
        // A foreground send of the screenshot, converted too.
        let first = try await CLIRun.run(["send", png, "--to", receiver.url] + settings, environment: env)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(receiver.storedNames() == ["IMG_0001.jpg", "shot.jpg"], "\(receiver.storedNames())")

        // The same photos under other names, the same settings: nothing goes.
        let moved = root + "/moved.heic"
        try FileManager.default.copyItem(atPath: heic, toPath: moved)
        let again = try await CLIRun.run(["send", moved, png, "--to", receiver.url, "--skip-sent"] + settings, environment: env)
        #expect(again.status == 0, "\(again.stdout) \(again.stderr)")
        // Each said under the name it went by: the agent's (IMG_0001.jpg) and the foreground send's (shot.jpg).
        #expect(again.stdout.contains("moved.heic: skipped, already sent to") && again.stdout.contains("as IMG_0001.jpg (same content)"), "\(again.stdout)")
        #expect(again.stdout.contains("shot.png: skipped, already sent to") && again.stdout.contains("as shot.jpg (same content)"), "\(again.stdout)")
        #expect(receiver.storedNames().count == 2, "\(receiver.storedNames())")

        // Other settings make other bytes: sent.
        let smaller = try await CLIRun.run(
            ["send", moved, "--to", receiver.url, "--skip-sent", "--convert", "jpeg", "--max-dimension", "256"], environment: env)
        #expect(smaller.status == 0, "\(smaller.stdout) \(smaller.stderr)")
        #expect(!smaller.stdout.contains("skipped"), "\(smaller.stdout)")
        #expect(receiver.storedNames().count == 3, "\(receiver.storedNames())")
        // Sent as it is, the original is not what went either.
        let plain = try await CLIRun.run(["send", png, "--to", receiver.url, "--skip-sent"], environment: env)
        #expect(plain.status == 0 && !plain.stdout.contains("skipped"), "\(plain.stdout) \(plain.stderr)")
    }

    /// A server that takes JPEG only (415 with `Accept: image/jpeg` for anything else): `send`
    /// names the flag that would have sent the HEIC, and with it the HEIC goes.
    @Test func aRefusalForTheFormatNamesTheFlag() async throws {
        let server = try RawServer { connection in
            let request = connection.read(until: "--\r\n", timeout: 10)
            if request.contains("Content-Type: image/jpeg") {
                connection.write("HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            } else {
                let body = #"{"detail":"only JPEG photos are accepted"}"#
                connection.write(
                    "HTTP/1.1 415 Unsupported Media Type\r\nAccept: image/jpeg\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
            }
            connection.close()
        }
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("convert-415")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (heic, _, small) = try await offPool { try photos(root) }
        let refused = try await CLIRun.run(["send", heic, small, "--to", server.url])
        #expect(refused.status != 0, "\(refused.stdout)")
        #expect(refused.stdout.contains("1 photo was refused for its format (IMG_0001.HEIC): --convert jpeg sends it as JPEG"), "\(refused.stdout)")
        let converted = try await CLIRun.run(["send", heic, "--to", server.url, "--convert", "jpeg"])
        #expect(converted.status == 0, "\(converted.stdout) \(converted.stderr)")
        #expect(!converted.stdout.contains("refused for its format"), "\(converted.stdout)")
    }

    /// The monitor, in tmux, against a server that takes JPEG only: the HEIC is refused, the
    /// status line offers `C`, and `C` sends it again as a JPEG, which the server takes.
    @Test func theMonitorOffersToSendARefusedHEICAgainAsJPEG() async throws {
        let captured = NSLockedHeads()
        let server = try RawServer { connection in
            let request = connection.read(until: "--\r\n", timeout: 10)
            let jpeg = request.contains("Content-Type: image/jpeg")
            captured.add(jpeg ? "jpeg" : "other")
            if jpeg {
                connection.write("HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            } else {
                connection.write("HTTP/1.1 415 Unsupported Media Type\r\nAccept: image/jpeg\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            }
            connection.close()
        }
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("convert-monitor")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (heic, _, _) = try await offPool { try photos(root) }
        let pictures = root + "/pictures"
        try FileManager.default.createDirectory(atPath: pictures, withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: heic, toPath: pictures + "/IMG_0001.HEIC")
        let tmux = try await TmuxSession.start("\(CLIRun.binary) '\(pictures)' --to \(server.url) --notify none --no-agent")
        defer { tmux.kill() }
        try await tmux.waitFor { $0.contains("IMG_0001.HEIC") }
        try await tmux.send("u")
        let offered = try await tmux.waitFor { $0.contains("C sends the refused photos again as JPEG") }
        #expect(offered.contains("415"), "\(offered)")
        #expect(captured.all == ["other"])
        try await tmux.send("C")
        let sent = try await tmux.waitFor { $0.contains("Created") && captured.all.count == 2 }
        #expect(captured.all == ["other", "jpeg"], "\(sent)")
        #expect(sent.contains("IMG_0001.jpg") || sent.contains("IMG_0001.HEIC"), "\(sent)")
        try await tmux.send("q")
    }

    /// `uploadmon convert`: the files written into a folder, one per core at a time, said in the
    /// order given; one that cannot be written and one already there are said, the rest written.
    @Test func convertWritesTheFolderAndSaysEachInOrder() async throws {
        let root = TestFiles.makeTemporaryDirectory("convert-folder")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (heic, png, small) = try await offPool { try photos(root) }
        let out = root + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let text = root + "/notes.txt"
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: text))
        try Data("mine".utf8).write(to: URL(fileURLWithPath: out + "/small.jpg"))
        let run = try await CLIRun.run(["convert", heic, text, png, small, "-o", out, "--convert", "jpeg", "--max-dimension", "640"])
        #expect(run.status == 1, "\(run.stdout) \(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.count == 2 && lines[0].hasPrefix(heic + " → " + out + "/IMG_0001.jpg: JPEG 640 x 480 q85")
                && lines[1].hasPrefix(png + " → " + out + "/shot.jpg: JPEG 320 x 640"), "\(run.stdout)")
        #expect(run.stderr.contains("notes.txt: only photos can be converted"), "\(run.stderr)")
        #expect(run.stderr.contains("small.jpg exists; not overwritten"), "\(run.stderr)")
        #expect(try size(out + "/IMG_0001.jpg") == (640, 480))
        #expect(FileManager.default.contents(atPath: out + "/small.jpg") == Data("mine".utf8))
    }

    /// A watched folder converts as the command said, and its `--skip-sent` knows a copy of a
    /// photo it sent converted.
    @Test func aWatchedFolderConvertsAndKnowsWhatItSentConverted() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let root = TestFiles.makeTemporaryDirectory("convert-watch")
        let env = AgentCLITests.environment(root)
        defer { if let pid = AgentCLITests.agentPID(root) { kill(pid, SIGKILL) } }
        let (heic, _, _) = try await offPool { try photos(root) }
        let folder = root + "/camera"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: heic, toPath: folder + "/IMG_0001.HEIC")
        let watched = try await CLIRun.run(
            [
                "watch", folder, "--to", receiver.url, "--every", "1s", "--skip-sent",
                "--convert", "jpeg", "--max-dimension", "512",
            ], environment: env)
        #expect(watched.status == 0, "\(watched.stderr)")
        try await AgentCLITests.waitFor("IMG_0001.jpg to arrive", seconds: 30) { receiver.storedNames() == ["IMG_0001.jpg"] }
        #expect(try size(receiver.directory + "/IMG_0001.jpg") == (512, 384))
        try FileManager.default.copyItem(atPath: heic, toPath: folder + "/copy.heic")
        let journal = try Journal(path: root + "/state/uploadmon/journal.sqlite")
        try await AgentCLITests.waitFor("the copy to be passed over", seconds: 30) { try journal.watchFiles(2)["copy.heic"]?.state == .skipped }
        #expect(receiver.storedNames() == ["IMG_0001.jpg"])
        _ = try await CLIRun.run(["agent", "stop"], environment: env)
    }

    @Test func whatCannotBeConvertedIsSaidInWords() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let (_, png, small) = try await offPool { try photos(receiver.root) }
        for (arguments, says) in [
            (["--convert", "gif"], "--convert gif is not a format photos are written in: jpeg, webp or keep"),
            (["--quality", "70"], "--quality sets how photos written again are written"),
            (["--convert", "jpeg", "--quality", "0"], "--quality 0 is out of range: from 1 to 100"),
            (["--max-dimension", "4"], "--max-dimension 4 is out of range"),
            (["--max-bytes", "10"], "--max-bytes"),
        ] {
            let run = try await CLIRun.run(["send", small, "--to", receiver.url] + arguments)
            #expect(run.status == 64, "\(arguments): \(run.stderr)")
            #expect(run.stderr.contains(says), "\(arguments): \(run.stderr)")
        }
        // A PNG resized in its own format cannot be written; the JPEG beside it goes.
        let run = try await CLIRun.run(["send", png, small, "--to", receiver.url, "--max-dimension", "100"])
        #expect(run.status != 0)
        #expect(run.stdout.contains("a PNG photo cannot be written again in its own format; add --convert jpeg or --convert webp"), "\(run.stdout)")
        #expect(receiver.storedNames() == ["small.jpg"], "\(receiver.storedNames())")
        #expect(try size(receiver.directory + "/small.jpg") == (100, 67))
    }
}
