import Foundation
import Monitor
import MonitorRuntime
import Receiver
import UploadClient
import UploadCore

/// `uploadmon demo`: sample images, a receiver on a free loopback port that takes only images,
/// and the monitor (or a headless send) uploading to it at a watchable rate.
public struct DemoSession {
    public var root: String
    public var bigBytes: Int
    public var rateBytesPerSecond: Int
    public var output: CommandOutput

    public init(root: String, bigBytes: Int, rateBytesPerSecond: Int, output: CommandOutput = .standard) {
        self.root = root
        self.bigBytes = bigBytes
        self.rateBytesPerSecond = rateBytesPerSecond
        self.output = output
    }

    /// How the demo sends: two at once, each at the demo's rate.
    var settings: TransportSettings {
        TransportSettings(rateLimit: Int64(rateBytesPerSecond))
    }

    /// Writes (or reuses) the samples, starts the receiver, runs `body` with the sample files,
    /// their folder, the endpoint and where files are received; stops the receiver however it ends.
    func withReceiver<T>(_ body: ([String], String, String, String) async throws -> T) async throws -> T {
        let samples = root + "/samples"
        let received = root + "/received-\(ProcessInfo.processInfo.processIdentifier)"
        output.say("Preparing sample images in \(samples)…")
        let files = try DemoSamples.write(into: samples, bigBytes: bigBytes)
        // The demo's receiver: `serve --images-only` on a free loopback port, silent.
        let receiver = try await RunningReceiver.start(ReceiverConfiguration(
            host: "127.0.0.1", port: 0, directory: received, imagesOnly: true, limits: .init(shutdownGrace: .seconds(1))))
        do {
            let result = try await body(files, samples, receiver.url, received)
            await receiver.stop()
            return result
        } catch {
            await receiver.stop()
            throw error
        }
    }

    /// The monitor on the samples.
    public func runMonitor(notify: NotifyMode, makeTerminal: @escaping @Sendable (_ wantColors: Bool) -> any MonitorTerminal) async throws {
        try await withReceiver { _, samples, url, received in
            // The client would refuse notes.jpg itself; let it through so the receiver's 415 shows.
            let uploads = MonitorUploads(url: url, field: "photo", formFields: [], headers: [], allowAnyFile: true)
            let session = MonitorSession(
                directory: samples, uploads: uploads, shownEndpoint: url, settings: settings, concurrency: 2, notify: notify,
                remembersSent: false, output: output)
            let final = try await session.run(makeTerminal: makeTerminal)
            let counts = final.queue.counts
            output.write("Receiver stored \(counts.ok) file\(counts.ok == 1 ? "" : "s") in \(received)\nTry it yourself: uploadmon serve, then uploadmon ~/Pictures --to http://127.0.0.1:3000/photo\n")
        }
    }

    /// Every sample sent at once, the results printed; the exit status.
    public func runHeadless(json: Bool) async throws -> Int32 {
        try await withReceiver { files, _, url, received in
            output.write("Receiver listening on \(url), storing in \(received)\nSending \(files.count) samples\n\n")
            let requests = try SendSession(endpoint: url, allowAnyFile: true, settings: settings, output: output).requests(for: files).get()
            let result = try await SendSession.send(requests, settings: settings, concurrency: 2, json: json, output: output)
            let ok = result.tracker.states.values.filter { $0.outcome?.isSuccess == true }.count
            output.write("\nThe receiver stored \(ok) files in \(received).\n")
            return result.interruption.map(SendExit.interrupted(by:)) ?? SendExit.success
        }
    }
}
