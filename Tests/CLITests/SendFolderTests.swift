import Foundation
import Testing
import UploadTesting

/// `send` as curl and rclone users expect: one bad file does not stop the others, a folder
/// stands for its images, and --dry-run says what would go where without sending.
@Suite(.serialized, .timeLimit(.minutes(3))) struct SendFolderTests {
    func roll(_ root: String) throws -> String {
        let roll = root + "/roll"
        for folder in ["roll/2026/06", "roll/.thumbnails"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        _ = try TestFiles.writeImage(at: roll + "/b.jpg", size: 3000)
        _ = try TestFiles.writeImage(at: roll + "/a.png", size: 2000)
        _ = try TestFiles.writeImage(at: roll + "/2026/06/c.jpg", size: 1000)
        _ = try TestFiles.writeImage(at: roll + "/2026/06/skip-me.jpg", size: 1000)
        _ = try TestFiles.writeImage(at: roll + "/.thumbnails/t.jpg", size: 500)
        try Data("a shopping list".utf8).write(to: URL(fileURLWithPath: roll + "/notes.jpg"))
        try Data("words".utf8).write(to: URL(fileURLWithPath: roll + "/readme.txt"))
        return roll
    }

    @Test func theGoodFilesGoAndEachRefusedOneIsSaid() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let roll = try roll(receiver.root)
        let run = try await CLIRun.run(["send", roll, roll + "/missing.jpg", "--to", receiver.url, "--concurrency", "1"])
        #expect(run.status == 2, "a refused file is a file error at the end: \(run.stdout) \(run.stderr)")
        #expect(
            run.stderr.contains("notes.jpg is not an image (it looks like text)") && run.stderr.contains("missing.jpg: No such file or directory; not sent"),
            "\(run.stderr)")
        #expect(run.stderr.contains("uploadmon: 2 files were refused and not sent"))
        // The folder's images in name order, not its subfolders', hidden ones, or other names.
        #expect(receiver.storedNames().sorted() == ["a.png", "b.jpg"], "\(receiver.storedNames())")
        #expect(run.stdout.range(of: "#1 a.png")?.lowerBound ?? run.stdout.endIndex < (run.stdout.range(of: "#2 b.jpg")?.lowerBound ?? run.stdout.startIndex))

        // --strict: none goes when one is refused.
        let strict = try await CLIRun.run(["send", roll, "-r", "--strict", "--to", receiver.url])
        #expect(strict.status == 64 && strict.stderr.contains("nothing was sent"), "\(strict.stderr)")
        #expect(receiver.storedNames().count == 2)

        // -r with rclone's globs: a name pattern at any depth, a path pattern under the folder.
        let chosen = try await CLIRun.run([
            "send", roll, "-r", "--include", "*.jpg", "--exclude", "2026/**/skip-*", "--exclude", "notes.jpg",
            "--to", receiver.url, "--json",
        ])
        #expect(chosen.status == 0, "\(chosen.stdout) \(chosen.stderr)")
        #expect(receiver.storedNames().count == 4 && receiver.storedNames().contains("c.jpg"), "b.jpg again and c.jpg, not a.png: \(receiver.storedNames())")
        #expect(!receiver.storedNames().contains("skip-me.jpg") && !receiver.storedNames().contains("t.jpg"))

        // JSON says a refused file as an event of its own.
        let json = try await CLIRun.run(["send", roll + "/notes.jpg", roll + "/a.png", "--to", receiver.url, "--json"])
        #expect(json.status == 2 && json.stdout.contains(#""event":"refused""#) && json.stdout.contains("notes.jpg"), "\(json.stdout)")
    }

    @Test func aDryRunSaysWhatWouldGoWhereAndSendsNothing() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let roll = try roll(receiver.root)
        let run = try await CLIRun.run([
            "send", roll, "-r", "--exclude", "notes.jpg", "--to", receiver.url, "--protocol", "multipart", "--field", "file", "--dry-run",
        ])
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("would send \(roll)/2026/06/c.jpg (1.00 kB) to \(receiver.url)"), "\(run.stdout)")
        #expect(
            run.stdout.contains("4 files, 7.00 kB, by a multipart/form-data POST, the file in the form field file; nothing was sent (--dry-run)"),
            "\(run.stdout)")
        #expect(receiver.storedNames().isEmpty && receiver.logLines.isEmpty, "not even a question was asked of the server")
        let empty = receiver.root + "/empty"
        try FileManager.default.createDirectory(atPath: empty + "/sub", withIntermediateDirectories: true)
        let nothing = try await CLIRun.run(["send", empty, "--to", receiver.url])
        #expect(
            nothing.status == 64 && nothing.stderr.contains("empty: no image to send in it (1 subfolder(s) not searched: -r searches them)"),
            "\(nothing.stderr)")
    }
}
