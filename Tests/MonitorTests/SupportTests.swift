import UploadTesting
import Foundation
@testable import Monitor
import Testing
import UploadCore

@Suite struct JSONPrettyTests {
    @Test func reindentsKeepingKeyOrderAndStrings() {
        #expect(
            JSONPretty.format(#"{"z":1,"a":[1,2,{}],"s":"x, {y}: \"q\""}"#) == """
                {
                  "z": 1,
                  "a": [
                    1,
                    2,
                    {}
                  ],
                  "s": "x, {y}: \\"q\\""
                }
                """)
        #expect(JSONPretty.format("[]") == "[]")
    }

    @Test(arguments: ["plain text", "{\"a\": 1", "{} trailing", "\"just a string\"", "]"])
    func nonJSONIsLeftAlone(text: String) {
        #expect(JSONPretty.format(text) == nil)
    }

    /// The panel's height bounds what is made: the first lines are the whole text's first lines,
    /// and whether it is JSON still depends on all of it.
    @Test(arguments: [
        #"{"z":1,"a":[1,2,{}],"s":"x, {y}: \"q\"","e":[],"n":{"m":[{"k":"v"}]}}"#,
        "  [1,\n2 , [ ] ,{ }]  ",
        #"{"raw":"one\ntwo","t":true}"#,
        "[1,]",
    ])
    func boundedLinesAreTheFirstLinesOfTheWhole(text: String) throws {
        let whole = try #require(JSONPretty.format(text)).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for limit in 0...(whole.count + 1) {
            #expect(JSONPretty.lines(Array(text.utf8), limit: limit) == Array(whole.prefix(limit)), "limit \(limit)")
        }
        #expect(JSONPretty.lines(Array((text + "x").utf8), limit: 1) == nil, "broken at its end: not JSON, however few lines are shown")
    }

    @Test(arguments: ["a\r\nb\n\n\nc\n\n", "one line", "\n\nlead\r", "x\r\n\r\n", "a\rb\nc"])
    func plainLinesAreTheFirstLinesOfTheWhole(text: String) {
        var whole = text.replacing("\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        while whole.last?.isEmpty == true { whole.removeLast() }
        for limit in 0...(whole.count + 1) {
            #expect(AnswerDigest.plainLines(text, limit: limit) == Array(whole.prefix(limit)), "limit \(limit)")
        }
    }

    /// What the response panel shows comes from the record: its failure, else its answer.
    @Test func theAnswerOfARecord() {
        var record = UploadRecord(
            id: UploadID(1), name: "a.jpg", path: nil, url: "http://h/p", origin: "test", fileSize: nil, createdAt: Date(timeIntervalSince1970: 0))
        #expect(AnswerDigest(record: record) == nil)
        let body = Array(String(repeating: #"{"k": "v"},"#, count: 5000).dropLast().utf8)
        let json = Array("[".utf8) + body + Array("]".utf8)
        record.response = UploadResponse(status: 201, reason: "Created", headers: [], body: json, bodyBytesTotal: Int64(json.count))
        let shown = AnswerDigest(record: record, lineLimit: 6)
        #expect(shown?.isSuccess == true && shown?.headline == "201 Created")
        #expect(shown?.lines == ["[", "  {", #"    "k": "v""#, "  },", "  {", #"    "k": "v""#])
        record.phase = UploadPhase.finished(UploadOutcome.failed(UploadFailure(.connectionLost, "reset")))
        #expect(AnswerDigest(record: record)?.lines == ["reset"])
    }

    @Test func answerDigestShowsBinaryAsItsSize() {
        let binary = UploadResponse(status: 200, reason: "OK", headers: [("Content-Type", "image/png")], body: [0x89, 0x50, 0x00, 0x01], bodyBytesTotal: 4)
        #expect(AnswerDigest(response: binary).lines == ["(binary body, 4 B, image/png)"])
        let text = UploadResponse(status: 404, reason: "Not Found", headers: [], body: Array("no such\r\npath".utf8), bodyBytesTotal: 2_000_000)
        let digest = AnswerDigest(response: text)
        #expect(digest.headline == "404 Not Found")
        #expect(digest.lines == ["no such", "path", "… 2.00 MB in all"])
    }
}

@Suite struct TerminalNotificationTests {
    @Test func bellAndNone() {
        #expect(TerminalNotification.bytes(mode: .bell, title: "t", body: "b", environment: [:]) == [7])
        #expect(TerminalNotification.bytes(mode: .none, title: "t", body: "b", environment: [:]) == [])
    }

    @Test func oscPicksTheTerminalsDialect() {
        func osc(_ env: [String: String]) -> String {
            String(decoding: TerminalNotification.bytes(mode: .osc, title: "uploadmon", body: "✓ a;b\u{7}\u{202E}.jpg → 200", environment: env), as: UTF8.self)
        }
        #expect(osc([:]) == "\u{1B}]777;notify;uploadmon;✓ a;b<U+0007><U+202E>.jpg → 200\u{07}")
        #expect(osc(["LC_TERMINAL": "iTerm2"]) == "\u{1B}]9;uploadmon: ✓ a;b<U+0007><U+202E>.jpg → 200\u{07}")
        #expect(osc(["TERM": "xterm-kitty"]).hasPrefix("\u{1B}]99;i=uploadmon:d=0;uploadmon\u{1B}\\"))
        #expect(osc(["TMUX": "/tmp/tmux-0/default,1,0"]) == "\u{1B}Ptmux;\u{1B}\u{1B}]777;notify;uploadmon;✓ a;b<U+0007><U+202E>.jpg → 200\u{07}\u{1B}\\")
    }
}

@Suite struct DirectoryReaderTests {
    @Test func listsDirectoriesFirstAndSurvivesBadLinks() throws {
        let root = NSTemporaryDirectory() + "uploadmon-reader-\(UUID().uuidString)"
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/Zeta", withIntermediateDirectories: true)
        try Data([0xFF, 0xD8, 0xFF]).write(to: URL(fileURLWithPath: root + "/b.JPG"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/a.txt"))
        try fm.createSymbolicLink(atPath: root + "/gone.png", withDestinationPath: root + "/missing.png")
        try fm.createSymbolicLink(atPath: root + "/loop.png", withDestinationPath: root + "/loop.png")
        defer { try? fm.removeItem(atPath: root) }

        let listing = DirectoryReader.read(root)
        #expect(listing.error == nil)
        #expect(listing.entries.map(\.name) == ["Zeta", "a.txt", "b.JPG", "gone.png", "loop.png"])
        let stamp = FileFingerprint.of(path: root + "/b.JPG")
        #expect(
            listing.entries[2]
                == DirectoryEntry(
                    name: "b.JPG", kind: .file, size: 3, isImage: true,
                    modified: stamp?.modificationNanoseconds ?? -1, changed: stamp?.changeNanoseconds ?? -1))
        #expect(listing.entries[3].kind == .brokenLink(reason: "broken symlink"))
        #expect(listing.entries[4].kind == .brokenLink(reason: "symlink loop"))

        let missing = DirectoryReader.read(root + "/nope")
        #expect(missing.error == "cannot open \(root)/nope: No such file or directory")
    }

    /// An edit that puts the modification time back (as `touch -r` and `cp -p` do) leaves
    /// size and mtime as they were; the listing's inode change time moves all the same.
    @Test func anEditWithItsModificationTimePutBackChangesTheListedChangeTime() throws {
        let root = TestFiles.makeTemporaryDirectory("reader-ctime")
        let path = root + "/a.jpg"
        try Data(repeating: 1, count: 4_000).write(to: URL(fileURLWithPath: path))
        let before = try #require(DirectoryReader.read(root).entries.first)
        var times = [timespec(tv_sec: 0, tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: 0)]
        var after = before
        // The kernel's clock for inode times ticks every few milliseconds: edit until it moved.
        for _ in 0..<200 where after.changed == before.changed {
            usleep(5_000)
            try Data(repeating: 2, count: 4_000).write(to: URL(fileURLWithPath: path))
            times[0] = timespec(tv_sec: Int(before.modified / 1_000_000_000), tv_nsec: Int(before.modified % 1_000_000_000))
            times[1] = times[0]
            #expect(utimensat(AT_FDCWD, path, times, 0) == 0)
            after = try #require(DirectoryReader.read(root).entries.first)
        }
        #expect(after.size == before.size)
        #expect(after.modified == before.modified, "the modification time was put back")
        #expect(after.changed != before.changed && after.changed != 0)
    }

    /// A name that is not UTF-8 once showed as "(broken symlink)" and could not be queued.
    @Test func aNameThatIsNotUTF8IsAFileShownEscaped() throws {
        let root = NSTemporaryDirectory() + "uploadmon-reader-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let raw = Array(root.utf8) + Array("/caf".utf8) + [0xE9] + Array(".jpg".utf8) + [0]
        let fd = raw.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o600) } }
        close(fd)
        let listing = DirectoryReader.read(root)
        #expect(listing.entries.count == 1)
        #expect(listing.entries.first?.kind == .file, "\(String(describing: listing.entries.first?.kind))")
        #expect(listing.entries.first?.isImage == true)
        var state = MonitorState(width: 120, height: 40, endpoint: "http://127.0.0.1:3000/photo", directory: root, home: "/home/me")
        _ = MonitorReducer.reduce(&state, .directoryLoaded(listing))
        let canvas = MonitorView.render(state, theme: Theme(colors: false, glyphs: .unicode))
        let row = (0..<40).map { canvas.line($0) }.first { $0.contains("caf<0xE9>.jpg") } ?? ""
        #expect(row.contains(" 0 B│"), "the size column stays where it is: \(row)")
        guard case .enqueue(let items)? = Fixtures.press(&state, .character("u")).first else {
            Issue.record("not queued")
            return
        }
        #expect(items.first?.uploadName == "café.jpg")
        #expect(FileFingerprint.of(path: items[0].path)?.size == 0, "the queued path names the file")
    }

    /// `u` on a FIFO once did nothing at all: the entry says what it is and `u` says why, in the log.
    @Test func aFIFOIsListedAsWhatItIsAndRefusedInTheLog() throws {
        let root = NSTemporaryDirectory() + "uploadmon-reader-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(mkfifo(root + "/pipe.jpg", 0o600) == 0)
        let listing = DirectoryReader.read(root)
        #expect(listing.entries.map(\.kind) == [.other(what: "a FIFO (named pipe)")])

        var state = MonitorState(width: 120, height: 40, endpoint: "http://127.0.0.1:3000/photo", directory: root, home: "/home/me")
        _ = MonitorReducer.reduce(&state, .directoryLoaded(listing))
        Fixtures.press(&state, .character("a"))
        let effects = Fixtures.press(&state, .character("u"))
        #expect(effects.isEmpty)
        #expect(state.log.last?.text == "✗ pipe.jpg cannot be sent: it is a FIFO (named pipe), not a regular file", "\(state.log.map(\.text))")
    }

    @Test func parentPaths() {
        #expect(DirectoryReader.parent(of: "/a/b") == "/a")
        #expect(DirectoryReader.parent(of: "/a/") == "/")
        #expect(DirectoryReader.parent(of: "/") == "/")
        #expect(DirectoryReader.join("/", "x") == "/x")
    }
}
