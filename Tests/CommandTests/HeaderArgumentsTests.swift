import Foundation
import Testing
import UploadCommands
import UploadCore
import UploadTesting

@Suite("-H and netrc, read as the commands read them")
struct HeaderArgumentsTests {
    /// A header file may be a pipe (`-H @<(pass show token)`, a FIFO); one that cannot be read
    /// says why, not "missing or unreadable".
    @Test func aPipeIsReadAndAnUnreadableFileSaysWhy() throws {
        let folder = TestFiles.makeTemporaryDirectory("headers-fifo")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let fifo = folder + "/token"
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Thread {
            let handle = FileHandle(forWritingAtPath: fifo)
            handle?.write(Data("Authorization: Bearer from-a-pipe\n".utf8))
            try? handle?.close()
        }
        writer.start()
        let headers = try HeaderArguments(["@" + fifo], netrc: nil, standardInput: { nil }).parse(for: "http://h/photo")
        #expect(headers == [RequestHeader(name: "Authorization", value: "Bearer from-a-pipe")])
        for (path, reason) in [(folder + "/missing", "it does not exist"), (folder, "it is a directory")] {
            do {
                _ = try HeaderArguments(["@" + path], netrc: nil, standardInput: { nil }).parse(for: "http://h/")
                Issue.record("\(path) was read")
            } catch {
                #expect(error.description.contains(reason), "\(error.description)")
            }
        }
    }

    /// Sizes out of range say which way: not a size, too small, or beyond 8 PiB.
    @Test func sizesSayWhatIsWrongWithThem() {
        #expect(ByteSize.refusal("lots", option: "--chunk-size", atLeast: 1, like: "5MiB") == "--chunk-size 'lots' is not a size like 5MiB")
        #expect(ByteSize.refusal("8PiB", option: "--chunk-size", atLeast: 1, like: "5MiB") == nil, "8 PiB is the most, and taken")
        #expect(
            ByteSize.refusal("9PiB", option: "--chunk-size", atLeast: 1, like: "5MiB") == "--chunk-size '9PiB' is more than 8 PiB, the most a size can be here")
        #expect(ByteSize.refusal("0", option: "--chunk-size", atLeast: 1, like: "5MiB") == "--chunk-size '0' must be at least 1 byte, like 5MiB")
        #expect(ByteSize.refusal("100", option: "--limit-rate", atLeast: 1024, like: "500k")?.contains("must be at least") == true)
        #expect(ByteSize.refusal("5MiB", option: "--chunk-size", atLeast: 1, like: "5MiB") == nil)
    }

    @Test func headersFromArgumentsFilesAndStandardInputInOrder() throws {
        let folder = TestFiles.makeTemporaryDirectory("headers")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "X-Token: from-file\n\nX-Other: two\n".write(toFile: folder + "/h.txt", atomically: true, encoding: .utf8)
        let arguments = HeaderArguments(["X-First: 1", "@" + folder + "/h.txt", "@-"], netrc: nil, standardInput: { "X-Piped: 3\n" })
        let headers = try arguments.parse(for: "http://h/photo")
        #expect(headers.map(\.name) == ["X-First", "X-Token", "X-Other", "X-Piped"])
        // While the command line is checked, standard input is left alone.
        #expect(try arguments.parse(for: "http://h/photo", readingStandardInput: false).map(\.name) == ["X-First", "X-Token", "X-Other"])
        #expect(throws: UploadInputError.self) { try HeaderArguments(["@" + folder + "/missing"], netrc: nil, standardInput: { nil }).parse(for: "http://h/") }
    }

    @Test func aNetrcLoginIsAddedUnlessAnAuthorizationIsGiven() throws {
        let folder = TestFiles.makeTemporaryDirectory("netrc")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "machine h login ann password s3cret\n".write(toFile: folder + "/.netrc", atomically: true, encoding: .utf8)
        let choice = try #require(HeaderArguments.netrcChoice(netrc: true, netrcFile: nil, netrcOptional: false, home: folder))
        let added = try HeaderArguments([], netrc: choice, standardInput: { nil }).parse(for: "http://h/photo")
        #expect(added == [BasicCredentials.header(login: "ann", password: "s3cret")])
        let given = try HeaderArguments(["Authorization: Bearer t"], netrc: choice, standardInput: { nil }).parse(for: "http://h/photo")
        #expect(given.map(\.value) == ["Bearer t"])
        // Which file: --netrc-file wins and is required; --netrc-optional alone is optional.
        #expect(HeaderArguments.netrcChoice(netrc: false, netrcFile: "/x", netrcOptional: true, home: folder) == NetrcChoice(path: "/x", optional: false))
        #expect(
            HeaderArguments.netrcChoice(netrc: false, netrcFile: nil, netrcOptional: true, home: folder)
                == NetrcChoice(path: folder + "/.netrc", optional: true))
        #expect(HeaderArguments.netrcChoice(netrc: false, netrcFile: nil, netrcOptional: false, home: folder) == nil)
    }
}
