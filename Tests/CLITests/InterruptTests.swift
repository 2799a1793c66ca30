import Foundation
import Glibc
import Testing
import UploadTesting

/// `send` interrupted while uploads run, as a user pressing Ctrl-C would (SIGINT to the process).
@Suite(.serialized, .timeLimit(.minutes(5))) struct InterruptTests {
    /// Starts `uploadmon` with the arguments, waits until its output contains `marker`, sends
    /// `signal` and returns what it printed and how it exited.
    func interrupt(
        _ arguments: [String], after marker: String, with signal: Int32, input: Pipe? = nil
    ) throws -> CLIRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CLIRun.binary)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        var seen = Data()
        let deadline = ContinuousClock.now + .seconds(30)
        while String(decoding: seen, as: UTF8.self).range(of: marker) == nil, ContinuousClock.now < deadline {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        kill(process.processIdentifier, signal)
        seen.append(out.fileHandleForReading.readDataToEndOfFile())
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIRun(status: process.terminationStatus, stdout: String(decoding: seen, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    @Test func ctrlCCancelsRunningAndQueuedUploadsAndLeavesNothingBehind() async throws {
        let receiver = try await ReceiverHarness.start()
        let big = try TestFiles.writeImage(at: receiver.root + "/big.jpg", size: 40_000_000)
        let next = try TestFiles.writeImage(at: receiver.root + "/next.jpg", size: 1000)
        let run = try await offPool {
            try interrupt(
                ["send", big, next, "--to", receiver.url, "--concurrency", "1", "--limit-rate", "4MB"],
                after: "big.jpg sending", with: SIGINT)
        }
        #expect(run.status == 130, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("#1 big.jpg FAILED cancelled (interrupted)"), "\(run.stdout)")
        #expect(run.stdout.contains("#2 next.jpg FAILED cancelled before it started (interrupted)"), "\(run.stdout)")
        #expect(run.stdout.contains("all 2 uploads finished: 0 ok, 0 failed, 2 cancelled"), "a cancelled upload is not a failed one: \(run.stdout)")
        #expect(run.stderr.contains("uploadmon: interrupted; 2 upload(s) cancelled"), "\(run.stderr)")
        // The receiver saw the connection end mid-body and removed its partial file.
        var left: [String] = []
        for _ in 0..<100 {
            left = (try? FileManager.default.contentsOfDirectory(atPath: receiver.directory)) ?? []
            if left.isEmpty { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(left.isEmpty, "\(left)")
        await receiver.cleanUp()
    }

    /// `send -` fed by a writer that has not written yet: the first read waits, Ctrl-C must not.
    @Test func ctrlCDoesNotWaitForStandardInput() async throws {
        let receiver = try await ReceiverHarness.start()
        let input = Pipe()
        let run = try await offPool {
            try interrupt(["send", "-", "--name", "later.jpg", "--to", receiver.url], after: "later.jpg queued", with: SIGINT, input: input)
        }
        try input.fileHandleForWriting.close()
        #expect(run.status == 130, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("#1 later.jpg FAILED cancelled (interrupted)"), "\(run.stdout)")
        await receiver.cleanUp()
    }

    @Test func sigtermDoesTheSameAndExits143() async throws {
        let receiver = try await ReceiverHarness.start()
        let big = try TestFiles.writeImage(at: receiver.root + "/term.jpg", size: 40_000_000)
        let run = try await offPool {
            try interrupt(["send", big, "--to", receiver.url, "--limit-rate", "4MB", "--json"], after: "\"started\"", with: SIGTERM)
        }
        #expect(run.status == 143, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("cancelled (interrupted)"), "\(run.stdout)")
        #expect(run.stderr.contains("uploadmon: terminated; 1 upload(s) cancelled"), "\(run.stderr)")
        await receiver.cleanUp()
    }
}
