import Receiver
import UploadCore

/// What `serve`'s options say, as typed: the receiver's configuration they make, or the first
/// reason they cannot (in the words the command prints). The command line only fills this in,
/// so every refusal is reached by tests in process.
public struct ServeArguments: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port = 3000
    public var directory = "./uploads"
    public var path = "/photo"
    public var field = "photo"
    public var maxSize = "1GiB"
    public var imagesOnly = false
    public var tlsCert: String?
    public var tlsKey: String?
    public var headerTimeout = "10s"
    public var idleTimeout = "60s"
    public var bodyTimeout = "30s"
    public var maxConnections = 1024
    public var shutdownGrace = "5s"
    public var resumeMaxAge = "24h"
    public var resumeIdle = "1h"
    public var resumePerClient = 64
    public var resumeMaxAppend: String?

    /// Every option at its default: the command's defaults are these.
    public static let standard = ServeArguments()

    public init() {}

    public func configuration() throws(RangeError) -> ReceiverConfiguration {
        func refuse(_ message: String) -> RangeError { RangeError(message: message) }
        if let refusal = ByteSize.refusal(maxSize, option: "--max-size", atLeast: 0, like: "1GiB, 200MB or 5000000") { throw refuse(refusal) }
        guard (0...65535).contains(port) else { throw refuse("--port must be between 0 and 65535") }
        guard !field.isEmpty else { throw refuse("--field cannot be empty") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw refuse("HTTPS needs both --tls-cert and --tls-key") }
        guard (1...1_000_000).contains(maxConnections) else { throw refuse("--max-connections must be between 1 and 1000000") }
        let limits = ReceiverConfiguration.Limits(
            headerTimeout: .seconds(try DurationRule.timeout.parse(headerTimeout, option: "--header-timeout")),
            idleTimeout: .seconds(try DurationRule.timeout.parse(idleTimeout, option: "--idle-timeout")),
            bodyStallTimeout: .seconds(try DurationRule.timeout.parse(bodyTimeout, option: "--body-timeout")),
            maxConnections: maxConnections,
            shutdownGrace: .seconds(try DurationRule.shutdownGrace.parse(shutdownGrace, option: "--shutdown-grace"))
        )
        let maxAge = try DurationRule.resumableAge.parse(resumeMaxAge, option: "--resume-max-age")
        let idle = try DurationRule.resumableAge.parse(resumeIdle, option: "--resume-idle")
        guard (1...4096).contains(resumePerClient) else { throw refuse("--resume-per-client must be between 1 and 4096") }
        if let resumeMaxAppend, let refusal = ByteSize.refusal(resumeMaxAppend, option: "--resume-max-append", atLeast: 1, like: "8MiB") {
            throw refuse(refusal)
        }
        return ReceiverConfiguration(
            host: host, port: port, directory: directory, path: path, field: field,
            maxSize: ByteSize.parse(maxSize) ?? 0, imagesOnly: imagesOnly,
            tls: tlsCert.flatMap { cert in tlsKey.map { ReceiverConfiguration.TLSFiles(certificateChain: cert, privateKey: $0) } },
            limits: limits, resumableMaxAge: .seconds(maxAge), resumableIdleAge: .seconds(idle),
            resumablePerClient: resumePerClient, resumableMaxAppend: resumeMaxAppend.flatMap(ByteSize.parse)
        )
    }
}
