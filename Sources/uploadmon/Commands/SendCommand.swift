import ArgumentParser
import Foundation
import UploadClient
import UploadCore
import UploadAgent
import UploadReports

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Upload files without the monitor and print what happens.",
        discussion: """
        Each file is sent as multipart/form-data: the -F text fields first, then the file in --field; \
        to an endpoint that speaks tus 1.0.0 (found by --protocol auto, or --protocol tus) as its raw \
        bytes, the -F fields, name and type in Upload-Metadata, resumed from the server's offset. \
        Only images are sent unless --any-file is given. '-' reads standard input and sends it chunked.

        Output: on a terminal, one line per file redrawn in place; otherwise one line per event; \
        with --json, one JSON object per event. NO_COLOR turns colour off.

        Ctrl-C cancels the uploads still running or queued (the lines say so) and exits 130; a \
        second Ctrl-C stops at once. SIGTERM does the same as the first Ctrl-C and exits 143.

        Exit status: 0 every upload got a 2xx answer; 1 an answer was not 2xx; 2 an upload got no \
        answer (connection, timeout, file error); 3 every upload got a 2xx answer but one was cut \
        off before its end (--answer-timeout, a closed connection: the file arrived, the answer \
        did not all arrive); 64 bad command line or refused file; 130/143 interrupted.

        Examples:
          uploadmon send cat.jpg --to http://127.0.0.1:3000/photo
          uploadmon send *.png --to https://example.com/upload --field file \\
              -H 'Authorization: Bearer …'
          uploadmon send photo.heic --name holiday --to http://127.0.0.1:3000/photo
            (sent as holiday.heic)
          uploadmon send key.jpg -F key=uploads/key.jpg -F policy=… \\
              --to https://bucket.example.com/
          cat shot.png | uploadmon send - --name shot.png \\
              --to http://127.0.0.1:3000/photo
          uploadmon send *.jpg --to http://host/photo --json --retries 3
          uploadmon send clip.jpg --to https://tus.example.com/files/ --chunk-size 5MiB --retries 5
          uploadmon send clip.jpg --to https://api.example.com/ --upload-url https://up.example.com/u/ab12
          uploadmon send ~/photos/*.jpg --to https://host/photo --background
            (then: uploadmon status)
          find ~/photos -name '*.jpg' -print0 | \\
              uploadmon send --files-from - --null --to https://host/photo --background
        """
    )

    @Argument(help: ArgumentHelp("Files to upload; '-' reads standard input.", valueName: "file"))
    var files: [String] = []

    @Option(name: .long, help: ArgumentHelp("Also send the files named in this list, one per line ('-': standard input). Faster than thousands of arguments: `find … | uploadmon send --files-from - …`.", valueName: "list"))
    var filesFrom: String?

    @Flag(name: .customLong("null"), help: "The --files-from list is separated by NUL bytes (find -print0) instead of lines.")
    var nullSeparated = false

    @OptionGroup var upload: UploadOptions

    @Option(name: .long, help: "Upload under this name (one file only); the original extension is kept when the name has none.")
    var name: String?

    @Flag(name: .long, help: "Print one JSON object per event.")
    var json = false

    @Option(name: .long, help: ArgumentHelp("Send the one file to this tus upload URL, handed out by another service (Vimeo's API, for one): continued from the server's offset (HEAD, then PATCH), never created (--to names the service's endpoint all the same).", valueName: "url"))
    var uploadURL: String?

    @Flag(name: .long, help: "Skip files whose content was already sent to this endpoint (by a send or the agent, under any name or path), saying so for each: matched by the SHA-256 of the bytes as they would be sent.")
    var skipSent = false

    @Flag(name: .long, help: "Hand the files to the background agent (started when none runs) and return at once; the uploads continue after this command, the terminal or the SSH session end.")
    var background = false

    func validate() throws {
        guard !files.isEmpty || filesFrom != nil else { throw ValidationError("name at least one file to send") }
        if nullSeparated && filesFrom == nil { throw ValidationError("--null describes the --files-from list; there is none") }
        if filesFrom == "-" && files.contains("-") {
            throw ValidationError("standard input cannot be both the --files-from list and a file to send")
        }
        if upload.headersFromStandardInput && (filesFrom == "-" || files.contains("-")) {
            throw ValidationError("standard input cannot be both the -H @- headers and \(filesFrom == "-" ? "the --files-from list" : "a file to send")")
        }
        if background && upload.concurrency != UploadOptions.defaultConcurrency { throw ValidationError(UploadOptions.agentConcurrencyNote) }
        if let uploadURL {
            guard files.count == 1, filesFrom == nil else { throw ValidationError("--upload-url takes one file; \(files.count) were given") }
            guard files != ["-"] else { throw ValidationError("--upload-url needs a file: tus sends the length before the bytes, and standard input has none") }
            guard upload.protocol != .multipart else { throw ValidationError("--upload-url is a tus upload URL; --protocol multipart cannot send to it") }
            do throws(UploadInputError) { _ = try EndpointURL.validate(uploadURL) } catch {
                throw ValidationError("--upload-url: \(error.description)")
            }
        }
        try Self.check(files, name: name, background: background)
    }

    static func check(_ files: [String], name: String?, background: Bool) throws {
        if name != nil && files.count > 1 { throw ValidationError("--name applies to a single file; \(files.count) were given") }
        if files.filter({ $0 == "-" }).count > 1 { throw ValidationError("standard input ('-') can be sent only once") }
        if background && files.contains("-") {
            throw ValidationError("standard input ('-') cannot be sent in the background: the agent cannot read this command's input after it exits")
        }
    }

    /// The arguments' files, then the list's.
    func allFiles() throws -> [String] {
        guard let filesFrom else { return files }
        let data: Data
        if filesFrom == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let read = FileManager.default.contents(atPath: filesFrom) else {
                throw ValidationError("cannot read the --files-from list \(filesFrom): \(String(cString: strerror(errno)))")
            }
            data = read
        }
        let separator = UInt8(nullSeparated ? 0 : UInt8(ascii: "\n"))
        // Paths are bytes: one that is not UTF-8 keeps them (`PathText`).
        let listed = data.split(separator: separator).map { PathText.decode($0) }
            .map { !nullSeparated && $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }
            .filter { !$0.isEmpty }
        guard !listed.isEmpty || !files.isEmpty else { throw ValidationError("the --files-from list \(filesFrom) names no file") }
        let all = files + listed
        try Self.check(all, name: name, background: background)
        return all
    }

    func run() async throws {
        var requests: [(UploadRequest, Int64?)] = []
        var refusals: [String] = []
        // Parsed once, not per file: a bad -F or -H is one refusal, not one per file.
        let formFields: [FormField]
        let headers: [RequestHeader]
        do throws(UploadInputError) {
            formFields = try upload.parsedFormFields()
            headers = try upload.parsedHeaders()
        } catch {
            Console.complain("uploadmon: \(error.description)\nuploadmon: nothing was sent")
            throw SendExit.usage
        }
        for path in try allFiles() {
            do throws(UploadInputError) {
                var request = try UploadRequest.forPath(
                    background ? Self.absolute(path) : path, url: upload.endpoint, field: upload.field, requestedName: name,
                    formFields: formFields, headers: headers, allowAnyFile: upload.anyFile
                )
                request.uploadURL = uploadURL
                let size = try UploadPreflight.check(request)
                if upload.stripLocation, let refusal = Self.cannotStripLocation(path) {
                    refusals.append(refusal)
                    continue
                }
                requests.append((request, size))
            } catch {
                refusals.append(error.description)
            }
        }
        guard refusals.isEmpty else {
            for refusal in refusals { Console.complain("uploadmon: \(refusal)") }
            Console.complain("uploadmon: nothing was sent")
            throw SendExit.usage
        }

        let ledger = SentLedger.open()
        if skipSent {
            let before = requests.count
            requests = await SentFiles.withoutSent(requests, ledger: ledger, stripLocation: upload.stripLocation, json: json)
            if requests.isEmpty {
                if !json { FileHandle.standardOutput.write(Data("nothing to send: all \(before) file(s) were already sent to \(RedactedURL.display(upload.endpoint))\n".utf8)) }
                return
            }
        }
        if background {
            try BackgroundSend.run(requests.map(\.0), options: upload, json: json)
            return
        }
        let result: SendResult
        do {
            result = try await SendRunner.run(requests, options: upload, json: json)
        } catch let error as UploadInputError {
            // A setting that cannot work (an unreadable --cacert): nothing was sent.
            Console.complain("uploadmon: \(error.description); nothing was sent")
            throw SendExit.usage
        }
        // What went, by content, for a later --skip-sent (the agent remembers its own).
        ledger?.remember(result.tracker, endpoint: upload.endpoint)
        if let signal = result.interruption { throw SendExit.interrupted(by: signal) }
        throw Self.exitCode(for: result.tracker)
    }

    /// Why `--strip-location` cannot apply to `path`, found before anything is sent; nil when it can.
    static func cannotStripLocation(_ path: String) -> String? {
        guard path != "-" else { return "standard input cannot be sent with --strip-location: its location could only be removed from a file" }
        guard let prefix = FileHandle(forReadingAtPath: path)?.readData(ofLength: 16) else { return nil }
        guard !LocationStripper.canStrip(prefix: Array(prefix)) else { return nil }
        let looks = MediaSniffer.detect(prefix: Array(prefix), fileName: path).name
        return "\(path): only the location of JPEG and PNG files can be removed (--strip-location); this one looks like \(looks)"
    }

    /// The agent runs elsewhere: it gets absolute paths.
    static func absolute(_ path: String) -> String {
        guard path != "-" else { return path }
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }

    static func exitCode(for tracker: TransferTracker) -> ExitCode {
        let outcomes = tracker.states.values.compactMap(\.outcome)
        if outcomes.contains(where: { if case .failed = $0 { true } else { false } }) { return SendExit.transportError }
        if outcomes.contains(where: { !$0.isSuccess }) { return SendExit.httpError }
        if tracker.states.values.contains(where: { $0.response?.cut != nil }) { return SendExit.answerCut }
        return SendExit.success
    }
}
