import Foundation
import Glibc
import Testing
import UploadTesting

/// What one `send` learnt of a tus origin reaches the next one: a server that keeps nothing of a
/// cut request (aiohttp-tus) on a host of its own (a network namespace: a client remembers
/// nothing of a loopback origin), behind bench/relay.py, which cuts one connection after 6 MB
/// and is re-armed for the second upload.
@Suite(
    .serialized, .timeLimit(.minutes(5)),
    .enabled(
        if: NetworkNamespace.available && TusPeer.aiohttpTusAvailable, "needs root, iproute2 and aiohttp-tus (CI runs as root; .ci/run installs aiohttp-tus)"))
struct TusRememberedOriginTests {
    static let bench = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../bench").standardized.path

    /// The first line a started program writes (a port, or "listening PORT").
    func firstLine(_ output: FileHandle) async throws -> String {
        try await offPool {
            var bytes = Data()
            while !bytes.contains(0x0A) {
                let more = output.availableData
                if more.isEmpty { break }
                bytes += more
            }
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        }
    }

    /// "sent delivered" as the relay last wrote them.
    func counted(_ path: String) -> (sent: Int64, delivered: Int64) {
        let parts = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: " ").compactMap {
            Int64($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return parts.count == 2 ? (parts[0], parts[1]) : (0, 0)
    }

    @Test func aServerThatKeptNothingOfACutIsSentChunksByTheNextProcessAtOnce() async throws {
        let host = try NetworkNamespace()
        defer { host.stop() }
        let root = TestFiles.makeTemporaryDirectory("tus-remembered")
        let server = try host.start(
            ["python3", Self.bench + "/tus_aiohttp_server.py", root + "/files", String(1 << 30), root + "/tus.log"],
            log: root + "/tus.err")
        let port = try await firstLine(server.output)
        #expect(Int(port) != nil, "the tus server said \(port)")
        let count = root + "/count"
        let relay = try host.start(
            [
                "python3", Self.bench + "/relay.py", "--host", host.address, "--to", port, "--delay-ms", "1",
                "--mbit", "2000", "--reset-after", "6000000", "--reset-count", "1", "--count-file", count,
            ],
            log: root + "/relay.err")
        let listening = try await firstLine(relay.output)
        let url = "http://\(host.address):\(listening.split(separator: " ").last ?? "")/files"
        let size: Int64 = 16_000_000
        let first = try await TestFiles.image("first.jpg", size: size, in: "tus-remembered-first")
        let second = try await TestFiles.image("second.jpg", size: size, in: "tus-remembered-second")
        let environment = AgentCLITests.environment(root)

        let one = try await CLIRun.run(["send", first, "--to", url, "--protocol", "tus", "--retries", "5"], environment: environment)
        #expect(one.status == 0, "\(one.stdout) \(one.stderr)")
        #expect(try await eventually { counted(count).sent >= size })
        let afterFirst = counted(count)
        let remembered = (try? String(contentsOfFile: root + "/state/uploadmon/resume-support.json", encoding: .utf8)) ?? ""
        #expect(remembered.contains("discardsCutRequests") && remembered.contains(host.address), "\(remembered)")
        // The first lost its cut request whole: what the link carried before the cut went twice.
        #expect(afterFirst.sent >= size + 5_000_000, "first: \(afterFirst)")

        host.signal(SIGUSR1, where: "relay.py")  // one more cut, for the second upload
        let two = try await CLIRun.run(["send", second, "--to", url, "--protocol", "tus", "--retries", "5"], environment: environment)
        #expect(two.status == 0, "\(two.stdout) \(two.stderr)")
        #expect(try await eventually { counted(count).sent >= afterFirst.sent + size })
        let secondSent = counted(count).sent - afterFirst.sent
        // Chunks from its first byte: the same cut costs a chunk at most, not the 6 MB before it.
        #expect(secondSent < size + 2_000_000, "second: \(secondSent) bytes sent for \(size)")
        #expect(FileManager.default.contentsEqual(atPath: first, andPath: root + "/files/first.jpg"))
        #expect(FileManager.default.contentsEqual(atPath: second, andPath: root + "/files/second.jpg"))
    }
}
