import Foundation
import Testing
import UploadClient
import UploadCommands
import UploadCore
import UploadTesting

/// Saved destinations: the file as a user writes it, what may not be kept in it, the command
/// line they stand for, and the first run that makes one.
@Suite struct DestinationFileTests {
    let path = "/home/ann/.config/uploadmon/destinations.toml"

    func parse(_ text: String) throws(CommandFailure) -> DestinationFile {
        try DestinationFile.parse(text, path: path, home: "/home/ann")
    }

    func refusal(_ text: String) -> String {
        do throws(CommandFailure) {
            _ = try parse(text)
            return ""
        } catch { return error.message }
    }

    @Test func aFileWrittenByHandIsRead() throws {
        let file = try parse(
            """
            # mine
            default = "blog"

            [destinations.blog]
            url = "https://blog.example.com/photo"
            field = "file"
            form = ["album=holiday", "visibility=private"]
            headers = ["@~/.config/uploadmon/blog.headers", "Accept: application/json", "@relative.headers"]
            netrc = true
            concurrency = 4
            strip-location = true
            limit-rate = "2MB"

            [destinations.bucket]
            url = "s3://photos/2026/"
            """)
        #expect(file.defaultName == "blog")
        #expect(file.names == ["blog", "bucket"])
        let blog = try #require(file.destination(named: nil))
        #expect(blog.url == "https://blog.example.com/photo")
        #expect(
            blog.settings["headers"]
                == .list(["@/home/ann/.config/uploadmon/blog.headers", "Accept: application/json", "@/home/ann/.config/uploadmon/relative.headers"]))
        #expect(
            blog.arguments() == [
                "--to", "https://blog.example.com/photo", "--field", "file", "--form", "album=holiday", "--form", "visibility=private",
                "--header", "@/home/ann/.config/uploadmon/blog.headers", "--header", "Accept: application/json",
                "--header", "@/home/ann/.config/uploadmon/relative.headers", "--netrc", "--concurrency", "4", "--limit-rate", "2MB", "--strip-location",
            ])
        #expect(file.destinations["bucket"]?.protocolName == "s3")
    }

    @Test func mistakesAreSaidWithTheFileTheTableAndTheKey() {
        #expect(
            refusal("[destinations.blog]\nurl = \"https://x.example/\"\nfeild = \"file\"\n")
                .hasPrefix("\(path), [destinations.blog]: unknown key feild; a destination has url and protocol, field,"))
        #expect(
            refusal("[destinations.blog]\nurl = \"https://x.example/\"\nconcurrency = \"4\"\n")
                == "\(path), [destinations.blog]: concurrency must be a whole number (uploads at once (send and the monitor without the agent))")
        #expect(refusal("[destinations.blog]\nfield = \"file\"\n") == "\(path), [destinations.blog]: url = \"…\" is missing")
        #expect(
            refusal("default = \"gone\"\n[destinations.blog]\nurl = \"https://x.example/\"\n")
                == "\(path): default = \"gone\", but there is no [destinations.gone]")
        // TOML's own errors keep their place.
        #expect(
            refusal("[destinations.blog]\nurl = https://x\n").hasPrefix("\(path), line 2, column 7:"), "\(refusal("[destinations.blog]\nurl = https://x\n"))")
        #expect(refusal("[destinations.\"with.dot\"]\nurl = \"https://x.example/\"\n").contains("a destination's name is a letter"))
    }

    @Test func secretsAreNotKeptInTheFile() {
        let header = refusal("[destinations.blog]\nurl = \"https://x.example/\"\nheaders = [\"Authorization: Bearer abc\"]\n")
        #expect(header.contains("the header Authorization is written in the file itself") && header.contains("\"@/path/to/that/file\""), "\(header)")
        #expect(refusal("[destinations.blog]\nurl = \"https://x.example/\"\nheaders = [\"X-Api-Key: abc\"]\n").contains("the header X-Api-Key"))
        #expect(refusal("[destinations.blog]\nurl = \"https://ann:pw@x.example/\"\n").contains("the URL holds a password"))
        #expect(refusal("[destinations.blog]\nurl = \"https://x.example/o?X-Amz-Signature=abc\"\n").contains("the URL's query has X-Amz-Signature"))
        #expect(refusal("[destinations.blog]\nurl = \"https://x.example/up?access_token=abc\"\n").contains("access_token"))
        #expect(
            refusal("[destinations.blog]\nurl = \"https://x.example/\"\nproxy = \"http://u:secret@proxy:3128\"\n").contains("the proxy URL holds a password"))
        #expect(
            refusal("[destinations.blog]\nurl = \"https://x.example/\"\nform = [\"api_key=abc\"]\n").contains("the form field api_key sounds like a secret"))
        // A user name alone, an album field, a header named as safe: kept.
        #expect(refusal("[destinations.blog]\nurl = \"https://ann@x.example/?album=3\"\nform = [\"author=ann\"]\nheaders = [\"User-Agent: me\"]\n") == "")
    }

    @Test func editsKeepTheUsersCommentsAndReadBack() throws {
        let text = """
            # my uploads
            default = "blog" # the usual one

            # the blog
            [destinations.blog]
            url = "https://blog.example.com/photo"

            # the bucket
            [destinations.bucket]
            url = "s3://photos/"
            """
        let file = try parse(text)
        let added = try file.adding(
            SavedDestination(
                name: "wiki", url: "https://wiki.example.com/upload",
                settings: [
                    "field": .text("fi\"le"), "form": .list(["a=b\\c"]), "concurrency": .number(3), "strip-location": .flag(true),
                ]), makeDefault: true)
        let again = try parse(added)
        #expect(again.defaultName == "wiki")
        #expect(again.destinations["wiki"]?.settings["field"] == .text("fi\"le"))
        #expect(again.destinations["wiki"]?.settings["form"] == .list(["a=b\\c"]))
        #expect(added.hasPrefix("# my uploads\ndefault = \"wiki\"\n"), "\(added)")
        #expect(added.contains("# the blog\n[destinations.blog]") && added.contains("# the bucket\n[destinations.bucket]"))

        let removed = try again.removing("blog")
        let afterRemoval = try parse(removed)
        #expect(afterRemoval.names == ["bucket", "wiki"])
        #expect(removed.contains("# the bucket\n[destinations.bucket]"), "the next table's comment stays with it: \(removed)")
        #expect(!removed.contains("blog.example.com"))
        let withoutDefault = try parse(try afterRemoval.removing("wiki"))
        #expect(withoutDefault.defaultName == nil && withoutDefault.names == ["bucket"])

        #expect(throws: CommandFailure.self) { try file.adding(SavedDestination(name: "blog", url: "https://x.example/"), makeDefault: false) }
        #expect(throws: CommandFailure.self) { try file.adding(SavedDestination(name: "a.b", url: "https://x.example/"), makeDefault: false) }
        #expect(throws: CommandFailure.self) {
            try file.adding(SavedDestination(name: "x", url: "https://x.example/", settings: ["headers": .list(["Cookie: s=1"])]), makeDefault: false)
        }
    }

    @Test func theFileIsWrittenPrivateAndAFirstOneBecomesTheDefault() throws {
        let home = TestFiles.makeTemporaryDirectory("destinations")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = ["HOME": home]
        let commands = DestinationCommands(environment: environment)
        var choices = UploadChoices(to: "127.0.0.1:3000/photo")
        choices.field = "file"
        choices.headers = ["@secret.headers"]
        choices.concurrency = 5
        try Data("X-Api-Key: k\n".utf8).write(to: URL(fileURLWithPath: home + "/secret.headers"))
        let said = try commands.add(name: "local", choices: choices, makeDefault: false, directory: home)
        #expect(said.contains("Added local (http://127.0.0.1:3000/photo) as the default"), "\(said)")
        let path = DestinationFile.path(environment: environment)
        #expect(path == home + "/.config/uploadmon/destinations.toml")
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(stat(home + "/.config/uploadmon", &st) == 0 && st.st_mode & 0o777 == 0o700)
        let file = try commands.load()
        #expect(
            file.destinations["local"]?.settings == ["field": .text("file"), "headers": .list(["@" + home + "/secret.headers"]), "concurrency": .number(5)])
        let list = try commands.list()
        #expect(list.contains("* local  auto      http://127.0.0.1:3000/photo  (field file, headers: 1, concurrency 5)"), "\(list)")
        // An --insecure destination would verify nothing ever after.
        var insecure = UploadChoices(to: "https://x.example/")
        insecure.insecure = true
        #expect(throws: CommandFailure.self) { try commands.add(name: "lax", choices: insecure, makeDefault: false, directory: home) }
        // XDG_CONFIG_HOME, when absolute, is where the file goes.
        #expect(DestinationFile.path(environment: ["HOME": home, "XDG_CONFIG_HOME": "/cfg"]) == "/cfg/uploadmon/destinations.toml")
        #expect(DestinationFile.path(environment: ["HOME": home, "XDG_CONFIG_HOME": "relative"]) == home + "/.config/uploadmon/destinations.toml")
    }
}

