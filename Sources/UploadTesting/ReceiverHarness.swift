import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import Logging
import Receiver
import ServiceLifecycle

/// Runs the receiver in-process on 127.0.0.1 and an ephemeral port, storing into a fresh
/// temporary folder, for tests. `stop()` shuts it down; the folder is removed with `cleanUp()`.
public final class ReceiverHarness: Sendable {
    public let port: Int
    public let directory: String
    public let root: String
    private let group: ServiceGroup
    private let task: Task<Void, Error>
    private let lines: NIOLockedValueBox<[RequestLogLine]>

    public let scheme: String
    public var url: String { "\(scheme)://127.0.0.1:\(port)/photo" }
    public var logLines: [RequestLogLine] { lines.withLockedValue { $0 } }

    public static func start(
        path: String = "/photo", field: String = "photo", maxSize: Int64 = 1 << 30, imagesOnly: Bool = false,
        tls: ReceiverConfiguration.TLSFiles? = nil,
        limits: ReceiverConfiguration.Limits = .init(shutdownGrace: .milliseconds(500))
    ) async throws -> ReceiverHarness {
        let root = TestFiles.makeTemporaryDirectory("receiver")
        let directory = root + "/uploads"
        let lines = NIOLockedValueBox<[RequestLogLine]>([])
        let ready = AsyncStream<Int>.makeStream()
        let configuration = ReceiverConfiguration(
            host: "127.0.0.1", port: 0, directory: directory, path: path, field: field, maxSize: maxSize, imagesOnly: imagesOnly,
            tls: tls, limits: limits
        )
        let app = try ReceiverServer.makeService(configuration, logLevel: .critical, log: { line in
            lines.withLockedValue { $0.append(line) }
        }, onRunning: { port in
            ready.continuation.yield(port)
        })
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "uploadmon.test")))
        let task = Task { try await group.run() }
        var iterator = ready.stream.makeAsyncIterator()
        guard let port = await iterator.next() else { throw HarnessError.didNotStart }
        return ReceiverHarness(port: port, scheme: configuration.scheme, directory: directory, root: root, group: group, task: task, lines: lines)
    }

    private init(
        port: Int, scheme: String, directory: String, root: String, group: ServiceGroup, task: Task<Void, Error>, lines: NIOLockedValueBox<[RequestLogLine]>
    ) {
        self.scheme = scheme
        self.group = group
        self.port = port
        self.directory = directory
        self.root = root
        self.task = task
        self.lines = lines
    }

    /// Every name in the upload folder, temporary files included.
    public func storedNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// Shuts the server down gracefully: cancelling its task instead can trip SwiftNIO's
    /// writer assertions while a connection is still open.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }

    public func cleanUp() async {
        await stop()
        try? FileManager.default.removeItem(atPath: root)
    }

    enum HarnessError: Error { case didNotStart }
}
