import PhotoRewrite
import Foundation
import NIOPosix
import UploadAgent
import UploadClient
import UploadCore
import UploadJournal
import UploadReports

/// `uploadmon send`, past its command line: the files checked (all refusals said before any
/// byte goes), those already sent left out (`--skip-sent`), handed to the agent
/// (`--background`) or sent here with the reporter the output calls for, and the exit status
/// the outcomes make (see `SendExit`).
public struct SendSession: Sendable {
    public var endpoint: String
    public var field: String
    public var formFields: [FormField]
    public var headers: [RequestHeader]
    public var allowAnyFile: Bool
    public var settings: TransportSettings
    public var concurrency: Int
    /// `--name`: the one file's name as sent.
    public var name: String?
    /// `--upload-url`: a tus upload URL another service handed out.
    public var uploadURL: String?
    public var json: Bool
    public var skipSent: Bool
    public var background: Bool
    /// `--to @LIST`: each file's own URL (`endpoint` is then the list's first).
    public var list: DestinationList?
    /// `--strict`: nothing is sent when a file is refused.
    public var strict = false
    /// `--dry-run`: what would go where is said, and nothing is sent.
    public var dryRun = false
    public var output: CommandOutput
    /// Where the journal (what was sent, by content) and the agent's socket are.
    public var paths: StatePaths
    /// What the uploads' times are read from.
    public var clock: HouseClock = .system

    public init(
        endpoint: String, field: String = "photo", formFields: [FormField] = [], headers: [RequestHeader] = [],
        allowAnyFile: Bool = false, settings: TransportSettings = TransportSettings(), concurrency: Int = 2,
        name: String? = nil, uploadURL: String? = nil, json: Bool = false, skipSent: Bool = false, background: Bool = false,
        output: CommandOutput = .standard, paths: StatePaths = .resolve()
    ) {
        self.paths = paths
        self.endpoint = endpoint
        self.field = field
        self.formFields = formFields
        self.headers = headers
        self.allowAnyFile = allowAnyFile
        self.settings = settings
        self.concurrency = concurrency
        self.name = name
        self.uploadURL = uploadURL
        self.json = json
        self.skipSent = skipSent
        self.background = background
        self.output = output
    }

    /// Why these files cannot go together, or nil: checked on the arguments and again with the
    /// `--files-from` list's.
    public static func refusal(files: [String], name: String?, background: Bool) -> String? {
        if name != nil && files.count > 1 { return "--name applies to a single file; \(files.count) were given" }
        if files.filter({ $0 == "-" }).count > 1 { return "standard input ('-') can be sent only once" }
        if background && files.contains("-") {
            return "standard input ('-') cannot be sent in the background: the agent cannot read this command's input after it exits"
        }
        return nil
    }

    /// Each file a request with its size; or every reason a file is refused. `urls`: each
    /// file's own (a destination list's), else every one goes to `endpoint`. The files are
    /// read (their heads, to check them) off this task, each within the preparation limit: a
    /// file whose read never returns (a network file system that stopped answering) is
    /// refused with the reason rather than holding the command.
    public func requests(for paths: [String], urls: [String]? = nil) async -> Result<[(UploadRequest, Int64?)], Refusals> {
        let checked = await checked(paths, urls: urls)
        return checked.refused.isEmpty ? .success(checked.accepted) : .failure(Refusals(reasons: checked.refused))
    }

    /// Each file checked: the requests of those that can be sent, and the reason of each that
    /// cannot, in the files' order.
    public func checked(_ paths: [String], urls: [String]? = nil) async -> (accepted: [(UploadRequest, Int64?)], refused: [String]) {
        var built: [Result<UploadRequest, Refusal>] = []
        for (index, path) in paths.enumerated() {
            do throws(UploadInputError) {
                var request = try UploadRequest.forPath(
                    background ? Self.absolute(path) : path, url: urls?[index] ?? endpoint, field: field, requestedName: name,
                    formFields: formFields, headers: headers, allowAnyFile: allowAnyFile)
                request.uploadURL = uploadURL
                built.append(.success(request))
            } catch {
                built.append(.failure(Refusal(reason: error.description)))
            }
        }
        let strip = settings.stripLocation
        let checked = await PreparationThreads.shared.each(
            built, limit: PreparationThreads.defaultLimit, path: { (try? $0.get().source.path) ?? "" },
            check: { item -> Result<(UploadRequest, Int64?), Refusal> in
                guard case .success(let request) = item else { return item.map { ($0, nil) } }
                do throws(UploadInputError) {
                    let size = try UploadPreflight.check(request)
                    if strip, let refusal = Self.cannotStripLocation(request.source.path) { return .failure(Refusal(reason: refusal)) }
                    return .success((request, size))
                } catch {
                    return .failure(Refusal(reason: error.description))
                }
            },
            stalled: { _, why in .failure(Refusal(reason: why)) })
        var requests: [(UploadRequest, Int64?)] = []
        var refusals: [String] = []
        for result in checked {
            switch result {
            case .success(let request): requests.append(request)
            case .failure(let refusal): refusals.append(refusal.reason)
            }
        }
        return (requests, refusals)
    }

