import Foundation
import Testing
import UploadTesting

/// A server that answers 307/308 with another origin gets the photo sent there only with -L
/// (`--location`), as curl follows no redirect without it: any server could otherwise make the
/// client send the user's file to any host and port.
@Suite(.serialized, .timeLimit(.minutes(2))) struct RedirectCLITests {
    @Test func aRedirectToAnotherOriginNeedsLocation() async throws {
        let receiver = try await ReceiverHarness.start()
        defer { Task { await receiver.cleanUp() } }
        let photo = try TestFiles.writeImage(at: receiver.root + "/p.jpg", size: 4000)
        let redirector = try S3RedirectTests.server(S3RedirectTests.Seen()) {
            "HTTP/1.1 308 Permanent Redirect\r\nLocation: \(receiver.url)\r\nContent-Length: 0\r\n\r\n"
        }
        defer { redirector.stop() }
        let destination = "http://127.0.0.1:\(redirector.port)/photo"
        let refused = try await CLIRun.run(["send", photo, "--to", destination, "--protocol", "multipart", "-H", "X-Api-Key: k1"])
        #expect(refused.status == 2, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.stdout.contains("wanted the file at \(receiver.url)") && refused.stdout.contains("-L (--location)"), "\(refused.stdout)")
        #expect(receiver.storedNames().isEmpty && receiver.logLines.isEmpty, "nothing reached the other origin")

        let followed = try await CLIRun.run(["send", photo, "--to", destination, "--protocol", "multipart", "-L", "-H", "X-Api-Key: k1"])
        #expect(followed.status == 0, "\(followed.stdout) \(followed.stderr)")
        #expect(receiver.storedNames() == ["p.jpg"])
    }
}
