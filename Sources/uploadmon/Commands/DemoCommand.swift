import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Receiver
import ServiceLifecycle
import UploadClient
import UploadCore

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start the built-in receiver, generate sample images and send them to it.",
        discussion: """
        Everything happens on 127.0.0.1 on a free port: the receiver runs with --images-only, the
        samples include a large PNG (so progress is visible), one with a Japanese name, and one
        text file named like a JPEG that the receiver refuses with 415, so a failure shows too.
        """
    )

    @Option(help: "Folder for the samples and the received files (default: a new temporary folder).")
    var dir: String?

    @Option(help: "Size of the large sample in MB.")
    var bigMB = 64

    @Option(help: "Upload rate per file in MB/s, so the progress is watchable on loopback.")
    var rateMB = 25

    @Flag(name: .long, help: "Print one JSON object per event.")
    var json = false

    func run() async throws {
        let root = dir ?? NSTemporaryDirectory() + "uploadmon-demo-\(ProcessInfo.processInfo.processIdentifier)"
        let samples = root + "/samples"
        let received = root + "/received"
        let files = try DemoSamples.write(into: samples, bigBytes: max(1, bigMB) * 1_000_000)

        let ready = AsyncStream<Int>.makeStream()
        let configuration = ReceiverConfiguration(host: "127.0.0.1", port: 0, directory: received, imagesOnly: true)
        let app = try ReceiverServer.makeApplication(configuration, logLevel: .critical, log: { _ in }, onRunning: { port in
            ready.continuation.yield(port)
            ready.continuation.finish()
        })
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "uploadmon.demo")))
        let server = Task { try await group.run() }
        var iterator = ready.stream.makeAsyncIterator()
        guard let port = await iterator.next() else { throw ValidationError("the receiver did not start") }
        let url = "http://127.0.0.1:\(port)/photo"
        Console().write("Receiver listening on \(url), storing in \(received)\nSending \(files.count) samples from \(samples)\n\n")

        var options = try UploadOptions.parse(["--to", url, "--limit-rate", "\(rateMB)MB", "--concurrency", "2"])
        options.anyFile = true
        var requests: [(UploadRequest, Int64?)] = []
        for file in files {
            let request = try UploadRequest.forPath(file, url: url, allowAnyFile: true)
            requests.append((request, try UploadPreflight.check(request)))
        }
        let tracker = try await SendRunner.run(requests, options: options, json: json)
        await group.triggerGracefulShutdown()
        _ = await server.result
        let ok = tracker.states.values.filter { $0.outcome?.isSuccess == true }.count
        Console().write("\nThe receiver stored \(ok) files in \(received). Try it yourself: uploadmon serve, then uploadmon send FILE --to http://127.0.0.1:3000/photo\n")
    }
}

/// The demo's sample files: real PNGs of several sizes, one with a Japanese name, and a text
/// file named like a JPEG for the receiver to refuse.
enum DemoSamples {
    static func write(into folder: String, bigBytes: Int) throws -> [String] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        func gradient(_ w: Int, _ h: Int, _ shift: Int) -> [UInt8] {
            PNGEncoder.encode(width: w, height: h) { x, y in
                (UInt8((x + shift) & 0xFF), UInt8((y * 2) & 0xFF), UInt8((x ^ y) & 0xFF))
            }
        }
        let side = Int(Double(bigBytes / 3).squareRoot())
        let samples: [(String, [UInt8])] = [
            ("sunrise.png", gradient(320, 240, 0)),
            ("夕焼け.png", gradient(480, 320, 90)),
            ("mountain-large.png", gradient(side, side, 40)),
            ("notes.jpg", Array("These are meeting notes, not a photo.\n".utf8)),
        ]
        var paths: [String] = []
        for (name, bytes) in samples {
            let path = folder + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        return paths
    }
}
