import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Receiver
import ServiceLifecycle
import UploadCore
import UploadReports

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Receive uploads: POST multipart/form-data with the file in --field, answered with {\"filename\": …}.",
        discussion: """
        Files are streamed to a temporary name in --dir and renamed when complete; an existing name \
        gets a numbered suffix, and an aborted upload leaves nothing behind. Errors are answered as \
        JSON {"error": …}: 400 malformed or missing field, 404 other paths, 405 other methods, \
        413 over --max-size, 415 not multipart/form-data (or not an image with --images-only). \
        One line per request is printed. SIGINT or SIGTERM stops accepting at once, lets uploads in \
        progress finish within --shutdown-grace, then abandons the rest (their partial files removed).

        Uploads are resumable (draft-ietf-httpbis-resumable-upload, interop versions 6, 8, 9 and 10): a \
        POST with Upload-Complete creates an upload resource under /resumable/ (announced with 104 \
        to clients that name an interop version); HEAD gives its offset, PATCH appends, DELETE \
        cancels, OPTIONS says the limits. Partial uploads are kept in --dir/.uploadmon-resumable \
        (never served, never stored as a file until complete), survive a restart, and are removed \
        --resume-max-age after their creation, or --resume-idle after a request last touched them. \
        One client (an IPv4 address, an IPv6 /64) holds at most --resume-per-client unfinished \
        uploads and all clients 4096: a new one then replaces the least recently active one of \
        that client (of the client holding the most, at the total). The complete body is stored \
        as a one-shot upload is; a refused one keeps nothing.

        Examples:
          uploadmon serve
          uploadmon serve --port 8080 --dir /srv/photos --max-size 200MB --images-only
          uploadmon serve --tls-cert cert.pem --tls-key key.pem
            (clients: uploadmon send … --cacert ca.pem)
          curl -F photo=@cat.jpg http://127.0.0.1:3000/photo
        """
    )

    @Option(help: "Address to bind; loopback unless you say otherwise.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0 picks a free one).") var port = 3000
    @Option(help: "Folder the files are stored in.") var dir = "./uploads"
    @Option(help: "The upload endpoint's path.") var path = "/photo"
    @Option(help: "The form field that carries the file.") var field = "photo"
    @Option(help: "Largest request accepted (e.g. 1GiB, 200MB, 5000000).") var maxSize = "1GiB"
    @Flag(help: "Refuse file parts whose content is not an image (415).") var imagesOnly = false
    @Option(help: ArgumentHelp("Serve HTTPS with this PEM certificate chain (needs --tls-key).", valueName: "file")) var tlsCert: String?
    @Option(help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "file")) var tlsKey: String?
    @Option(help: ArgumentHelp("Time a client has to send a complete request head.", valueName: "duration")) var headerTimeout = "10s"
    @Option(help: ArgumentHelp("Time a kept-alive connection may wait for its next request.", valueName: "duration")) var idleTimeout = "60s"
    @Option(help: ArgumentHelp("Time a request body may stop arriving before the upload is abandoned.", valueName: "duration")) var bodyTimeout = "30s"
    @Option(help: "Connections open at once; more are answered 503 at once (lowered to what the descriptor limit allows).") var maxConnections = 1024
    @Option(help: ArgumentHelp("After SIGINT/SIGTERM, time uploads in progress may go on before they are cut.", valueName: "duration")) var shutdownGrace = "5s"
    @Option(help: ArgumentHelp("How long a resumable upload is kept from its creation, complete or not.", valueName: "duration")) var resumeMaxAge = "24h"
    @Option(help: ArgumentHelp("How long an unfinished resumable upload is kept when no request touches it.", valueName: "duration")) var resumeIdle = "1h"
    @Option(help: "Unfinished resumable uploads one client may hold (its oldest idle one goes for a new one).") var resumePerClient = 64
    @Option(help: ArgumentHelp("The most one resumable request may carry (max-append-size in Upload-Limit; larger ones are refused with 413 and sent again in parts by clients that follow the draft), e.g. 8MiB; default: no limit but --max-size.", valueName: "size")) var resumeMaxAppend: String?


    func validate() throws {
        if let refusal = ByteSize.refusal(maxSize, option: "--max-size", atLeast: 0, like: "1GiB, 200MB or 5000000") { throw ValidationError(refusal) }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard !field.isEmpty else { throw ValidationError("--field cannot be empty") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("HTTPS needs both --tls-cert and --tls-key") }
        guard (1...1_000_000).contains(maxConnections) else { throw ValidationError("--max-connections must be between 1 and 1000000") }
        _ = try limits()
        _ = try resumableAge()
        _ = try resumableIdle()
        guard (1...4096).contains(resumePerClient) else { throw ValidationError("--resume-per-client must be between 1 and 4096") }
        if let resumeMaxAppend, let refusal = ByteSize.refusal(resumeMaxAppend, option: "--resume-max-append", atLeast: 1, like: "8MiB") {
            throw ValidationError(refusal)
        }
    }

    func resumableIdle() throws -> Duration {
        do {
            return .seconds(try DurationRule.resumableAge.parse(resumeIdle, option: "--resume-idle"))
        } catch {
            throw ValidationError(error.message)
        }
    }

    func resumableAge() throws -> Duration {
        do {
            return .seconds(try DurationRule.resumableAge.parse(resumeMaxAge, option: "--resume-max-age"))
        } catch {
            throw ValidationError(error.message)
        }
    }

    func limits() throws -> ReceiverConfiguration.Limits {
        do {
            return ReceiverConfiguration.Limits(
                headerTimeout: .seconds(try DurationRule.timeout.parse(headerTimeout, option: "--header-timeout")),
                idleTimeout: .seconds(try DurationRule.timeout.parse(idleTimeout, option: "--idle-timeout")),
                bodyStallTimeout: .seconds(try DurationRule.timeout.parse(bodyTimeout, option: "--body-timeout")),
                maxConnections: maxConnections,
                shutdownGrace: .seconds(try DurationRule.shutdownGrace.parse(shutdownGrace, option: "--shutdown-grace"))
            )
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() async throws {
        let configuration = ReceiverConfiguration(
            host: host, port: port, directory: dir, path: path, field: field,
            maxSize: ByteSize.parse(maxSize)!, imagesOnly: imagesOnly,
            tls: tlsCert.flatMap { cert in tlsKey.map { ReceiverConfiguration.TLSFiles(certificateChain: cert, privateKey: $0) } },
            limits: try limits(), resumableMaxAge: try resumableAge(), resumableIdleAge: try resumableIdle(),
            resumablePerClient: resumePerClient,
            resumableMaxAppend: resumeMaxAppend.flatMap(ByteSize.parse)
        )
        let leftovers = try ReceiverServer.removeLeftovers(in: configuration.directory)
        if !leftovers.isEmpty {
            Console.say("uploadmon serve: removed \(leftovers.count) partial file(s) an interrupted receiver left in \(configuration.directory)")
        }
        let receiver = try ReceiverServer.makeService(configuration, log: { line in
            Console.say(InvisibleCharacters.escaped("\(Timestamp.now()) \(line)"))
        }, onRunning: { port in
            Console.say("uploadmon serve: listening on \(configuration.scheme)://\(configuration.host):\(port)\(configuration.path) (field '\(configuration.field)'), storing in \(configuration.directory)")
        })
        let group = ServiceGroup(configuration: .init(
            services: [receiver], gracefulShutdownSignals: [.sigterm, .sigint], logger: Logger(label: "uploadmon.serve")
        ))
        try await group.run()
        Console.say("uploadmon serve: stopped")
    }
}

enum Timestamp {
    static func now() -> String { LocalTime.format(Date(), .log) }
}
