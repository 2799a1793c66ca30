import Foundation
import Glibc
import Testing
import UploadTesting

/// `uploadmon serve` as a user runs it: its limits' flags and how it stops.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ServeCommandTests {
    @Test func sigtermStopsAcceptingAndCutsAStalledUploadAfterTheGracePeriod() async throws {
        let root = TestFiles.makeTemporaryDirectory("serve-stop")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLIRun.binary)
        process.arguments = ["serve", "--port", "0", "--dir", root + "/up", "--shutdown-grace", "0.5s", "--body-timeout", "10m"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let reader = out.fileHandleForReading
        let banner = try await offPool { () -> String in
            var seen = Data()
            while !String(decoding: seen, as: UTF8.self).contains("\n") {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                seen.append(chunk)
            }
            return String(decoding: seen, as: UTF8.self)
        }
        let afterHost = banner.components(separatedBy: "127.0.0.1:").dropFirst().first ?? ""
        let port = try #require(Int(afterHost.prefix { $0.isNumber }), "\(banner)")

        let connection = try RawConnection.connect(to: port)
        defer { connection.close() }
        let head = "POST /photo HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: 100000\r\n\r\n"
        connection.send(Array((head + "--B\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a.png\"\r\n\r\n\u{89}PNG\r\n\u{1A}\nxxxx").utf8))
        // The upload is under way once serve holds a file open in the folder (it has no name
        // there while it streams in, where the system allows).
        var writing = 0
        for _ in 0..<200 where writing == 0 {
            writing = TestFiles.openFiles(in: root + "/up", pid: process.processIdentifier)
            if writing == 0 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(writing == 1)

        kill(process.processIdentifier, SIGTERM)
        // The stalled client never sends more: serve ends because it cuts the upload, not because the client left.
        let rest = try await offPool { String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(rest.contains("POST /photo 503"), "\(rest)")
        #expect(rest.contains("the receiver is stopping; the upload was abandoned"))
        #expect(rest.hasSuffix("uploadmon serve: stopped\n"))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: root + "/up")) == [])
    }

    @Test(arguments: [
        (["--header-timeout", "1e300"], "--header-timeout '1e300' is out of range: allowed 0.1s to 1d"),
        (["--idle-timeout", "0"], "--idle-timeout '0' is out of range: allowed 0.1s to 1d"),
        (["--body-timeout", "soon"], "--body-timeout 'soon' is not a duration like 30s, 5m, 1h30m or 2d"),
        (["--shutdown-grace=-1"], "--shutdown-grace '-1' is not a duration"),
        (["--max-connections", "0"], "--max-connections must be between 1 and 1000000"),
    ])
    func limitsOutOfRangeAreRefusedNamingTheFlag(arguments: [String], message: String) async throws {
        let run = try await CLIRun.run(["serve", "--port", "0", "--dir", "/nonexistent/never"] + arguments)
        #expect(run.status == 64)
        #expect(run.stderr.contains(message), "\(run.stderr)")
    }
}
