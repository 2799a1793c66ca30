import Foundation
import Glibc
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
        let files: [String]
        do {
            files = try DemoSamples.write(into: samples, bigBytes: bigBytes)
        } catch {
            throw CommandFailure.failed("cannot write the demo's samples in \(samples): \(Self.words(error)) (give another folder with --dir)")
        }
        // The demo's receiver: `serve --images-only` on a free loopback port, silent.
        let receiver = try await RunningReceiver.start(
            ReceiverConfiguration(
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
            output.write(
                "Receiver stored \(counts.ok) file\(counts.ok == 1 ? "" : "s") in \(received)\nTry it yourself: uploadmon serve, then uploadmon ~/Pictures --to http://127.0.0.1:3000/photo\n"
            )
        }
    }

    /// Every sample sent at once, the results printed; the exit status.
    public func runHeadless(json: Bool) async throws -> Int32 {
        try await withReceiver { files, _, url, received in
            output.write("Receiver listening on \(url), storing in \(received)\nSending \(files.count) samples\n\n")
            let requests = try await SendSession(endpoint: url, allowAnyFile: true, settings: settings, output: output).requests(for: files).get()
            let result = try await SendSession.send(requests, settings: settings, concurrency: 2, json: json, output: output)
            let ok = result.tracker.states.values.filter { $0.outcome?.isSuccess == true }.count
            output.write("\nThe receiver stored \(ok) files in \(received).\n")
            if let interrupted = result.interruption { return SendExit.interrupted(by: interrupted) }
            let missing = Self.missing(result.tracker)
            guard missing.isEmpty else {
                output.complain(
                    "the demo did not work: \(missing.count) of \(files.count - 1) pictures did not arrive ("
                        + missing.map { "\($0.name): \($0.why)" }.joined(separator: "; ") + ")")
                return missing.contains { $0.failed } ? SendExit.transportError : SendExit.httpError
            }
            return SendExit.success
        }
    }

    /// The pictures that should have arrived and did not (every sample but the one the
    /// receiver refuses on purpose), each with what happened; `failed`: no answer came.
    static func missing(_ tracker: TransferTracker) -> [(name: String, why: String, failed: Bool)] {
        tracker.order.compactMap { id in
            guard let state = tracker.states[id], state.record.name != DemoSamples.refusedName else { return nil }
            switch state.record.outcome {
            case .answered(let status)? where (200..<300).contains(status): return nil
            case .answered(let status)?: return (state.record.name, "answered \(status)", false)
            case .failed(let failure)?: return (state.record.name, failure.description, true)
            case nil: return (state.record.name, "never finished", true)
            }
        }
    }

    /// The demo's folder when none is given: `uploadmon-demo-UID` in the temporary folder,
    /// this user's and no one else's (mode 0700), so samples made once are reused. When that
    /// name is anything else (another user's folder, a link planted there, a file), a fresh
    /// private folder serves instead: a predictable name in a folder everyone writes to is
    /// never trusted for what it is.
    public static func defaultRoot(temporary: String = NSTemporaryDirectory()) throws -> String {
        let base = temporary.hasSuffix("/") ? String(temporary.dropLast()) : temporary
        let own = base + "/uploadmon-demo-\(getuid())"
        if mkdir(own, 0o700) == 0 || errno == EEXIST, isOwnFolder(own), chmod(own, 0o700) == 0 { return own }
        var template = Array((base + "/uploadmon-demo-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw CommandFailure.failed("cannot make a folder for the demo in \(base): \(String(cString: strerror(errno))) (give one with --dir)")
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Whether `path` is a folder (not a link to one) that belongs to this user.
    static func isOwnFolder(_ path: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFDIR && info.st_uid == getuid()
    }

    /// A Foundation error in words: the system's reason where there is one.
    static func words(_ error: any Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
        if ns.domain == NSCocoaErrorDomain, ns.code == CocoaError.fileWriteNoPermission.rawValue { return "permission denied" }
        return ns.localizedDescription
    }
}
