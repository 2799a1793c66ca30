import Foundation
import UploadCore
import NIOConcurrencyHelpers
import Receiver

/// Runs the receiver in-process on 127.0.0.1 and an ephemeral port, storing into a fresh
/// temporary folder, for tests. `stop()` shuts it down; the folder is removed with `cleanUp()`.
public final class ReceiverHarness: Sendable {
    public let port: Int
    public let directory: String
    public let root: String
    private let running: RunningReceiver
    private let lines: NIOLockedValueBox<[RequestLogLine]>

    public let scheme: String
    public var url: String { "\(scheme)://127.0.0.1:\(port)/photo" }
    public var logLines: [RequestLogLine] { lines.withLockedValue { $0 } }
    /// Connections the receiver has admitted and not yet closed.
    public var openConnections: Int { running.openConnections }

    public static func start(
        path: String = "/photo", field: String = "photo", maxSize: Int64 = 1 << 30, imagesOnly: Bool = false,
        tls: ReceiverConfiguration.TLSFiles? = nil,
        limits: ReceiverConfiguration.Limits = .init(shutdownGrace: .milliseconds(500)),
        resumableMaxAge: Duration = .seconds(3600),
        resumableIdleAge: Duration = .seconds(3600),
        resumablePerClient: Int = 64,
        resumableMaxAppend: Int64? = nil,
        reusing earlier: String? = nil,
        clock: HouseClock = .system
    ) async throws -> ReceiverHarness {
        // `reusing`: the root of an earlier (stopped) harness, to start again on what it left.
        let root = earlier ?? TestFiles.makeTemporaryDirectory("receiver")
        let directory = root + "/uploads"
        let lines = NIOLockedValueBox<[RequestLogLine]>([])
        let configuration = ReceiverConfiguration(
            host: "127.0.0.1", port: 0, directory: directory, path: path, field: field, maxSize: maxSize, imagesOnly: imagesOnly,
            tls: tls, limits: limits, resumableMaxAge: resumableMaxAge, resumableIdleAge: resumableIdleAge,
            resumablePerClient: resumablePerClient, resumableMaxAppend: resumableMaxAppend
        )
        let running = try await RunningReceiver.start(
            configuration, clock: clock,
            log: { line in
                lines.withLockedValue { $0.append(line) }
            })
        return ReceiverHarness(running: running, directory: directory, root: root, lines: lines)
    }

    private init(running: RunningReceiver, directory: String, root: String, lines: NIOLockedValueBox<[RequestLogLine]>) {
        self.running = running
        port = running.port
        scheme = running.configuration.scheme
        self.directory = directory
        self.root = root
        self.lines = lines
    }

    /// Every name in the upload folder, temporary files included (the receiver's private folder
    /// of resumable uploads aside: it never holds a stored file).
    public func storedNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0 != ".uploadmon-resumable" }.sorted()
    }

    /// Shuts the server down gracefully.
    public func stop() async { await running.stop() }

    public func cleanUp() async {
        await stop()
        try? FileManager.default.removeItem(atPath: root)
    }
}
