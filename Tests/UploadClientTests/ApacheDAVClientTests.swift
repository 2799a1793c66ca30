import Foundation
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// `--put` against Apache's WebDAV (Debian's mod_dav_fs), the server most Linux hosts have:
/// missing folders made with `--create-dirs` (409, MKCOL up and down), files stored byte for
/// byte, a login only where it belongs, and nothing asked twice.
@Suite(.serialized, .enabled(if: ApacheDAVPeer.available, "needs Debian's apache2 (.ci/run installs it)"))
struct ApacheDAVClientTests {
    @Test func missingFoldersAreMadeAndTheFilesStoredWhole() async throws {
        let server = try await ApacheDAVPeer.start()
        defer { server.stop() }
        for size in [40_000, 3_000_000] {
            let path = try await TestFiles.image("IMG 0001.jpg", size: Int64(size), in: "apache-\(size)")
            let refused = try await WebDAVClientTests.send(path, to: server.url + "2026/\(size)/", createDirs: false)
            #expect(refused.response?.status == 409, "\(refused.outcome)")
            // Over 1 MiB the head asks to go on first: the refusal costs no body.
            if size > 1 << 20 { #expect(refused.bytesSent < 100_000, "\(refused.bytesSent) bytes sent for a 409") }
            let sent = try await WebDAVClientTests.send(path, to: server.url + "2026/\(size)/", createDirs: true)
            #expect(sent.outcome.isSuccess, "\(sent.outcome)")
            #expect(server.stored("2026/\(size)/IMG 0001.jpg") == (try Data(contentsOf: URL(fileURLWithPath: path))))
            let again = try await WebDAVClientTests.send(path, to: server.url + "2026/\(size)/", createDirs: true)
            #expect(again.response?.status == 204, "\(again.outcome): a file replaced")
        }
        // The first file: PUT 409, MKCOL 409 for the deeper folder, MKCOL 201 up, 201 down, PUT 201.
        let first = server.log.split(separator: "\n").filter { $0.contains("/2026/40000") || $0.hasPrefix("MKCOL /dav/2026/ ") }.prefix(6)
        #expect(
            first.map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["PUT", "PUT", "MKCOL", "MKCOL", "MKCOL", "PUT"],
            "\(first)")
    }

    @Test func aLoginGoesWithEveryRequestToTheServer() async throws {
        let server = try await ApacheDAVPeer.start(login: ("alice", "s3cret"))
        defer { server.stop() }
        try await WebDAVClientTests.aLoginGoesWithEveryRequest(to: server.url, in: "apache-login", stored: server.stored)
    }
}
