import ArgumentParser
import Foundation
import Monitor
import NCursesTerminal
import Receiver
import UploadClient
import UploadCore
import UploadReports

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Open the monitor on generated sample images, uploading to a built-in receiver.",
        discussion: """
        Everything happens on 127.0.0.1 on a free port: the receiver runs with --images-only and \
        stops when you quit. The samples include a ~200 MB PNG (its bar fills over several seconds), \
        one with a Japanese name, and a text file named notes.jpg that the receiver refuses with \
        415, so a red panel shows too. Mark files with Space (or * for all), press u, watch. \
        Samples are generated once and reused; received files go to a new folder each run.
        """
    )

    @Option(help: "Folder for the samples and the received files (default: uploadmon-demo in the temporary folder).")
    var dir: String?

    @Option(help: "Size of the large sample in MB.")
    var bigMB = 200

    @Option(help: "Upload rate per file in MB/s, so the progress is watchable on loopback.")
    var rateMB = 25

    @Option(help: "How to tell the terminal an upload finished: bell, osc or none.")
    var notify: NotifyMode = .bell

    @Option(help: "How previews reach the screen: auto (ask the terminal), kitty, sixel or cells.")
    var graphics: GraphicsChoice = .auto

    @Flag(help: "Send every sample at once and print the results instead of opening the monitor.")
    var headless = false

    @Flag(name: .long, help: "With --headless: print one JSON object per event.")
    var json = false

    func validate() throws {
        guard bigMB >= 1 else { throw ValidationError("--big-mb must be at least 1") }
        guard rateMB >= 1 else { throw ValidationError("--rate-mb must be at least 1") }
        if json && !headless { throw ValidationError("--json needs --headless") }
    }

    func run() async throws {
        if !headless {
            guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else {
                throw ValidationError("the demo opens the monitor and needs a terminal; use --headless in scripts")
            }
        }
        let root = dir ?? NSTemporaryDirectory() + "uploadmon-demo"
        let samples = root + "/samples"
        let received = root + "/received-\(ProcessInfo.processInfo.processIdentifier)"
        Console.say("Preparing sample images in \(samples)…")
        let files = try DemoSamples.write(into: samples, bigBytes: bigMB * 1_000_000)

        // The demo's receiver: `serve --images-only` on a free loopback port, silent.
        let receiver = try await RunningReceiver.start(ReceiverConfiguration(
            host: "127.0.0.1", port: 0, directory: received, imagesOnly: true, limits: .init(shutdownGrace: .seconds(1))))
        let url = receiver.url
        var options = try UploadOptions.parse(["--to", url, "--limit-rate", "\(rateMB)MB", "--concurrency", "2"])
        // The client would refuse notes.jpg itself; let it through so the receiver's 415 shows.
        options.anyFile = true
        do {
            if headless {
                try await runHeadless(files: files, url: url, options: options, received: received)
            } else {
                let final = try await MonitorSession.run(directory: samples, upload: options, notify: notify, graphics: graphics, remembersSent: false)
                let counts = final.queue.counts
                Console().write("Receiver stored \(counts.ok) file\(counts.ok == 1 ? "" : "s") in \(received)\nTry it yourself: uploadmon serve, then uploadmon ~/Pictures --to http://127.0.0.1:3000/photo\n")
            }
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    func runHeadless(files: [String], url: String, options: UploadOptions, received: String) async throws {
        Console().write("Receiver listening on \(url), storing in \(received)\nSending \(files.count) samples\n\n")
        var requests: [(UploadRequest, Int64?)] = []
        for file in files {
            let request = try UploadRequest.forPath(file, url: url, allowAnyFile: true)
            requests.append((request, try UploadPreflight.check(request)))
        }
        let result = try await SendRunner.run(requests, options: options, json: json)
        let ok = result.tracker.states.values.filter { $0.outcome?.isSuccess == true }.count
        Console().write("\nThe receiver stored \(ok) files in \(received).\n")
        if let signal = result.interruption { throw SendExit.interrupted(by: signal) }
    }
}

/// The demo's sample files: real PNGs of several sizes (one large enough to watch), one with a
/// Japanese name, one in a subfolder, and a text file named like a JPEG for the receiver to refuse.
/// Files already there with the right size are reused.
enum DemoSamples {
    static func write(into folder: String, bigBytes: Int) throws -> [String] {
        let fm = FileManager.default
        try fm.createDirectory(atPath: folder + "/more", withIntermediateDirectories: true)
        // A width whose rows fill whole bands; the height follows from the size asked for.
        let bigWidth = 8000
        let bigHeight = max(64, bigBytes / (bigWidth * 3 + 1))
        let samples: [(name: String, width: Int, height: Int, scene: DemoScene)] = [
            ("sunrise.png", 640, 480, .sunrise),
            ("夕焼け.png", 1200, 800, .sunsetSea),
            ("city-night.png", 2400, 1600, .cityNight),
            ("mountain-large.png", bigWidth, bigHeight, .mountains),
            ("more/tiny.png", 64, 64, .smile),
        ]
        var paths: [String] = []
        for sample in samples {
            let path = folder + "/" + sample.name
            // Scenes, so the preview shows something recognisable on first run. The small ones
            // are one band (a whole picture); the large one repeats its scene in 8 bands, the
            // way it is written fast (a filmstrip of 8 frames).
            let band = sample.name == "mountain-large.png" ? (sample.height + 7) / 8 : sample.height
            let expected = PNGEncoder.bandedFileSize(width: sample.width, height: sample.height, bandRows: band)
            let existing = (try? fm.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil
            if existing != expected {
                _ = try PNGEncoder.writeBanded(to: path, width: sample.width, height: sample.height, bandRows: band,
                                               pixel: sample.scene.pixels(width: sample.width, height: band))
            }
            paths.append(path)
        }
        let notes = folder + "/notes.jpg"
        try Data("These are meeting notes, not a photo.\n".utf8).write(to: URL(fileURLWithPath: notes))
        paths.append(notes)
        return paths
    }
}