@Suite struct DestinationArgumentsTests {
    let file = try! DestinationFile.parse(
        """
        default = "blog"
        [destinations.blog]
        url = "https://blog.example.com/photo"
        field = "file"
        headers = ["@/keys/blog.headers"]
        concurrency = 4
        retries = 2
        strip-location = true
        [destinations.wiki]
        url = "https://wiki.example.com/upload"
        """, path: "/c/destinations.toml", home: "/h")

    func expand(_ arguments: [String], _ file: DestinationFile? = nil) throws(CommandFailure) -> DestinationArguments.Outcome {
        let chosen = file ?? self.file
        return try DestinationArguments.expand(arguments, loading: { chosen })
    }

    @Test func aNameStandsForItsURLAndOptionsAndTheCommandLineWins() throws {
        #expect(
            try expand(["send", "a.jpg", "--to", "blog"])
                == .expanded([
                    "send", "--to", "https://blog.example.com/photo", "--field", "file", "--header", "@/keys/blog.headers",
                    "--concurrency", "4", "--retries", "2", "--strip-location", "a.jpg",
                ]))
        // Given on the command line (under any spelling): the command line's; -H adds to the destination's.
        #expect(
            try expand(["send", "a.jpg", "--to=blog", "--field", "photo", "--retry", "0", "-H", "X-A: 1"])
                == .expanded([
                    "send", "--to", "https://blog.example.com/photo", "--header", "@/keys/blog.headers", "--concurrency", "4", "--strip-location",
                    "a.jpg", "--field", "photo", "--retry", "0", "-H", "X-A: 1",
                ]))
        // The monitor is the default command; its folder stays where it was.
        #expect(
            try expand(["~/Pictures", "--to", "wiki"]) == .expanded(["--to", "https://wiki.example.com/upload", "--destination-name", "wiki", "~/Pictures"]))
        // The agent runs watch's and --background's uploads: the destination's concurrency is not for it.
        #expect(
            try expand(["watch", "/in", "--to", "blog"])
                == .expanded([
                    "watch", "--to", "https://blog.example.com/photo", "--field", "file", "--header", "@/keys/blog.headers", "--retries", "2",
                    "--strip-location", "/in",
                ]))
        guard case .expanded(let background) = try expand(["send", "a.jpg", "--background"]) else {
            Issue.record("not expanded")
            return
        }
        #expect(!background.contains("--concurrency"))
        // Operands after `--` are files, never options.
        #expect(try expand(["send", "--to", "wiki", "--", "--field"]) == .expanded(["send", "--to", "https://wiki.example.com/upload", "--", "--field"]))
    }

    @Test func withoutToTheDefaultIsUsed() throws {
        #expect(
            try expand(["send", "a.jpg"])
                == .expanded([
                    "send", "--to", "https://blog.example.com/photo", "--field", "file", "--header", "@/keys/blog.headers",
                    "--concurrency", "4", "--retries", "2", "--strip-location", "a.jpg",
                ]))
        #expect(
            try expand(["destinations", "check"])
                == .expanded([
                    "destinations", "check", "--to", "https://blog.example.com/photo", "--field", "file", "--header", "@/keys/blog.headers",
                    "--concurrency", "4", "--retries", "2", "--strip-location", "--destination-name", "blog",
                ]))
        #expect(
            try expand(["destinations", "check", "wiki"])
                == .expanded([
                    "destinations", "check", "--to", "https://wiki.example.com/upload", "--destination-name", "wiki",
                ]))
    }

    @Test func urlsListsAndOtherCommandsAreLeftAloneWithoutReadingTheFile() throws {
        let never: () throws(CommandFailure) -> DestinationFile = { () throws(CommandFailure) -> DestinationFile in
            Issue.record("the file was read")
            throw .failed("read")
        }
        for arguments in [
            ["send", "a.jpg", "--to", "https://x.example/p"], ["send", "a.jpg", "--to", "127.0.0.1:3000/p"], ["send", "--to", "@list.txt"],
            ["send", "a.jpg", "--to", "s3://bucket/"], ["serve", "--port", "3000"], ["status"], ["send", "--help"], ["--version"],
            ["demo", "--headless"], ["destinations", "add", "x", "--to", "https://x.example/"],
        ] {
            #expect(try DestinationArguments.expand(arguments, loading: never) == .unchanged, "\(arguments)")
        }
    }

    @Test func anUnknownNameIsSaidWithTheNamesThereAre() {
        do throws(CommandFailure) {
            _ = try expand(["send", "a.jpg", "--to", "blg"])
            Issue.record("taken")
        } catch {
            #expect(
                error.message
                    == "there is no destination blg in /c/destinations.toml (it has blog, wiki); for a host of that name, write its URL (http://blg/…)")
            #expect(error.kind == .refused)
        }
    }

    @Test func bareUploadmonWithNothingSavedIsAFirstRun() throws {
        let empty = try DestinationFile.parse("", path: "/c/destinations.toml", home: "/h")
        #expect(try expand([], empty) == .firstRun(passing: []))
        #expect(try expand(["~/Pictures"], empty) == .firstRun(passing: ["~/Pictures"]))
        #expect(try expand(["monitor"], empty) == .firstRun(passing: []))
        #expect(
            try expand(["--no-agent", "--notify", "none", "pics", "--graphics=cells"], empty)
                == .firstRun(passing: ["--no-agent", "--notify", "none", "pics", "--graphics=cells"]))
        #expect(try expand(["a", "b"], empty) == .unchanged)
        // With options of its own, or another command, ArgumentParser says what is missing.
        #expect(try expand(["--field", "x"], empty) == .unchanged)
        #expect(try expand(["send", "a.jpg"], empty) == .unchanged)
        // With a default, bare uploadmon opens the monitor on it.
        #expect(
            try expand([])
                == .expanded([
                    "--to", "https://blog.example.com/photo", "--field", "file", "--header", "@/keys/blog.headers",
                    "--concurrency", "4", "--retries", "2", "--strip-location", "--destination-name", "blog",
                ]))
    }
}

