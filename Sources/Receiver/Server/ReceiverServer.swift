import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import UploadCore

/// `uploadmon serve`: the Hummingbird application that receives uploads.
public enum ReceiverServer {
    /// How long a partial file must sit untouched before a starting receiver removes it.
    public static let leftoverAge: Double = 3600

    /// Removes partial files that a receiver killed mid-upload left in `directory` (untouched for
    /// an hour); returns their names. `serve` calls it when it starts.
    public static func removeLeftovers(in directory: String, untouchedFor age: Double = leftoverAge, now: Date) throws -> [String] {
        try UploadStore(directory: directory).removeLeftovers(untouchedFor: age, now: now)
    }

    /// Builds the receiver as a service to run in a `ServiceGroup`. `onRunning` gets the bound
    /// port (useful with port 0); `log` gets one line per request; `logLevel` filters the
    /// server's own diagnostics. On graceful shutdown it stops accepting at once, lets uploads
    /// in progress go on for the configured grace period, then cuts the rest.
    public static func makeService(
        _ configuration: ReceiverConfiguration,
        logger: Logger = Logger(label: "uploadmon.serve"),
        logLevel: Logger.Level = .warning,
        log: @escaping @Sendable (RequestLogLine) -> Void,
        clock: HouseClock = .system,
        onRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) throws -> ReceiverService {
        let endpoint = try makeEndpoint(
            configuration,
            connections: ConnectionRegistry(
                limit: ConnectionBudget.cap(requested: configuration.limits.maxConnections, descriptors: ConnectionBudget.raiseDescriptorLimit())
            ), log: log, clock: clock)
        let (connections, resumable, idempotency) = (endpoint.connections, endpoint.resumable, endpoint.idempotency)
        var quiet = logger
        quiet.logLevel = logLevel
        let http1 = HTTP1Channel.Configuration(additionalChannelHandlers: [
            ReceiveBufferSizing(),
            UploadGate(
                configuration: configuration, registry: connections, resumable: resumable, idempotency: idempotency, log: log),
        ])
        var server = HTTPServerBuilder.http1(configuration: http1)
        if let tls = configuration.tls {
            server = try .tls(.http1(configuration: http1), tlsConfiguration: try Self.tlsConfiguration(tls))
        }
        let application = Application(
            responder: endpoint,
            server: server,
            // A deep accept queue: in a flood, connections are better accepted and answered 503
            // at once than dropped at the SYN and left to retransmit for seconds.
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "uploadmon", backlog: 4096),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? configuration.port) },
            logger: quiet
        )
        return ReceiverService(
            application: application, connections: connections, resumable: resumable, grace: configuration.limits.shutdownGrace
        )
    }

    /// The endpoint with the stores it shares with every connection's gate (`connections`,
    /// `resumable`, `idempotency`), over `configuration.directory`.
    static func makeEndpoint(
        _ configuration: ReceiverConfiguration, connections: ConnectionRegistry, log: @escaping @Sendable (RequestLogLine) -> Void, clock: HouseClock
    ) throws -> UploadEndpoint {
        let store = try UploadStore(directory: configuration.directory)
        let resumable = ResumableStore(
            directory: configuration.directory, maxAge: configuration.resumableMaxAge,
            idleAge: configuration.resumableIdleAge, quota: configuration.resumableQuota, clock: clock)
        let idempotency = IdempotencyKeys(maxAge: configuration.resumableMaxAge)
        return UploadEndpoint(
            configuration: configuration, store: store, resumable: resumable, connections: connections, idempotency: idempotency, log: log)
    }

    /// Reads the PEM files, with errors that name the file and what is wrong with it.
    static func tlsConfiguration(_ files: ReceiverConfiguration.TLSFiles) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(files.certificateChain)
        } catch {
            throw ReceiverTLSError(file: files.certificateChain, reason: "not a readable PEM certificate (\(error))")
        }
        guard !chain.isEmpty else { throw ReceiverTLSError(file: files.certificateChain, reason: "holds no certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: files.privateKey, format: .pem)
        } catch {
            throw ReceiverTLSError(file: files.privateKey, reason: "not a readable PEM private key (\(error))")
        }
        return .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}

/// A certificate or key file that cannot be used, and why.
public struct ReceiverTLSError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let reason: String
    public var description: String { "\(file): \(reason)" }
}

/// `uploadmon serve` as a service: the Hummingbird application plus the stop that does not
/// wait for a stalled client.
public struct ReceiverService: Service {
    let application: any Service
    let connections: ConnectionRegistry
    let resumable: ResumableStore
    let grace: Duration

    /// How many connections are open right now (admitted, not yet closed).
    public var openConnections: Int { connections.openCount }

    /// Serves until the service group shuts down gracefully; uploads past the grace period are cut.
    public func run() async throws {
        // Resumable uploads past their age are removed while the receiver runs, not only at its start.
        let sweeper = Task { [resumable] in
            let every = min(max(resumable.maxAge / 10, .seconds(1)), .seconds(60))
            while !Task.isCancelled {
                try? await Task.sleep(for: every)
                resumable.sweep(now: resumable.clock.wall())
            }
        }
        defer { sweeper.cancel() }
        try await withGracefulShutdownHandler {
            try await application.run()
        } onGracefulShutdown: {
            connections.stop(after: grace)
        }
    }
}
