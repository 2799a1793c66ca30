import Foundation
import ImagePreview
import Testing
import UploadTesting

/// Runs the built `uploadmon` binary as a user would and checks output and exit status.
struct CLIRun {
    var status: Int32
    var stdout: String
    var stderr: String

    static var binary: String {
        // The test bundle sits next to the products it was built with.
        var url = Bundle.main.bundleURL
        while url.path != "/" {
            let candidate = url.appendingPathComponent("uploadmon").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            url.deleteLastPathComponent()
        }
        return ".build/debug/uploadmon"
    }

    static func run(_ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:], directory: String? = nil) async throws -> CLIRun {
        try await offPool { try runBlocking(arguments, stdin: stdin, environment: environment, directory: directory) }
    }

    static func runBlocking(_ arguments: [String], stdin: Data?, environment: [String: String], directory: String? = nil) throws -> CLIRun {
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        return try runProcess(binary, arguments, environment: env, directory: directory, stdin: stdin)
    }

    /// `executable` with `arguments` (in `environment`, or this process's when nil), its
    /// standard input `stdin`; waits for it and returns what it printed.
    static func runProcess(
        _ executable: String, _ arguments: [String], environment: [String: String]?, directory: String?,
        stdin: Data?
    ) throws -> CLIRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIRun(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct SendCommandTests {
    /// A photo whose modification time is set far in the future (`touch -d`; ext4 keeps up to
    /// 2446) once crashed `send` while it took the file's stamps.
    @Test func aFileFromTheFarFutureIsSent() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/far.jpg", size: 5_000)
        let far = timespec(tv_sec: 15_032_385_535, tv_nsec: 0)
        #expect(utimensat(AT_FDCWD, path, [far, far], 0) == 0)
        let run = try await CLIRun.run(["send", path, "--to", receiver.url], environment: ["XDG_STATE_HOME": receiver.root + "/state"])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("far.jpg OK 200"), "\(run.stdout)")
        await receiver.cleanUp()
    }

    /// `send`'s usual command lines are read without ArgumentParser (`SendInvocation.quick`);
    /// the debug binary reads each also through the declaration and stops if the two differ.
    /// Every shape here is read both ways (a missing file: refused after parsing, nothing sent).
    @Test func theQuickReadingOfSendAgreesWithTheDeclaration() async throws {
        let missing = NSTemporaryDirectory() + "uploadmon-missing-\(UUID().uuidString).jpg"
        let to = ["--to", "http://127.0.0.1:9/photo"]
        for arguments in [
            [missing] + to,
            to + [missing, "--json"],
            ["--to=http://127.0.0.1:9/p?a=b", missing, "-F", "k=v", "--form=k2=v2", "-H", "X-A: 1", "--header", "X-B: 2"],
            [missing, "--field", "file", "--name", "x.jpg", "--concurrency", "3", "--retries", "2"] + to,
            [missing, "--no-digest", "--strip-location", "--any-file", "--insecure", "--no-resume", "--skip-sent"] + to,
            [missing, "--protocol", "tus", "--chunk-size", "5MiB", "--limit-rate", "500k"] + to,
            [missing, "--connect-timeout", "5s", "--stall-timeout", "1m", "--answer-timeout", "90"] + to,
            [missing, "--proxy", "", "--noproxy", "*"] + to,  // an empty value: through ArgumentParser
            [missing, "--proxy", "http://127.0.0.1:9", "--noproxy", "example.com"] + to,
            [missing, "--put", "--create-dirs"] + to,
            [missing, "--upload-url", "http://127.0.0.1:9/files/1"] + to,
        ] {
            let run = try await CLIRun.run(["send"] + arguments)
            #expect(run.status == 64 || run.status == 2, "\(arguments): \(run.status) \(run.stderr)")
            #expect(!run.stderr.contains("read two ways differs"), "\(arguments): \(run.stderr)")
        }
    }

    /// What curl users type: `--to host:port/path` (http:// assumed), `--retry N`, and a 500
    /// retried as curl's `--retry` retries it; one upload is said as one.
    @Test func curlsHabitsAreTakenAsCurlTakesThem() async throws {
        let receiver = try await ReceiverHarness.start()
        let photo = try TestFiles.writeImage(at: receiver.root + "/a.jpg", size: 2_000)
        let bare = try await CLIRun.run(["send", photo, "--to", "127.0.0.1:\(receiver.port)/photo"])
        #expect(bare.status == 0, "\(bare.stdout) \(bare.stderr)")
        #expect(bare.stdout.contains("sending to http://127.0.0.1:\(receiver.port)/photo"), "\(bare.stdout)")
        #expect(bare.stdout.contains("1 upload finished: 1 ok, 0 failed") && !bare.stdout.contains("all 1 uploads"), "\(bare.stdout)")
        // A host that cannot be resolved is said in the resolver's words, once.
        let nowhere = try await CLIRun.run(["send", photo, "--to", "http://no-such-host.invalid:8080/photo"])
        #expect(nowhere.status == 2)
        #expect(
            nowhere.stdout.contains("cannot resolve no-such-host.invalid: ") && !nowhere.stdout.contains("SocketAddressError")
                && !nowhere.stdout.contains("for host"), "\(nowhere.stdout)")
        // A server failing once with 500, then storing it: --retry 1 gets there.
        let asked = S3RedirectTests.Seen()
        let flaky = try S3RedirectTests.server(asked) {
            // The head is noted before the answer is made: the first POST gets the 500.
            asked.all.filter { $0.hasPrefix("POST ") }.count == 1
                ? "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops"
                : "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
        }
        defer { flaky.stop() }
        let retried = try await CLIRun.run(["send", photo, "--to", "http://127.0.0.1:\(flaky.port)/photo", "--retry", "1", "--protocol", "multipart"])
        #expect(retried.status == 0, "\(retried.stdout) \(retried.stderr)")
        #expect(asked.all.filter { $0.hasPrefix("POST ") }.count == 2)
        // Without a retry the 500 is the answer.
        let once = try await CLIRun.run(["send", photo, "--to", "http://127.0.0.1:\(flaky.port)/photo", "--protocol", "multipart"])
        #expect(once.status == 0 && asked.all.filter { $0.hasPrefix("POST ") }.count == 3, "the server now answers 201: \(once.stdout)")
    }

    @Test func sendsFilesAndExitsZero() async throws {
        let receiver = try await ReceiverHarness.start()
        let a = try TestFiles.writeImage(at: receiver.root + "/a.jpg", size: 300_000)
        let b = try TestFiles.writeImage(at: receiver.root + "/b.jpg", size: 10)
        let run = try await CLIRun.run(["send", a, b, "--to", receiver.url])
        #expect(run.status == 0)
        // The receiver's digest of what it got matched what was sent (RFC 9530).
        #expect(run.stdout.contains("#1 a.jpg OK 200 verified (sha-256) {\"filename\":\"a.jpg\"}"), "\(run.stdout)")
        #expect(run.stdout.contains("#2 b.jpg OK 200"))
        #expect(run.stdout.contains("all 2 uploads finished: 2 ok, 0 failed"))
        #expect(TestFiles.sameContents(a, receiver.directory + "/a.jpg"))
        // Without digests: nothing claimed.
        let plain = try await CLIRun.run(["send", a, "--to", receiver.url, "--no-digest", "--json"])
        #expect(plain.status == 0)
        #expect(!plain.stdout.contains("verified"), "\(plain.stdout)")
        let proved = try await CLIRun.run(["send", a, "--to", receiver.url, "--json"])
        #expect(proved.stdout.contains(#""event":"finished","id":1,"ok":true"#) && proved.stdout.contains(#""verified":"sha-256""#), "\(proved.stdout)")
        await receiver.cleanUp()
    }

    /// Hundreds of files named as arguments (a shell glob), options among them: each file goes
    /// once, in order, with the options as given; a mistake in the options is said as always.
    @Test func hundredsOfFilesAsArgumentsWithOptionsAmongThem() async throws {
        let receiver = try await ReceiverHarness.start()
        let paths = try (0..<300).map { try TestFiles.writeImage(at: receiver.root + String(format: "/p%03d.jpg", $0), size: 100) }
        let arguments = ["send"] + paths[..<100] + ["--to", receiver.url] + paths[100..<200] + ["-F", "album=trip", "--concurrency", "4"] + paths[200...]
        let run = try await CLIRun.run(Array(arguments))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("all 300 uploads finished: 300 ok, 0 failed"), "\(run.stdout.suffix(300))")
        #expect(run.stdout.contains("#1 p000.jpg") && run.stdout.contains("#300 p299.jpg"))
        #expect(Set(receiver.storedNames()) == Set(paths.map { ($0 as NSString).lastPathComponent }))
        // Neither "album=trip" nor "4" was taken for a file: there would be 302 uploads.

        let wrong = try await CLIRun.run(["send"] + paths + ["--to", "ftp://h/", "--concurrency", "4"])
        #expect(wrong.status == 64)
        #expect(wrong.stderr.contains("'ftp://h/' is not an http, https or s3 URL"), "\(wrong.stderr)")
        await receiver.cleanUp()
    }

    @Test func filesFromAListAfterTheArguments() async throws {
        let receiver = try await ReceiverHarness.start()
        let names = ["a.jpg", "b c.jpg", "c.jpg"]
        let paths = try names.map { try TestFiles.writeImage(at: receiver.root + "/" + $0, size: 100) }
        try (paths[1] + "\r\n\n" + paths[2] + "\n").write(toFile: receiver.root + "/list", atomically: true, encoding: .utf8)
        let run = try await CLIRun.run(["send", paths[0], "--files-from", receiver.root + "/list", "--to", receiver.url])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("#1 a.jpg OK 200") && run.stdout.contains("#2 b c.jpg OK 200") && run.stdout.contains("#3 c.jpg OK 200"))

        let null = try await CLIRun.run(["send", "--files-from", "-", "--null", "--to", receiver.url], stdin: Data((paths[0] + "\0" + paths[2] + "\0").utf8))
        #expect(null.status == 0, "\(null.stderr)")
        #expect(null.stdout.contains("all 2 uploads finished: 2 ok, 0 failed"))

        let empty = try await CLIRun.run(["send", "--files-from", "-", "--to", receiver.url], stdin: Data())
        #expect(empty.status == 64)
        #expect(empty.stderr.contains("the --files-from list - names no file"))
        let missing = try await CLIRun.run(["send", "--files-from", receiver.root + "/nope", "--to", receiver.url])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("cannot read the --files-from list \(receiver.root)/nope: No such file or directory"))
        await receiver.cleanUp()
    }

    @Test func jsonEventsAndHiddenHeaderValues() async throws {
        let receiver = try await ReceiverHarness.start()
        let a = try TestFiles.writeImage(at: receiver.root + "/a.jpg", size: 1000)
        let run = try await CLIRun.run([
            "send", a, "--to", receiver.url, "--json", "--name", "renamed", "-H", "Authorization: Bearer s3cret-token", "-F", "k=v",
        ])
        #expect(run.status == 0)
        let events = run.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let kinds = events.compactMap { $0["event"] as? String }
        #expect(kinds.count == events.count && kinds.count >= 6)
        #expect(Array(kinds.prefix(2)) == ["queued", "started"])
        #expect(Array(kinds.suffix(3)) == ["response", "finished", "allFinished"])
        #expect(kinds.dropFirst(2).dropLast(3).allSatisfy { $0 == "progress" })
        #expect(events.contains { $0["event"] as? String == "finished" && $0["status"] as? Int == 200 })
        #expect(events.first?["name"] as? String == "renamed.jpg")
        #expect(!run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"))
        #expect(receiver.storedNames() == ["renamed.jpg"])
        await receiver.cleanUp()
    }

    @Test func standardInputIsSentChunked() async throws {
        let receiver = try await ReceiverHarness.start()
        let a = try TestFiles.writeImage(at: receiver.root + "/a.jpg", size: 700_000)
        let data = try Data(contentsOf: URL(fileURLWithPath: a))
        let run = try await CLIRun.run(["send", "-", "--name", "piped.jpg", "--to", receiver.url], stdin: data)
        #expect(run.status == 0)
        #expect(TestFiles.sameContents(a, receiver.directory + "/piped.jpg"))
        await receiver.cleanUp()
    }

    @Test func exitCodesTellHTTPAndTransportErrorsApart() async throws {
        let receiver = try await ReceiverHarness.start()
        let a = try TestFiles.writeImage(at: receiver.root + "/a.jpg", size: 1000)
        let notFound = try await CLIRun.run(["send", a, "--to", "http://127.0.0.1:\(receiver.port)/nope"])
        #expect(notFound.status == 1)
        #expect(notFound.stdout.contains("FAILED 404 Not Found"))
        await receiver.stop()
        let refused = try await CLIRun.run(["send", a, "--to", receiver.url])
        #expect(refused.status == 2)
        #expect(refused.stdout.contains("cannot connect"))
        await receiver.cleanUp()
    }

    /// A 200 whose answer trickles past --answer-timeout: the file arrived, the answer did not
    /// all arrive. The line says so and the exit status is 3, not 0.
    @Test func aCutOffAnswerIsSaidAndExitsThree() async throws {
        let server = try RawServer { connection in
            _ = connection.read(until: "--\r\n", timeout: 10)
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{\"fi")
            Thread.sleep(forTimeInterval: 4)
            connection.close()
        }
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("cut-answer")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let a = try TestFiles.writeImage(at: root + "/a.jpg", size: 1000)
        let plain = try await CLIRun.run(["send", a, "--to", server.url, "--answer-timeout", "1s"])
        #expect(plain.status == 3, "\(plain.stdout) \(plain.stderr)")
        #expect(plain.stdout.contains("OK 200 (answer cut off: 4 B of 100 kB arrived within the 1s answer timeout)"), "\(plain.stdout)")
        let json = try await CLIRun.run(["send", a, "--to", server.url, "--answer-timeout", "1s", "--json"])
        #expect(json.status == 3)
        #expect(json.stdout.contains(#""answerCut":"answer cut off: 4 B of 100 kB arrived within the 1s answer timeout""#), "\(json.stdout)")
    }

    /// A file whose name is not UTF-8 (Latin-1 `caf\xE9.jpg`), named in a --files-from list:
    /// found by its bytes, shown escaped, uploaded under its Latin-1 reading.
    @Test func aFileNamedInLatin1IsSent() async throws {
        let receiver = try await ReceiverHarness.start()
        let raw = Array(receiver.root.utf8) + Array("/caf".utf8) + [0xE9] + Array(".jpg".utf8)
        let fd = (raw + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o600) } }
        #expect(fd >= 0)
        _ = write(fd, [0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3], 7)
        close(fd)
        let list = receiver.root + "/list"
        try Data(raw + [0x0A]).write(to: URL(fileURLWithPath: list))
        let run = try await CLIRun.run(["send", "--files-from", list, "--to", receiver.url])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("#1 caf"), "\(run.stdout)")
        #expect(receiver.storedNames() == ["café.jpg"])
        await receiver.cleanUp()
    }

    /// Secrets off the command line: `-H @FILE` and `--netrc-file` give the headers, the
    /// process's arguments hold neither, and nothing of them reaches the output.
    @Test func headersFromAFileAndLoginsFromNetrc() async throws {
        let captured = NSLockedHeads()
        let server = try RawServer { connection in
            let head = connection.read(until: "\r\n\r\n", timeout: 10)
            captured.add(head)
            _ = connection.read(until: "--\r\n", timeout: 10)
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            connection.close()
        }
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("secrets")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let a = try TestFiles.writeImage(at: root + "/a.jpg", size: 1000)
        try Data("X-Api-Key: from-the-file-123\nX-Trace: 7\n".utf8).write(to: URL(fileURLWithPath: root + "/headers"))
        try Data("machine 127.0.0.1 login ann password netrc-pw-456\n".utf8).write(to: URL(fileURLWithPath: root + "/netrc"))
        let run = try await CLIRun.run(["send", a, "--to", server.url, "-H", "@" + root + "/headers", "--netrc-file", root + "/netrc"])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        let head = captured.all.first ?? ""
        #expect(head.contains("X-Api-Key: from-the-file-123") && head.contains("X-Trace: 7"), "\(head)")
        #expect(head.contains("Authorization: Basic " + Data("ann:netrc-pw-456".utf8).base64EncodedString()), "\(head)")
        #expect(!(run.stdout + run.stderr).contains("from-the-file-123") && !(run.stdout + run.stderr).contains("netrc-pw-456"))

        // A netrc entry replaces a password in the URL, which is then not sent.
        let withPassword = server.url.replacingOccurrences(of: "http://", with: "http://ann:url-pw@")
        let replaced = try await CLIRun.run(["send", a, "--to", withPassword, "--netrc-file", root + "/netrc"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        let second = captured.all.last ?? ""
        #expect(second.contains("Authorization: Basic " + Data("ann:netrc-pw-456".utf8).base64EncodedString()), "\(second)")
        #expect(!second.contains(Data("ann:url-pw".utf8).base64EncodedString()))

        // A missing or broken file is a clear error that quotes no secret.
        let missing = try await CLIRun.run(["send", a, "--to", server.url, "--netrc-file", root + "/nope"])
        #expect(missing.status == 64 && missing.stderr.contains("cannot use the netrc file \(root)/nope"), "\(missing.stderr)")
        try Data("X-Ok: 1\nbroken from-the-file-123\n".utf8).write(to: URL(fileURLWithPath: root + "/bad"))
        let broken = try await CLIRun.run(["send", a, "--to", server.url, "-H", "@" + root + "/bad"])
        #expect(broken.status == 64 && broken.stderr.contains("line 2 of the header file") && !broken.stderr.contains("from-the-file-123"), "\(broken.stderr)")
    }

    /// `--strip-location` end to end, checked by independent readers: exiftool (every group,
    /// embedded pictures too) finds no GPS or location tag in what the receiver stored, djpeg
    /// gives the same pixels, orientation and camera stay; a format it cannot rewrite is
    /// refused, not sent.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/exiftool") && FileManager.default.isExecutableFile(atPath: "/usr/bin/djpeg"),
            "needs exiftool (libimage-exiftool-perl) and djpeg (libjpeg-turbo-progs)"))
    func stripLocationSendsThePhotoWithoutWhereItWasTaken() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        func run(_ tool: String, _ arguments: [String]) throws -> String { try ToolRun.output(tool, arguments) }
        let photo = receiver.root + "/eiffel.jpg"
        // A photo's worth of pixels (grain, as a sensor gives), so its metadata is a photo's
        // share of the file.
        var rgb = [UInt8](repeating: 0, count: 1200 * 900 * 3)
        var seed: UInt32 = 7
        for i in 0..<(1200 * 900) {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            let grain = UInt8(truncatingIfNeeded: seed >> 26)
            rgb[3 * i] = UInt8(i % 1200 * 255 / 1200) &+ grain
            rgb[3 * i + 1] = UInt8(i / 1200 * 255 / 900) &+ grain
            rgb[3 * i + 2] = 90 &+ grain
        }
        let image = RGBImage(width: 1200, height: 900, rgb: rgb)
        try PictureWriter.jpeg(image, to: photo, exif: PictureWriter.exif(orientation: 6, bigEndian: false, make: "Canon", model: "Canon EOS R5"))
        // Location added by exiftool itself: GPS in EXIF and XMP, a city in XMP.
        _ = try run(
            "/usr/bin/exiftool",
            [
                "-q", "-overwrite_original", "-GPSLatitude=48.8582", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945",
                "-GPSLongitudeRef=E", "-XMP:GPSLatitude=48.8582 N", "-XMP:GPSLongitude=2.2945 E", "-XMP:City=Paris", photo,
            ])
        #expect(try run("/usr/bin/exiftool", ["-G", "-a", photo]).contains("GPS Latitude"))

        let sent = try await CLIRun.run(["send", photo, "--to", receiver.url, "--strip-location"])
        #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
        let stored = receiver.directory + "/eiffel.jpg"
        let tags = try run("/usr/bin/exiftool", ["-G1", "-a", "-s", "-ee", stored])
        #expect(!tags.contains("GPS") && !tags.contains("City") && !tags.contains("48.8582"), "\(tags)")
        #expect(try run("/usr/bin/exiftool", ["-a", "-G1", "-ee", "-location:all", stored]).isEmpty)
        #expect(tags.contains("Orientation") && tags.contains("Canon EOS R5"), "\(tags)")
        #expect(try run("/usr/bin/djpeg", ["-ppm", stored]) == (try run("/usr/bin/djpeg", ["-ppm", photo])), "the same pixels")
        // mat2 (its lossless mode, which keeps the pixels too, and removes all metadata, camera
        // and orientation included) is the size bound: what we send is within 1 % of it.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/mat2") {
            let copy = receiver.root + "/mat2-copy.jpg"
            try FileManager.default.copyItem(atPath: photo, toPath: copy)
            _ = try run("/usr/bin/mat2", ["--lightweight", copy])
            let cleaned = Double(TestFiles.size(of: receiver.root + "/mat2-copy.cleaned.jpg") ?? 0)
            let ours = Double(TestFiles.size(of: stored) ?? 0)
            #expect(cleaned > 0 && Swift.abs(ours - cleaned) / cleaned <= 0.01, "ours \(ours) B, mat2 \(cleaned) B")
            #expect(try run("/usr/bin/djpeg", ["-ppm", receiver.root + "/mat2-copy.cleaned.jpg"]) == (try run("/usr/bin/djpeg", ["-ppm", photo])))
        }

        let gif = receiver.root + "/anim.gif"
        try Data("GIF89a".utf8 + [UInt8](repeating: 0, count: 30)).write(to: URL(fileURLWithPath: gif))
        let refused = try await CLIRun.run(["send", gif, "--to", receiver.url, "--strip-location"])
        #expect(
            refused.status == 64 && refused.stderr.contains("only the location of JPEG, PNG, WebP, HEIC and AVIF files can be removed")
                && refused.stderr.contains("nothing was sent"),
            "\(refused.stdout) \(refused.stderr)")
        #expect(!receiver.storedNames().contains("anim.gif"))
    }

    /// Photos whose place exiftool itself hid where it can (EXIF GPS, XMP, IPTC, a PNG's eXIf
    /// and iTXt, a second photo after the end marker) arrive with no location exiftool can find,
    /// embedded pictures included, and with none of the planted bytes; the pixels stay.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/exiftool") && FileManager.default.isExecutableFile(atPath: "/usr/bin/djpeg"),
            "needs exiftool (libimage-exiftool-perl) and djpeg (libjpeg-turbo-progs)"))
    func stripLocationLeavesNothingExiftoolCanFind() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        func run(_ tool: String, _ arguments: [String]) throws -> String { try ToolRun.output(tool, arguments) }
        let located = [
            "-GPSLatitude=48.8582", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945", "-GPSLongitudeRef=E",
            "-XMP:GPSLatitude=48.8582 N", "-XMP:GPSLongitude=2.2945 E", "-XMP:City=Plantedville", "-IPTC:City=Plantedville",
            "-IPTC:Sub-location=Planted Tower", "-XMP:Location=Planted Tower",
        ]
        var files: [String] = []
        let jpeg = receiver.root + "/hidden.jpg"
        try PictureWriter.jpeg(
            RGBImage(width: 64, height: 48, rgb: (0..<(64 * 48 * 3)).map { UInt8($0 % 251) }), to: jpeg,
            exif: PictureWriter.exif(orientation: 3, bigEndian: true, make: "DJI", model: "FC3411"))
        _ = try run("/usr/bin/exiftool", ["-q", "-overwrite_original"] + located + [jpeg])
        files.append(jpeg)
        // The same photo with a second located photo after its end marker (as MPF pictures and trailers sit).
        let trailer = receiver.root + "/trailer.jpg"
        let once = Array(try Data(contentsOf: URL(fileURLWithPath: jpeg)))
        try Data(once + once).write(to: URL(fileURLWithPath: trailer))
        files.append(trailer)
        let png = receiver.root + "/hidden.png"
        try PictureWriter.png(
            RGBImage(width: 16, height: 16, rgb: [UInt8](repeating: 90, count: 16 * 16 * 3)), to: png,
            exif: PictureWriter.exif(orientation: 6, bigEndian: false))
        _ = try run(
            "/usr/bin/exiftool",
            [
                "-q", "-overwrite_original", "-EXIF:GPSLatitude=48.8582", "-EXIF:GPSLatitudeRef=N",
                "-XMP:City=Plantedville", "-PNG:Comment=Planted Tower", png,
            ])
        files.append(png)
        for file in files {
            #expect(!(try run("/usr/bin/exiftool", ["-a", "-G1", "-ee", "-location:all", file])).isEmpty, "\(file) is located to begin with")
            let sent = try await CLIRun.run(["send", file, "--to", receiver.url, "--strip-location"])
            #expect(sent.status == 0, "\(sent.stdout) \(sent.stderr)")
            let stored = receiver.directory + "/" + (file as NSString).lastPathComponent
            let found = try run("/usr/bin/exiftool", ["-a", "-G1", "-ee", "-location:all", stored])
            #expect(found.isEmpty, "\(file): \(found)")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: stored))
            for planted in ["48.8582", "Plantedville", "Planted Tower", "GPS"] {
                #expect(bytes.range(of: Data(planted.utf8)) == nil, "\(file): \(planted) arrived")
            }
            if file.hasSuffix(".jpg") {
                #expect(try run("/usr/bin/djpeg", ["-ppm", stored]) == (try run("/usr/bin/djpeg", ["-ppm", jpeg])), "\(file): the same pixels")
                #expect(try run("/usr/bin/exiftool", ["-s3", "-Orientation#", "-Model", stored]) == "3\nFC3411\n")
            }
        }
    }

    @Test func badInputIsRefusedBeforeSending() async throws {
        let folder = TestFiles.makeTemporaryDirectory("cli")
        let text = folder + "/notes.jpg"
        try Data("plain notes".utf8).write(to: URL(fileURLWithPath: text))
        let notImage = try await CLIRun.run(["send", text, "--to", "http://127.0.0.1:9/photo"])
        #expect(notImage.status == 64)
        #expect(notImage.stderr.contains("notes.jpg is not an image (it looks like text)"))
        #expect(notImage.stderr.contains("nothing was sent"))

        let missing = try await CLIRun.run(["send", folder + "/missing.png", "--to", "http://127.0.0.1:9/photo"])
        #expect(missing.status == 64 && missing.stderr.contains("missing.png") && missing.stderr.contains("No such file"))

        let scheme = try await CLIRun.run(["send", text, "--to", "ftp://example.com/x"])
        #expect(scheme.status == 64 && scheme.stderr.contains("is not an http, https or s3 URL"))

        let header = try await CLIRun.run(["send", text, "--to", "http://h/p", "-H", "Bad Header: s3cret"])
        #expect(header.status == 64 && header.stderr.contains("Bad Header") && !header.stderr.contains("s3cret"))

        let twoNames = try await CLIRun.run(["send", text, text, "--name", "x", "--to", "http://h/p"])
        #expect(twoNames.status == 64 && twoNames.stderr.contains("--name applies to a single file"))
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Names with invisible format characters are shown escaped in send's lines and sent as they are.
    @Test func namesWithBidiControlsAreShownEscaped() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/\u{202E}gpj.png", size: 2000)
        let run = try await CLIRun.run(["send", path, "--to", receiver.url])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("#1 <U+202E>gpj.png queued"), "\(run.stdout)")
        #expect(!run.stdout.contains("\u{202E}"))
        #expect(receiver.storedNames() == ["gpj.png"])
        let json = try await CLIRun.run(["send", path, "--to", receiver.url, "--json"])
        #expect(json.stdout.contains(#""name":"\u202egpj.png""#), "\(json.stdout)")
        await receiver.cleanUp()
    }

    /// A password in the URL or a token in its query is sent, never shown.
    @Test func secretsInTheURLAreNeverPrinted() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/s.png", size: 2000)
        let url = "http://user:Pa55word@127.0.0.1:\(receiver.port)/photo?token=t0ken-value&album=cats"
        for extra in [[], ["--json"]] {
            let run = try await CLIRun.run(["send", path, "--to", url] + extra)
            #expect(run.status == 0, "\(run.stderr)")
            let output = run.stdout + run.stderr
            #expect(!output.contains("Pa55word") && !output.contains("t0ken-value"), "\(output)")
            #expect(output.contains("***@127.0.0.1:\(receiver.port)/photo?token=***&album=cats"), "\(output)")
        }
        #expect(receiver.storedNames() == ["s-1.png", "s.png"])
        await receiver.cleanUp()
    }

    @Test func helpShowsExamples() async throws {
        let help = try await CLIRun.run(["send", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Examples:"))
        #expect(help.stdout.contains("uploadmon send cat.jpg --to http://127.0.0.1:3000/photo"))
        #expect(help.stdout.contains("Exit status"))
    }

    /// Each help screen reads as paragraphs at 80 and at 120 columns: a line of prose ends early only
    /// where its paragraph ends (hard breaks in the text would be wrapped again, mid-sentence),
    /// and no example runs past the edge.
    @Test(arguments: [[], ["serve"], ["send"], ["demo"], ["status"], ["agent"], ["agent", "run"], ["watch"], ["jobs"], ["completions", "install"]])
    func helpReadsWellAtEightyAndOneHundredTwentyColumns(command: [String]) async throws {
        for width in [80, 120] {
            let help = try await CLIRun.run(command + ["--help"], environment: ["COLUMNS": String(width)])
            #expect(help.status == 0)
            let text = help.stdout.components(separatedBy: "USAGE:").first ?? ""
            let lines = text.components(separatedBy: "\n")
            for (line, next) in zip(lines, lines.dropFirst()) {
                #expect(line.count <= width, "\(command) at \(width): \(line)")
                let prose = !line.isEmpty && !line.hasPrefix(" ") && !next.isEmpty && !next.hasPrefix(" ")
                if prose && !line.hasPrefix("OVERVIEW:") {
                    #expect(line.count > width - 30, "\(command) at \(width) breaks early: '\(line)' / '\(next)'")
                }
            }
        }
    }
}

/// HTTPS: `serve --tls-cert/--tls-key`, and `send` with the system store, `--cacert` and `--insecure`.
@Suite(.serialized, .timeLimit(.minutes(5))) struct TLSTests {
    @Test func anUnknownAuthorityIsRefusedUnlessTrustedOrTheCheckIsSkipped() async throws {
        let certificates = try TestCertificates.make(in: TestFiles.makeTemporaryDirectory("tls"))
        let receiver = try await ReceiverHarness.start(tls: .init(certificateChain: certificates.serverCertificate, privateKey: certificates.serverKey))
        #expect(receiver.url.hasPrefix("https://127.0.0.1:"))
        let file = try TestFiles.writeImage(at: receiver.root + "/a.jpg", size: 200_000)

        // The system store does not know this authority: said so by name, final (no retry), exit 2.
        let refused = try await CLIRun.run(["send", file, "--to", receiver.url, "--retries", "3", "--json"])
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(
            refused.stdout.contains(#"certificate not trusted: issued by \"uploadmon test CA\", which is not an authority in the system's trust store"#),
            "\(refused.stdout)")
        #expect(refused.stdout.components(separatedBy: #""event":"started""#).count == 2, "\(refused.stdout)")
        #expect(!refused.stdout.contains(#""event":"retry""#), "\(refused.stdout)")
        #expect(receiver.storedNames().isEmpty)

        let trusted = try await CLIRun.run(["send", file, "--to", receiver.url, "--cacert", certificates.caCertificate])
        #expect(trusted.status == 0, "\(trusted.stdout)\(trusted.stderr)")
        #expect(TestFiles.sameContents(file, receiver.directory + "/a.jpg"))

        let insecure = try await CLIRun.run(["send", file, "--to", receiver.url, "--insecure"])
        #expect(insecure.status == 0, "\(insecure.stdout)\(insecure.stderr)")
        #expect(receiver.storedNames() == ["a-1.jpg", "a.jpg"])

        // A CA file that is not one is a usage error before anything is sent.
        let bogus = try await CLIRun.run(["send", file, "--to", receiver.url, "--cacert", file])
        #expect(bogus.status == 64, "\(bogus.stdout)\(bogus.stderr)")
        #expect(bogus.stderr.contains("cannot read \(file): it holds no PEM certificate"), "\(bogus.stderr)")
        #expect(receiver.storedNames() == ["a-1.jpg", "a.jpg"])
        await receiver.cleanUp()
    }

    @Test func serveRefusesTLSFilesThatAreNotPEMNamingTheFile() async throws {
        let root = TestFiles.makeTemporaryDirectory("tlsbad")
        let junk = root + "/junk.pem"
        try "not a certificate".write(toFile: junk, atomically: true, encoding: .utf8)
        let run = try await CLIRun.run(["serve", "--port", "0", "--dir", root + "/up", "--tls-cert", junk, "--tls-key", junk])
        #expect(run.status != 0)
        #expect(run.stderr.contains("\(junk): not a readable PEM certificate"), "\(run.stderr)")
        let half = try await CLIRun.run(["serve", "--port", "0", "--tls-cert", junk])
        #expect(half.status == 64)
        #expect(half.stderr.contains("HTTPS needs both --tls-cert and --tls-key"))
        try? FileManager.default.removeItem(atPath: root)
    }
}

/// Request heads a raw server saw, in order.
final class NSLockedHeads: @unchecked Sendable {
    private let lock = NSLock()
    private var heads: [String] = []
    func add(_ head: String) { lock.withLock { heads.append(head) } }
    var all: [String] { lock.withLock { heads } }
}
