import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Receiver
import ServiceLifecycle
import UploadCommands
import UploadCore
import UploadReports

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Receive uploads: POST multipart/form-data with the file in --field, answered with {\"filename\": …}.",
        discussion: CommandHelp.serve
    )

    @Option(help: "Address to bind; loopback unless you say otherwise.") var host = ServeArguments.standard.host
    @Option(help: "Port to listen on (0 picks a free one).") var port = ServeArguments.standard.port
    @Option(help: "Folder the files are stored in.") var dir = ServeArguments.standard.directory
    @Option(help: "The upload endpoint's path.") var path = ServeArguments.standard.path
    @Option(help: "The form field that carries the file.") var field = ServeArguments.standard.field
    @Option(help: "Largest request accepted (e.g. 1GiB, 200MB, 5000000).") var maxSize = ServeArguments.standard.maxSize
    @Flag(help: "Refuse file parts whose content is not an image (415).") var imagesOnly = false
    @Option(help: ArgumentHelp("Serve HTTPS with this PEM certificate chain (needs --tls-key).", valueName: "file")) var tlsCert: String?
    @Option(help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "file")) var tlsKey: String?
    @Option(help: ArgumentHelp("Time a client has to send a complete request head.", valueName: "duration")) var headerTimeout = ServeArguments.standard
        .headerTimeout
    @Option(help: ArgumentHelp("Time a kept-alive connection may wait for its next request.", valueName: "duration")) var idleTimeout = ServeArguments.standard
        .idleTimeout
    @Option(help: ArgumentHelp("Time a request body may stop arriving before the upload is abandoned.", valueName: "duration")) var bodyTimeout = ServeArguments
        .standard.bodyTimeout
    @Option(help: "Connections open at once; more are answered 503 at once (lowered to what the descriptor limit allows).") var maxConnections = ServeArguments
        .standard.maxConnections
    @Option(help: ArgumentHelp("After SIGINT/SIGTERM, time uploads in progress may go on before they are cut.", valueName: "duration")) var shutdownGrace =
        ServeArguments.standard.shutdownGrace
    @Option(help: ArgumentHelp("How long a resumable upload is kept from its creation, complete or not.", valueName: "duration")) var resumeMaxAge =
        ServeArguments.standard.resumeMaxAge
    @Option(help: ArgumentHelp("How long an unfinished resumable upload is kept when no request touches it.", valueName: "duration")) var resumeIdle =
        ServeArguments.standard.resumeIdle
    @Option(help: "Unfinished resumable uploads one client may hold (its oldest idle one goes for a new one).") var resumePerClient = ServeArguments.standard
        .resumePerClient
    @Option(
        help: ArgumentHelp(
            "The most one resumable request may carry (max-append-size in Upload-Limit; larger ones are refused with 413 and sent again in parts by clients that follow the draft), e.g. 8MiB; default: no limit but --max-size.",
            valueName: "size")) var resumeMaxAppend: String?

    /// The options as `ServeArguments`, which checks them and makes the receiver's configuration.
    var arguments: ServeArguments {
        var a = ServeArguments()
        (a.host, a.port, a.directory, a.path, a.field, a.maxSize, a.imagesOnly) = (host, port, dir, path, field, maxSize, imagesOnly)
        (a.tlsCert, a.tlsKey, a.headerTimeout, a.idleTimeout, a.bodyTimeout) = (tlsCert, tlsKey, headerTimeout, idleTimeout, bodyTimeout)
        (a.maxConnections, a.shutdownGrace, a.resumeMaxAge, a.resumeIdle) = (maxConnections, shutdownGrace, resumeMaxAge, resumeIdle)
        (a.resumePerClient, a.resumeMaxAppend) = (resumePerClient, resumeMaxAppend)
        return a
    }

    func validate() throws { _ = try receiverConfiguration() }

    func receiverConfiguration() throws -> ReceiverConfiguration {
        do throws(RangeError) { return try arguments.configuration() } catch { throw ValidationError(error.message) }
    }

    func run() async throws {
        let configuration = try receiverConfiguration()
        let leftovers = try ReceiverServer.removeLeftovers(in: configuration.directory, now: Date())
        if !leftovers.isEmpty {
            Console.say("uploadmon serve: removed \(leftovers.count) partial file(s) an interrupted receiver left in \(configuration.directory)")
        }
        let receiver = try ReceiverServer.makeService(
            configuration,
            log: { line in
                Console.say(InvisibleCharacters.escaped("\(Timestamp.now()) \(line)"))
            },
            onRunning: { port in
                Console.say(
                    "uploadmon serve: listening on \(configuration.scheme)://\(configuration.host):\(port)\(configuration.path) (field '\(configuration.field)'), storing in \(configuration.directory)"
                )
            })
        let group = ServiceGroup(
            configuration: .init(
                services: [receiver], gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "uploadmon.serve")
            ))
        try await group.run()
        Console.say("uploadmon serve: stopped")
    }
}

enum Timestamp {
    static func now() -> String { LocalTime.format(Date(), .log) }
}
