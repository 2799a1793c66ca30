import Foundation
import Testing
import UploadCommands
import UploadCore
import UploadTesting

@Suite("-H and netrc, read as the commands read them")
struct HeaderArgumentsTests {
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
        #expect(HeaderArguments.netrcChoice(netrc: false, netrcFile: nil, netrcOptional: true, home: folder) == NetrcChoice(path: folder + "/.netrc", optional: true))
        #expect(HeaderArguments.netrcChoice(netrc: false, netrcFile: nil, netrcOptional: false, home: folder) == nil)
    }
}
