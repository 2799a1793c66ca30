import ArgumentParser
import Foundation
import NIOCore
import UploadClient
import UploadCommands
import UploadCore

extension UploadProtocol: ExpressibleByArgument {}

/// The upload options shared by every command that sends.
struct UploadOptions: ParsableArguments {
    @Option(
        name: .long,
        help:
            "The endpoint URL (http or https), e.g. http://127.0.0.1:3000/photo; s3://bucket/prefix/ for S3; @LIST (send only): each file to its own URL, from a list of `FILE URL` lines, or of URLs paired in order with the files given."
    )
    var to: String

    /// `--to @LIST`: the list's path.
    var destinationList: String? { choices.destinationList }

    /// Said by the commands that need one `--to` URL.
    func refuseList(_ command: String) throws {
        if destinationList != nil { throw ValidationError(DestinationList.oneURLNeeded(by: command)) }
    }

    @Option(name: .long, help: "The form field that carries the file.")
    var field: String = "photo"

    @Option(
        name: [.customShort("F"), .customLong("form")],
        help: ArgumentHelp("A text field sent before the file (repeatable, kept in order).", valueName: "name=value"))
    var formFields: [String] = []

    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp(
            "A request header (repeatable), or @FILE for one a line (@- reads them from standard input): a secret in a file is not in the process's arguments, which `ps` shows everyone. Values never appear in output.",
            valueName: "Name: value|@FILE"))
    var headers: [String] = []

    @Flag(name: .long, help: "Take the login and password for the endpoint's host from ~/.netrc (curl's rules), instead of any in the URL.")
    var netrc = false

    @Option(name: .long, help: ArgumentHelp("As --netrc, from this file.", valueName: "file"))
    var netrcFile: String?

    @Flag(name: .long, help: "As --netrc, but only when the URL names no password and the file exists.")
    var netrcOptional = false

    @Option(name: .long, help: "How many uploads run at once.")
    var concurrency: Int = Self.defaultConcurrency

    static let defaultConcurrency = UploadChoices.standard.concurrency
    /// Said when --concurrency is given to a command whose uploads the agent runs.
    static let agentConcurrencyNote = SendArguments.agentConcurrencyNote

    @Option(
        name: [.long, .customLong("retry")],
        help: "Retry connect failures, lost connections and 408/429/500/502/503/504 up to N times, with backoff (--retry, as curl spells it, too).")
    var retries: Int = UploadChoices.standard.retries

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
    var connectTimeout = UploadChoices.standard.connectTimeout

    @Option(name: .long, help: ArgumentHelp("Fail when nothing could be sent for this long.", valueName: "duration"))
    var stallTimeout = UploadChoices.standard.stallTimeout

    @Option(name: .long, help: ArgumentHelp("Fail when no answer comes this long after the upload was sent.", valueName: "duration"))
    var answerTimeout = UploadChoices.standard.answerTimeout

    @Flag(name: .long, help: "Always send from the start: do not continue an interrupted upload where a server that resumes uploads has it.")
    var noResume = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Go through this proxy: http://[user:password@]host:port (CONNECT for every upload), socks5h://[user:password@]host:port (the name resolved at the proxy) or socks5://… (resolved here); an empty one: go direct. Default: http_proxy, https_proxy/HTTPS_PROXY, all_proxy/ALL_PROXY as curl reads them.",
            valueName: "url"))
    var proxy: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Hosts to reach directly, not through the proxy (each request by its own host, a redirect too): comma-separated names (with their subdomains), addresses, IPv4 CIDR blocks, or * (default: no_proxy/NO_PROXY).",
            valueName: "list"))
    var noproxy: String?

    @Flag(
        name: .long,
        help:
            "Do not prove uploads arrived intact: send no Content-Digest (the SHA-256 of what is sent) and do not ask the server for the digest of what it received (Want-Repr-Digest, RFC 9530)."
    )
    var noDigest = false

    @Flag(
        name: .long,
        help:
            "Send photos without where they were taken: GPS in EXIF and location in XMP removed from JPEG, PNG, WebP, HEIC and AVIF, nothing else changed (no re-encoding); other formats are refused."
    )
    var stripLocation = false

    @OptionGroup var conversion: ConversionOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The upload protocol: auto (what the endpoint's origin speaks, learnt from one OPTIONS and remembered: tus 1.0.0, the resumable-upload draft, or a plain POST), multipart (a multipart/form-data POST, resumed by the draft where offered) or tus (tus 1.0.0: the file's raw bytes, its name and type in Upload-Metadata).",
            valueName: "auto|multipart|tus|put"))
    var `protocol`: UploadProtocol = .auto

    @Flag(
        name: .long,
        help:
            "Send each file's raw bytes in a PUT, as curl -T does (presigned S3/R2/GCS URLs, WebDAV): to the URL, or to the URL and the file's name when it ends in /. Content-Type is the file's type unless -H gives one (a presigned URL may have signed it). The same as --protocol put."
    )
    var put = false

    @Flag(name: .long, help: "With --put: make the folders missing on the way to the file (WebDAV MKCOL, as curl's --ftp-create-dirs), then send it again.")
    var createDirs = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "tus: send at most this many bytes per PATCH (e.g. 5MiB, 6MiB); default: the whole rest in one, as the protocol recommends, or chunks sized from the link for a server that keeps nothing of a cut request (standard input: 8 MiB, held in memory until the server has it). Chunks are this size but the last, so 5MiB meets Cloudflare Stream's rule (at least 5 MiB, multiples of 256 KiB) and 6MiB Supabase's (exactly 6 MiB).",
            valueName: "size"))
    var chunkSize: String?

    @Flag(
        name: [.customShort("L"), .long],
        help:
            "Follow a 307/308 to another origin (scheme, host, port) with the file, as curl -L does; without it the upload ends saying where the server wanted the file to go. Headers and logins stay with the endpoint's origin either way."
    )
    var location = false

    /// The options as `UploadChoices`, which checks them and makes the transport settings.
    var choices: UploadChoices {
        var c = UploadChoices(to: to)
        (c.field, c.formFields, c.headers, c.netrc, c.netrcFile, c.netrcOptional, c.anyFile) = (
            field, formFields, headers, netrc, netrcFile, netrcOptional, anyFile
        )
        (c.concurrency, c.retries, c.caCertificate, c.insecure) = (concurrency, retries, cacert, insecure)
        (c.limitRate, c.connectTimeout, c.stallTimeout, c.answerTimeout, c.noResume) = (limitRate, connectTimeout, stallTimeout, answerTimeout, noResume)
        (c.proxy, c.noProxy, c.noDigest, c.stripLocation, c.protocol, c.put, c.createDirs, c.chunkSize) = (
            proxy, noproxy, noDigest, stripLocation, `protocol`, put, createDirs, chunkSize
        )
        c.location = location
        conversion.apply(to: &c)
        return c
    }

    func validate() throws {
        if let refusal = choices.commandLineRefusal() { throw ValidationError(refusal) }
    }

    func parsedFormFields() throws(UploadInputError) -> [FormField] { try choices.parsedFormFields() }

    func parsedHeaders() throws(UploadInputError) -> [RequestHeader] { try choices.parsedHeaders() }

    var endpoint: String { choices.endpoint }

    var transportSettings: TransportSettings { choices.transportSettings }
}
