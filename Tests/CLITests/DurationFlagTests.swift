import Foundation
import Testing
import UploadTesting

/// Every duration flag through the binary: out of range is a usage error that names the flag and
/// the range (it once crashed with SIGILL or broke the journal), in range is accepted.
@Suite(.timeLimit(.minutes(5))) struct DurationFlagTests {
    static let url = "http://127.0.0.1:9/photo"

    @Test(arguments: [
        (["send", "a.jpg", "--to", url, "--connect-timeout", "1e300"], "--connect-timeout '1e300' is out of range: allowed 0.1s to 1d"),
        (["send", "a.jpg", "--to", url, "--stall-timeout", "nan"], "--stall-timeout 'nan' is not a duration"),
        (["send", "a.jpg", "--to", url, "--answer-timeout=-1"], "--answer-timeout '-1' is not a duration"),
        (["send", "a.jpg", "--to", url, "--background", "--stall-timeout", "1e300"], "--stall-timeout '1e300' is out of range"),
        (["watch", "/tmp", "--to", url, "--every", "3000000d"], "--every '3000000d' is out of range: allowed 1s to 365d"),
        (["watch", "/tmp", "--to", url, "--every", "1e300"], "--every '1e300' is out of range"),
        (["jobs", "maintenance", "--keep", "1e300"], "--keep '1e300' is out of range: allowed 1m to 3650d"),
        (["jobs", "maintenance", "--every", "30s"], "--every '30s' is out of range: allowed 1m to 365d"),
        (["agent", "run", "--idle-exit", "1e300"], "--idle-exit '1e300' is out of range: allowed 0s to 365d"),
        (["serve", "--body-timeout", "inf"], "--body-timeout 'inf' is not a duration"),
        // One syntax for every duration flag: send takes what serve takes.
        (["send", "a.jpg", "--to", url, "--answer-timeout", "5x"], "--answer-timeout '5x' is not a duration like 30s"),
    ])
    func outOfRangeIsAUsageErrorNamingTheFlag(arguments: [String], message: String) async throws {
        let home = TestFiles.makeTemporaryDirectory("durations")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let run = try await CLIRun.run(arguments, environment: ["XDG_STATE_HOME": home, "XDG_RUNTIME_DIR": home, "HOME": home])
        #expect(run.status == 64, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
    }
}