    /// Why one file is refused.
    struct Refusal: Error {
        let reason: String
    }

    /// Every file `send` refuses before sending anything, each with its reason.
    public struct Refusals: Error, Equatable {
        public var reasons: [String]
    }

    /// Sends `files` (or hands them to the agent) and returns the exit status.
    public func run(_ files: [String]) async throws -> Int32 {
        var files = files
        var urls: [String]?
        if let list {
            do throws(CommandFailure) {
                let pairs = try list.destinations(for: files)
                (files, urls) = (pairs.map(\.file), pairs.map(\.url))
            } catch {
                return refuse([error.message])
            }
            if let refusal = Self.refusal(files: files, name: name, background: background) { return refuse([refusal]) }
        }
        let checked = await self.checked(files, urls: urls)
        // As curl and rclone: the files that can go, go; each refused one is said, and the
        // status says it at the end. `--strict`: none go when one is refused.
        if !checked.refused.isEmpty, strict || checked.accepted.isEmpty { return refuse(checked.refused) }
        for reason in checked.refused {
            if json { output.write(Self.refusedLine(reason) + "\n") } else { output.complain("uploadmon: \(reason); not sent") }
        }
        let status = try await send(checked.accepted)
        guard !checked.refused.isEmpty else { return status }
        if !json {
            output.complain(
                "uploadmon: \(checked.refused.count) file\(checked.refused.count == 1 ? " was" : "s were") refused and not sent (said above)\(strictHint)")
        }
        return Self.withRefusals(status)
    }

    /// Said after refused files: how to send none when one is refused.
    var strictHint: String { "; --strict sends nothing when a file is refused" }

    /// The status of a send some of whose files were refused: a refused file counts as a file
    /// error (2), unless the uploads said worse (an interruption).
    public static func withRefusals(_ status: Int32) -> Int32 {
        [SendExit.success, SendExit.httpError, SendExit.answerCut].contains(status) ? SendExit.transportError : status
    }

    /// A refused file as `--json` says it.
    static func refusedLine(_ reason: String) -> String {
        var line = JSONLine()
        line["event"] = .string("refused")
        line["reason"] = .string(reason)
        return InvisibleCharacters.jsonEscaped(line.text)
    }

    /// The checked requests sent (or handed to the agent, or listed for `--dry-run`); the status.
    func send(_ accepted: [(UploadRequest, Int64?)]) async throws -> Int32 {
        var requests = accepted
        if dryRun { return plan(requests) }
        if skipSent {
            let before = requests.count
            requests = await withoutSent(requests, ledger: SentLedger.open(paths: paths))
            if requests.isEmpty {
                if !json { output.write("nothing to send: all \(before) file(s) were already sent to \(RedactedURL.display(endpoint))\n") }
                return SendExit.success
            }
        }
        if background {
            return try BackgroundSend(settings: settings, json: json, output: output, paths: paths).run(requests.map(\.0))
        }
        let result: SendResult
        do {
            // The file's own digest ("already sent") is worked out as it is sent only for `--json`,
            // which reports it; otherwise the journal keeps what was sent by path and stamps, and
            // it is hashed when "already sent" is asked (`--skip-sent`, the monitor).
            result = try await Self.send(
                requests, settings: settings, concurrency: concurrency, json: json, output: output,
                contentIdentity: json, clock: clock)
        } catch let error as UploadInputError {
            // A setting that cannot work (an unreadable --cacert): nothing was sent.
            output.complain("uploadmon: \(error.description); nothing was sent")
            return SendExit.usage
        }
        // What went, by content, for a later --skip-sent (the agent remembers its own); not
        // for a list's URLs, each a destination of its own. Appended to the journal's log: the
        // journal itself is not opened for it (a third of a small upload's whole process).
        if list == nil { SentLedger.rememberInLog(result.tracker, endpoint: endpoint, at: clock.wall(), paths: paths) }
        // A photo refused for its format: the flag that would have sent it.
        if !json, let hint = FormatRefusal.hint(result.tracker, conversion: settings.conversion) { output.write(hint + "\n") }
        if let signal = result.interruption { return SendExit.interrupted(by: signal) }
        return Self.exitStatus(for: result.tracker)
    }