@Suite struct FirstRunTests {
    func run(_ answers: [String], home: String) throws -> (FirstRun.Next, String) {
        var answers = answers[...]
        var said = ""
        let file = try DestinationFile.load(environment: ["HOME": home])
        let first = FirstRun(file: file, home: home, passing: ["/pics"], readLine: { answers.popFirst() }, write: { said += $0 })
        return (try first.run(), said)
    }

    @Test func aURLTypedAtTheFirstRunIsSavedAsTheDefault() throws {
        let home = TestFiles.makeTemporaryDirectory("first-run")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let (next, said) = try run(["x", "u", "not a url", "https://ann:pw@photos.example.com/up", "photos.example.com/upload", ""], home: home)
        #expect(said.contains("Nothing to send to yet"))
        #expect(said.contains("d, u or q, please."))
        #expect(said.contains("the URL holds a password"), "a URL with a secret is asked again: \(said)")
        #expect(said.contains("A name for it [photos]: "))
        #expect(next == .run(["--to", "photos", "/pics"]))
        let file = try DestinationFile.load(environment: ["HOME": home])
        #expect(file.defaultName == "photos" && file.destinations["photos"]?.url == "http://photos.example.com/upload")
        // A second first run (another name, the same host) suggests a free name.
        #expect(try run(["u", "https://photos.example.com/other", ""], home: home).0 == .run(["--to", "photos2", "/pics"]))
    }

