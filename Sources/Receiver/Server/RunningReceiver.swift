import Logging
import ServiceLifecycle
import UploadCore

/// A receiver running inside this process (the demo's, the tests'): started on the port the
/// configuration names (0: a free one, read back once it listens) and stopped gracefully.
public struct RunningReceiver: Sendable {
    public let port: Int
    public let configuration: ReceiverConfiguration
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    private let service: ReceiverService

    /// How many connections are open right now (admitted, not yet closed).
    public var openConnections: Int { service.openConnections }

    /// The upload endpoint's URL on the loopback address it listens on.
    public var url: String { "\(configuration.scheme)://\(configuration.host):\(port)\(configuration.path)" }

    /// Starts a receiver and returns once it listens (with port 0, on the port it got).
    public static func start(
        _ configuration: ReceiverConfiguration, logLevel: Logger.Level = .critical, clock: HouseClock = .system,
        log: @escaping @Sendable (RequestLogLine) -> Void = { _ in }
    ) async throws -> RunningReceiver {
        let ready = AsyncStream<Int>.makeStream()
        let service = try ReceiverServer.makeService(
            configuration, logLevel: logLevel, log: log, clock: clock,
            onRunning: { port in
                ready.continuation.yield(port)
                ready.continuation.finish()
            })
        let group = ServiceGroup(configuration: .init(services: [service], logger: Logger(label: "uploadmon.receiver")))
        let task = Task {
            defer { ready.continuation.finish() }
            try await group.run()
        }
        var iterator = ready.stream.makeAsyncIterator()
        guard let port = await iterator.next() else {
            // It ended before it listened: its error says why.
            try await task.value
            throw ReceiverStartError.didNotListen
        }
        return RunningReceiver(port: port, configuration: configuration, group: group, task: task, service: service)
    }

    /// Stops accepting, lets uploads in progress finish within the grace period, and returns
    /// when it has stopped. (Cancelling the task instead can trip SwiftNIO's writer assertions
    /// while a connection is still open.)
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }
}

/// The receiver stopped before it listened (its reason is in the error its service threw).
public enum ReceiverStartError: Error, CustomStringConvertible {
    case didNotListen
    public var description: String { "the receiver stopped before it listened" }
}