    /// `--dry-run`: each file, its size and where and how it would go, one line each (a
    /// `planned` object with `--json`); nothing is asked of the server and nothing sent.
    func plan(_ requests: [(UploadRequest, Int64?)]) -> Int32 {
        let how: String
        switch settings.uploadProtocol {
        case .auto: how = "the protocol the server speaks (tus, the resumable draft, or a multipart POST), asked when sending"
        case .multipart: how = "a multipart/form-data POST"
        case .tus: how = "tus 1.0.0"
        case .put: how = "a PUT of the file's bytes"
        }
        var total: Int64 = 0
        for (request, size) in requests {
            total += size ?? 0
            let destination = RedactedURL.display(request.url)
            let sentName = settings.conversion.map { $0.sentName(request.uploadName) } ?? request.uploadName
            if json {
                var line = JSONLine()
                line["event"] = .string("planned")
                line["file"] = .string(request.source.path)
                if let size { line["bytes"] = .number(Double(size)) }
                line["to"] = .string(destination)
                line["name"] = .string(sentName)
                line["protocol"] = .string(S3Location.isS3(request.url) ? "s3" : settings.uploadProtocol.rawValue)
                if settings.uploadProtocol == .multipart || settings.uploadProtocol == .auto { line["field"] = .string(request.field) }
                output.write(InvisibleCharacters.jsonEscaped(line.text) + "\n")
            } else {
                let sizeText = size.map { " (\(ByteFormat.bytes($0)))" } ?? ""
                let renamed = (request.source.path as NSString).lastPathComponent == sentName ? "" : " as \(sentName)"
                output.write(InvisibleCharacters.escaped("would send \(request.source.path)\(sizeText) to \(destination)\(renamed)") + "\n")
            }
        }
        if !json {
            let field =
                settings.uploadProtocol == .tus || settings.uploadProtocol == .put || S3Location.isS3(endpoint) ? "" : ", the file in the form field \(field)"
            output.write(
                "\(requests.count) file\(requests.count == 1 ? "" : "s"), \(ByteFormat.bytes(total)), by \(S3Location.isS3(endpoint) ? "S3 uploads" : how)\(field)\(stripNote); nothing was sent (--dry-run)\n"
            )
        }
        return SendExit.success
    }

    private var stripNote: String {
        let conversion = settings.conversion.map { $0.changesAnything ? ", photos " + $0.words : "" } ?? ""
        return conversion + (settings.stripLocation ? ", without where the photos were taken" : "")
    }

    /// Says each refusal and that nothing was sent: the usage status.
    public func refuse(_ reasons: [String]) -> Int32 {
        for reason in reasons { output.complain("uploadmon: \(reason)") }
        output.complain("uploadmon: nothing was sent")
        return SendExit.usage
    }

    /// `--skip-sent`: the files whose content was already sent to the endpoint are left out,
    /// each said on standard output (a `skipped` object with `--json`).
    func withoutSent(_ requests: [(UploadRequest, Int64?)], ledger: SentLedger?) async -> [(UploadRequest, Int64?)] {
        guard let ledger, let endpoint = requests.first?.0.url else {
            if ledger == nil { output.complain("uploadmon: cannot open the journal that says what was sent; --skip-sent skips nothing") }
            return requests
        }
        let paths = requests.compactMap { if case .file(let path) = $0.0.source { path } else { nil } }
        let (stripLocation, conversion) = (settings.stripLocation, settings.conversion)
        // Hashing reads every file: off the cooperative threads.
        let skips = await Task.detached { ledger.alreadySent(paths, to: endpoint, stripLocation: stripLocation, conversion: conversion) }.value
        return requests.filter { entry in
            guard case .file(let path) = entry.0.source, let skip = skips[path] else { return true }
            // One line each, written at once (the reporters' lines follow).
            output.write((json ? skip.jsonLine : skip.text) + "\n")
            return false
        }
    }

    /// Why `--strip-location` cannot apply to `path`, found before anything is sent; nil when it can.
    public static func cannotStripLocation(_ path: String) -> String? {
        guard path != "-" else { return "standard input cannot be sent with --strip-location: its location could only be removed from a file" }
        guard let prefix = FileHandle(forReadingAtPath: path)?.readData(ofLength: 16) else { return nil }
        guard !LocationStripper.canStrip(prefix: Array(prefix)) else { return nil }
        let looks = MediaSniffer.detect(prefix: Array(prefix), fileName: path).name
        return "\(path): only the location of JPEG, PNG, WebP, HEIC and AVIF files can be removed (--strip-location); this one looks like \(looks)"
    }

    /// The agent runs elsewhere: it gets absolute paths.
    public static func absolute(_ path: String) -> String {
        guard path != "-" else { return path }
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }

