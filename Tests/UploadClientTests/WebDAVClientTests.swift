import Foundation
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// `--put` against a WebDAV server that is not ours (WsgiDAV): the file stored byte for byte
/// under its name, missing folders made with `--create-dirs`, a login only where it belongs.
@Suite(.enabled(if: WebDAVPeer.available, "needs python3 with wsgidav and cheroot (.ci/run installs them)"))
struct WebDAVClientTests {
    static func send(_ path: String, to url: String, createDirs: Bool, headers: [RequestHeader] = []) async throws -> AttemptResult {
        let transport = try HTTPUploadTransport(uploadProtocol: .put, createDirs: createDirs)
        var request = try UploadRequest.forPath(path, url: url)
        request.headers = headers
        let result = await transport.perform(request, observer: AttemptObserver())
        try await transport.shutdown()
        return result
    }

    @Test func aFolderThatIsMissingIsAConflictWithoutCreateDirsAndMadeWithIt() async throws {
        let server = try await WebDAVPeer.start()
        defer { server.stop() }
        for size in [40_000, 2_500_000] {
            let path = try await TestFiles.image("IMG 0001.jpg", size: Int64(size), in: "webdav-\(size)")
            let refused = try await Self.send(path, to: server.url + "2026/\(size)/", createDirs: false)
            #expect(refused.response?.status == 409, "\(refused.outcome)")
            #expect(server.stored("2026/\(size)/IMG 0001.jpg") == nil)
            let sent = try await Self.send(path, to: server.url + "2026/\(size)/", createDirs: true)
            #expect(sent.outcome.isSuccess, "\(sent.outcome)")
            #expect(server.stored("2026/\(size)/IMG 0001.jpg") == (try Data(contentsOf: URL(fileURLWithPath: path))))
            // Again: the folders are there, the file is replaced in one request.
            let again = try await Self.send(path, to: server.url + "2026/\(size)/", createDirs: true)
            #expect(again.outcome.isSuccess, "\(again.outcome)")
        }
    }

    @Test func aLoginGoesWithEveryRequestToTheServer() async throws {
        let server = try await WebDAVPeer.start(login: "alice:s3cret")
        defer { server.stop() }
        try await Self.aLoginGoesWithEveryRequest(to: server.url, in: "webdav-login", stored: server.stored)
    }

    /// Without the login a `401`; with it (alice:s3cret) the folder made and the file stored whole.
    static func aLoginGoesWithEveryRequest(to url: String, in folder: String, stored: (String) -> Data?) async throws {
        let path = try await TestFiles.image("a.jpg", size: 10_000, in: folder)
        let anonymous = try await Self.send(path, to: url + "in/", createDirs: true)
        #expect(anonymous.response?.status == 401, "\(anonymous.outcome)")
        let login = RequestHeader(name: "Authorization", value: "Basic " + Data("alice:s3cret".utf8).base64EncodedString())
        let sent = try await Self.send(path, to: url + "in/", createDirs: true, headers: [login])
        #expect(sent.outcome.isSuccess, "\(sent.outcome)")
        #expect(stored("in/a.jpg") == (try Data(contentsOf: URL(fileURLWithPath: path))))
    }
}