    @Test func theDemoOrQuit() throws {
        let home = TestFiles.makeTemporaryDirectory("first-run")
        defer { try? FileManager.default.removeItem(atPath: home) }
        #expect(try run(["d"], home: home).0 == .run(["demo"]))
        #expect(try run(["q"], home: home).0 == .quit)
        #expect(try run([], home: home).0 == .quit, "end of input quits")
        #expect(!FileManager.default.fileExists(atPath: DestinationFile.path(environment: ["HOME": home])))
    }
}

@Suite struct DestinationCheckTests {
    func answer(_ status: Int, _ headers: [(String, String)] = []) -> AttemptResult {
        AttemptResult(
            outcome: .answered(status: status), response: UploadResponse(status: status, reason: "", headers: headers, body: [], bodyBytesTotal: 0),
            bytesSent: 0)
    }

    @Test func whatAnOptionsAnswerProves() {
        let request = "OPTIONS https://x.example/up"
        #expect(
            DestinationCheck.reading(options: answer(204, [("Tus-Version", "1.0.0"), ("Tus-Extension", "creation")]), request: request).verdict
                .contains("speaks tus 1.0.0"))
        let refused = DestinationCheck.reading(options: answer(401), request: request)
        #expect(!refused.passed && refused.status == "401 Unauthorized" && refused.verdict.contains("wants credentials"))
        #expect(!DestinationCheck.reading(options: answer(404), request: request).passed)
        let noOptions = DestinationCheck.reading(options: answer(405), request: request)
        #expect(noOptions.passed && noOptions.verdict.contains("checked only by an upload"))
        let unreachable = DestinationCheck.reading(
            options: AttemptResult(outcome: .failed(UploadFailure(.cannotConnect, "Connection refused", code: 111)), response: nil, bytesSent: 0),
            request: request)
        #expect(!unreachable.passed && unreachable.status == nil && unreachable.verdict == "cannot reach it: cannot connect: Connection refused (code 111)")
        #expect(!DestinationCheck.reading(bucket: answer(403), request: "HEAD", bucket: "b").passed)
        #expect(DestinationCheck.reading(bucket: answer(200), request: "HEAD", bucket: "b").passed)
    }
}