    /// `send`'s exit status from the outcomes: a transport failure first, then an HTTP error, then an answer cut short, else success.
    public static func exitStatus(for tracker: TransferTracker) -> Int32 {
        let outcomes = tracker.states.values.compactMap(\.outcome)
        if outcomes.contains(where: { if case .failed = $0 { true } else { false } }) { return SendExit.transportError }
        if outcomes.contains(where: { !$0.isSuccess }) { return SendExit.httpError }
        if tracker.states.values.contains(where: { $0.response?.cut != nil }) { return SendExit.answerCut }
        return SendExit.success
    }

    /// Queues checked requests, shows their events with the reporter the output calls for, and
    /// returns what happened once the queue drains; Ctrl-C cancels what has not finished (see
    /// `Interruption`). Shared by `send` and `demo`.
    public static func send(
        _ requests: [(UploadRequest, Int64?)], settings: TransportSettings, concurrency: Int, json: Bool, output: CommandOutput = .standard,
        contentIdentity: Bool = true, clock: HouseClock = .system
    ) async throws -> SendResult {
        let transport = try HTTPUploadTransport(settings: settings, contentIdentity: contentIdentity, clock: clock)
        let queue = UploadQueue(transport: transport, concurrency: concurrency, retryPolicy: settings.retryPolicy, clock: clock)
        let style = OutputStyle.detect()
        let lines = LineOutput()
        var reporter: any SendReporter =
            json
            ? JSONReporter(console: lines) : style.isTTY ? TTYReporter(style: style) as any SendReporter : PlainReporter(console: lines)
        let flusher = lines.flushPeriodically()
        for (request, size) in requests {
            // The file's stamps before it is opened to be sent: what was sent is known by them
            // until it is hashed (`SentLedger`); any change after this moves the change time.
            var stamp: FileFingerprint?
            if !contentIdentity, case .file(let path) = request.source { stamp = FileFingerprint.of(path: path) }
            await queue.enqueue(request, totalBytes: size, fileModified: stamp?.modificationNanoseconds, fileChanged: stamp?.changeNanoseconds)
        }
        await queue.finishWhenDrained()
        let interruption = Interruption { _ in
            Task { await queue.cancelAll(reason: "interrupted") }
        }
        defer { interruption.stop() }

        var tracker = TransferTracker()
        let start = clock.monotonic()
        for await event in queue.events {
            let now = clock.monotonic() - start
            tracker.apply(event, now: now, date: clock.wall())
            reporter.handle(event, tracker: tracker, now: now)
        }
        reporter.finish(tracker: tracker)
        flusher.cancel()
        lines.flush()
        try await transport.shutdown()
        if let number = interruption.signalNumber {
            let cancelled = tracker.states.values.filter { if case .failed(let f) = $0.outcome, f.kind == .cancelled { true } else { false } }.count
            output.complain("uploadmon: \(number == SIGINT ? "interrupted" : "terminated"); \(cancelled) upload(s) cancelled")
        }
        return SendResult(tracker: tracker, interruption: interruption.signalNumber)
    }
}

/// What a headless run did.
public struct SendResult: Sendable {
    public var tracker: TransferTracker
    /// Set when Ctrl-C or SIGTERM cancelled the uploads.
    public var interruption: Int32?
}

/// The `--files-from` list: one path a line (a CR before the line feed dropped), or NUL-separated
/// (`find -print0`); paths are bytes, kept by `PathText`; empty entries are skipped.
public enum FileList {
    /// A line with a NUL byte is refused: no path holds one, and the C calls that open a file
    /// stop at it while the name would be taken whole (the file opened and the name sent would differ).
    public static func parse(_ data: Data, nullSeparated: Bool) throws -> [String] {
        let separator = UInt8(nullSeparated ? 0 : UInt8(ascii: "\n"))
        let entries = data.split(separator: separator, omittingEmptySubsequences: false)
        if !nullSeparated, let bad = entries.firstIndex(where: { $0.contains(0) }) {
            throw CommandFailure.usage("line \(bad + 1) of the --files-from list holds a NUL byte, which no path can; a list from find -print0 needs --null")
        }
        return entries.map { PathText.decode($0) }
            .map { !nullSeparated && $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }
            .filter { !$0.isEmpty }
    }

    /// The list at `path` ('-': standard input).
    public static func read(_ path: String, nullSeparated: Bool) throws -> [String] {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let read = FileManager.default.contents(atPath: path) else {
                throw CommandFailure.usage("cannot read the --files-from list \(path): \(String(cString: strerror(errno)))")
            }
            data = read
        }
        return try parse(data, nullSeparated: nullSeparated)
    }
}
