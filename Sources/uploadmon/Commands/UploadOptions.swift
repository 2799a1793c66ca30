import ArgumentParser
import Foundation
import NIOCore
import UploadClient
import UploadCore

/// The upload options shared by every command that sends.
struct UploadOptions: ParsableArguments {
    @Option(name: .long, help: "The endpoint URL (http or https), e.g. http://127.0.0.1:3000/photo.")
    var to: String

    @Option(name: .long, help: "The form field that carries the file.")
    var field: String = "photo"

    @Option(name: [.customShort("F"), .customLong("form")], help: ArgumentHelp("A text field sent before the file (repeatable, kept in order).", valueName: "name=value"))
    var formFields: [String] = []

    @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("A request header (repeatable). Values never appear in output.", valueName: "Name: value"))
    var headers: [String] = []

    @Option(name: .long, help: "How many uploads run at once.")
    var concurrency: Int = Self.defaultConcurrency

    static let defaultConcurrency = 2
    /// Said when --concurrency is given to a command whose uploads the agent runs.
    static let agentConcurrencyNote = "--concurrency does not apply here: the background agent runs the uploads, as many at once as its settings say (`uploadmon agent config --concurrency N`)"

    @Option(name: .long, help: "Retry connect failures, lost connections and 408/429/502/503/504 up to N times, with backoff.")
    var retries: Int = 0

    @Flag(name: .long, help: "Send files that are not images too.")
    var anyFile = false

    @Option(name: .long, help: ArgumentHelp("Trust this PEM CA bundle instead of the system store.", valueName: "file"))
    var cacert: String?

    @Flag(name: .long, help: "Do not verify the server's TLS certificate.")
    var insecure = false

    @Option(name: .long, help: ArgumentHelp("Send at most this many bytes per second per upload (e.g. 500k, 20MB).", valueName: "rate"))
    var limitRate: String?

    // Durations as every command takes them (`serve` too): `10`, `10s`, `1m30s`, `0.5s`.
    @Option(name: .long, help: ArgumentHelp("Time to establish a connection (e.g. 10s, 1m).", valueName: "duration"))
    var connectTimeout = "10s"

    @Option(name: .long, help: ArgumentHelp("Fail when nothing could be sent for this long.", valueName: "duration"))
    var stallTimeout = "30s"

    @Option(name: .long, help: ArgumentHelp("Fail when no answer comes this long after the upload was sent.", valueName: "duration"))
    var answerTimeout = "60s"

    @Flag(name: .long, help: "Always send from the start: do not continue an interrupted upload where a server that resumes uploads has it.")
    var noResume = false

    func validate() throws {
        do throws(UploadInputError) {
            _ = try EndpointURL.validate(to)
            _ = try parsedFormFields()
            _ = try parsedHeaders()
        } catch {
            throw ValidationError(error.description)
        }
        if let limitRate, (ByteSize.parse(limitRate) ?? 0) < 1024 {
            throw ValidationError("--limit-rate '\(limitRate)' must be a rate of at least 1k, like 500k or 20MB")
        }
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        guard retries >= 0 else { throw ValidationError("--retries cannot be negative") }
        do throws(RangeError) {
            for (text, option) in [(connectTimeout, "--connect-timeout"), (stallTimeout, "--stall-timeout"), (answerTimeout, "--answer-timeout")] {
                _ = try DurationRule.timeout.parse(text, option: option)
            }
            try transportSettings.validate()
        } catch {
            throw ValidationError(error.message)
        }
    }

    func parsedFormFields() throws(UploadInputError) -> [FormField] {
        var fields: [FormField] = []
        for argument in formFields { fields.append(try FormField(parsing: argument)) }
        return fields
    }

    func parsedHeaders() throws(UploadInputError) -> [RequestHeader] {
        var parsed: [RequestHeader] = []
        for argument in headers { parsed.append(try RequestHeader(parsing: argument)) }
        return parsed
    }

    var transportSettings: TransportSettings {
        TransportSettings(
            caCertificatePath: cacert, insecure: insecure, rateLimit: limitRate.flatMap(ByteSize.parse),
            connectTimeout: DurationText.parse(connectTimeout) ?? .nan, stallTimeout: DurationText.parse(stallTimeout) ?? .nan,
            answerTimeout: DurationText.parse(answerTimeout) ?? .nan, retries: retries,
            resume: !noResume
        )
    }

    func makeTransport() throws -> HTTPUploadTransport {
        try HTTPUploadTransport(settings: transportSettings)
    }

    var retryPolicy: RetryPolicy { RetryPolicy(maxRetries: retries) }
}