@Suite struct FolderFilesTests {
    @Test func patternsAreReadAsRcloneReadsThem() {
        #expect(FolderFiles.matches("*.jpg", name: "a.jpg", path: "2026/06/a.jpg"))
        #expect(!FolderFiles.matches("*.jpg", name: "a.png", path: "a.png"))
        #expect(FolderFiles.matches("06/*.jpg", name: "a.jpg", path: "2026/06/a.jpg"), "a path pattern matches at any folder")
        #expect(!FolderFiles.matches("/06/*.jpg", name: "a.jpg", path: "2026/06/a.jpg"), "a leading / anchors it at the folder")
        #expect(FolderFiles.matches("/2026/**", name: "a.jpg", path: "2026/06/a.jpg"))
        #expect(!FolderFiles.matches("2026/*", name: "a.jpg", path: "2026/06/a.jpg"), "* stays within a name")
        let folder = FolderFiles(include: ["*.heic", "*.jpg"], exclude: ["IMG_0*"])
        #expect(folder.chosen(name: "IMG_1.JPG", path: "IMG_1.JPG") == false, "globs are case-sensitive, as rclone's")
        #expect(folder.chosen(name: "IMG_1.jpg", path: "IMG_1.jpg"))
        #expect(!folder.chosen(name: "IMG_01.jpg", path: "IMG_01.jpg"))
        #expect(!FolderFiles().chosen(name: "notes.txt", path: "notes.txt"))
        #expect(FolderFiles(anyFile: true).chosen(name: "notes.txt", path: "notes.txt"))
    }
}
