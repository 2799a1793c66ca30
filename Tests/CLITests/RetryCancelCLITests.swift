import Foundation
import Testing
import UploadTesting

/// Background uploads from the command line, as the monitor's R and c: `uploadmon retry`,
/// `uploadmon cancel`, and `status` totals over the whole journal.
@Suite(.serialized, .timeLimit(.minutes(4))) struct RetryCancelCLITests {
    final class Mode: @unchecked Sendable {
        private let lock = NSLock()
        private var value = "fail"
        var current: String { lock.withLock { value } }
        func set(_ mode: String) { lock.withLock { value = mode } }
    }

    @Test func failedUploadsAreRetriedAndRunningOnesCancelled() async throws {
        let mode = Mode()
        let server = try RawServer { connection in
            let head = connection.read(until: "\r\n\r\n", timeout: 10)
            if head.hasPrefix("OPTIONS") {
                connection.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                connection.close()
                return
            }
            switch mode.current {
            case "hold":
                // Takes the body and never answers (until the client gives up or cancels).
                _ = connection.read(until: "never", timeout: 60)
            case "fail":
                _ = connection.read(until: "--\r\n", timeout: 10)
                connection.write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy")
            default:
                _ = connection.read(until: "--\r\n", timeout: 10)
                connection.write("HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            }
            connection.close()
        }
        defer { server.stop() }
        let root = TestFiles.makeTemporaryDirectory("retry-cancel")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let env = AgentCLITests.environment(root)
        defer { _ = try? CLIRun.runBlocking(["agent", "stop"], stdin: nil, environment: env) }
        let files = try (1...3).map { try TestFiles.writeImage(at: root + "/p\($0).png", size: 2000) }

        let queued = try await CLIRun.run(["send"] + files + ["--to", server.url, "--background", "--protocol", "multipart"], environment: env)
        #expect(queued.status == 0, "\(queued.stdout) \(queued.stderr)")
        var status = CLIRun(status: 0, stdout: "", stderr: "")
        try await AgentCLITests.waitFor("three failures") {
            status = try CLIRun.runBlocking(["status"], stdin: nil, environment: env)
            return status.stdout.contains("All 3 uploads: 3 failed or cancelled")
        }
        #expect(status.stdout.contains(server.url), "the status table says where each went: \(status.stdout)")

        // Words for mistakes; an id that has not failed is refused by the agent, exit 1.
        let bad = try await CLIRun.run(["retry", "abc"], environment: env)
        #expect(bad.status == 64 && bad.stderr.contains("abc is not an upload id"), "\(bad.stderr)")
        let neither = try await CLIRun.run(["retry"], environment: env)
        #expect(neither.status == 64 && neither.stderr.contains("--failed"), "\(neither.stderr)")
        let unknown = try await CLIRun.run(["retry", "#99"], environment: env)
        #expect(unknown.status == 1 && unknown.stdout.contains("#99 has not failed"), "\(unknown.stdout) \(unknown.stderr)")

        mode.set("ok")
        let retried = try await CLIRun.run(["retry", "--failed"], environment: env)
        #expect(retried.status == 0 && retried.stdout.contains("Retrying 3 uploads"), "\(retried.stdout) \(retried.stderr)")
        try await AgentCLITests.waitFor("three sent") {
            try CLIRun.runBlocking(["status"], stdin: nil, environment: env).stdout.contains("All 3 uploads: 3 sent")
        }

        // Held by the server: cancel --all stops them; they are counted apart from the sent.
        mode.set("hold")
        let more = try (4...5).map { try TestFiles.writeImage(at: root + "/p\($0).png", size: 2000) }
        _ = try await CLIRun.run(["send"] + more + ["--to", server.url, "--background", "--protocol", "multipart", "--answer-timeout", "5m"], environment: env)
        try await AgentCLITests.waitFor("two sending") {
            try CLIRun.runBlocking(["status"], stdin: nil, environment: env).stdout.contains("2 sending")
        }
        let cancelled = try await CLIRun.run(["cancel", "--all"], environment: env)
        #expect(cancelled.status == 0 && cancelled.stdout.contains("Cancelled 2 uploads"), "\(cancelled.stdout) \(cancelled.stderr)")
        try await AgentCLITests.waitFor("two cancelled") {
            try CLIRun.runBlocking(["status"], stdin: nil, environment: env).stdout.contains("All 5 uploads: 3 sent · 2 failed or cancelled")
        }
        let nothing = try await CLIRun.run(["cancel", "--all"], environment: env)
        #expect(nothing.status == 0 && nothing.stdout.contains("Nothing to cancel"), "\(nothing.stdout)")
    }
}
