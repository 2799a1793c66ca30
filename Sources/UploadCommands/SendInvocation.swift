import UploadCore

/// `uploadmon send`'s command line as values: what the `send` command's ArgumentParser
/// declaration fills in, and what `quick(_:)` reads by itself for the usual shapes of a command
/// line. Both run the same checks and the same upload from here.
public struct SendInvocation: Sendable, Equatable {
    /// The operands: files, `-` for standard input.
    public var files: [String] = []
    /// `--files-from`.
    public var filesFrom: String?
    /// `--null`.
    public var nullSeparated = false
    /// The upload options every sending command shares.
    public var options: UploadChoices
    /// `--name`.
    public var name: String?
    /// `--json`.
    public var json = false
    /// `--upload-url`.
    public var uploadURL: String?
    /// `--skip-sent`.
    public var skipSent = false
    /// `--background`.
    public var background = false
    /// `--strict`: nothing is sent when a file is refused.
    public var strict = false
    /// `--dry-run`.
    public var dryRun = false
    /// `-r`/`--recursive`, `--include`, `--exclude`: what a folder among the files stands for.
    public var recursive = false
    public var include: [String] = []
    public var exclude: [String] = []

    /// No operand and no flag of `send`'s own yet; the upload options as given.
    public init(options: UploadChoices) {
        self.options = options
    }

    /// The arguments as `SendArguments` checks them together.
    public var arguments: SendArguments {
        var arguments = SendArguments(files: files, filesFrom: filesFrom)
        (arguments.nullSeparated, arguments.destinationList, arguments.headersFromStandardInput) = (
            nullSeparated, options.destinationList, options.headersFromStandardInput
        )
        (arguments.skipSent, arguments.uploadURL, arguments.uploadProtocol, arguments.background, arguments.name) = (
            skipSent, uploadURL, options.uploadProtocol, background, name
        )
        arguments.concurrencyGiven = options.concurrency != UploadChoices.standard.concurrency
        return arguments
    }

    /// The arguments' files, then the list's.
    public func allFiles() throws -> [String] {
        guard let filesFrom else { return files }
        let listed = try FileList.read(filesFrom, nullSeparated: nullSeparated)
        guard !listed.isEmpty || !files.isEmpty else { throw CommandFailure.usage("the --files-from list \(filesFrom) names no file") }
        if let refusal = SendSession.refusal(files: files + listed, name: name, background: background) { throw CommandFailure.usage(refusal) }
        return files + listed
    }

    /// Sends the files and returns the exit status (`SendExit`).
    public func run() async throws -> Int32 {
        let list = try options.destinationList.map { path throws(CommandFailure) in try DestinationList.read(path) }
        // Parsed once, not per file: a bad -F or -H is one refusal, not one per file.
        var session = SendSession(
            endpoint: list?.firstURL ?? options.endpoint, field: options.field, allowAnyFile: options.anyFile,
            settings: list.map { options.transportSettings(for: $0.firstURL) } ?? options.transportSettings,
            concurrency: options.concurrency, name: name, uploadURL: uploadURL, json: json, skipSent: skipSent, background: background)
        session.list = list
        (session.strict, session.dryRun) = (strict, dryRun)
        do throws(UploadInputError) {
            session.formFields = try options.parsedFormFields()
            session.headers = try options.parsedHeaders()
        } catch {
            return session.refuse([error.description])
        }
        let given = try allFiles()
        let folders = FolderFiles(recursive: recursive, include: include, exclude: exclude, anyFile: options.anyFile).expand(given)
        for note in folders.notes { session.output.complain("uploadmon: \(note)") }
        // Folders that held nothing to send (a destination list that names its files has none given).
        guard !folders.files.isEmpty || given.isEmpty else { return session.refuse([]) }
        if let refusal = SendSession.refusal(files: folders.files, name: name, background: background) { return session.refuse([refusal]) }
        return try await session.run(folders.files)
    }
}

extension SendInvocation {
    /// The command line after `send`, read without ArgumentParser when it has one of the usual
    /// shapes: operands, and options from the table below each given once, with its value as the
    /// next argument or after `=`. Nil for anything else (help, `--`, a short option with its
    /// value attached, a value that starts with `-`, an option not in the table, a repeated one,
    /// no `--to`): those go through ArgumentParser, which says every mistake as it always did.
    ///
    /// Why: ArgumentParser builds its description of `send` by reflection at every start, and
    /// the protocol-conformance lookups that takes were two fifths of a small upload's start-up.
    /// A debug build parses both ways and stops when they differ, so every test of `send`
    /// checks that this reads the same as the declaration.
    public static func quick(_ arguments: [String]) -> SendInvocation? {
        var values: [String: String] = [:]
        var arrays: [String: [String]] = [:]
        var flags: Set<String> = []
        var operands: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-"), argument != "-" else {
                guard !argument.isEmpty else { return nil }
                operands.append(argument)
                continue
            }
            var name = argument
            var attached: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                attached = String(argument[argument.index(after: equals)...])
            }
            guard let option = Self.option(named: name) else { return nil }
            switch option {
            case .flag(let key):
                guard attached == nil, flags.insert(key).inserted else { return nil }
            case .value(let key), .repeated(let key):
                let value: String
                if let attached {
                    value = attached
                } else {
                    guard index < arguments.count else { return nil }
                    value = arguments[index]
                    index += 1
                }
                guard !value.isEmpty, !value.hasPrefix("-") || value == "-" else { return nil }
                if case .repeated = option {
                    arrays[key, default: []].append(value)
                } else {
                    guard values.updateValue(value, forKey: key) == nil else { return nil }
                }
            }
        }
        guard let to = values["to"] else { return nil }
        var options = UploadChoices(to: to)
        var invocation = SendInvocation(options: options)
        invocation.files = operands
        for (key, value) in values {
            switch key {
            case "to": break
            case "field": options.field = value
            case "netrc-file": options.netrcFile = value
            case "concurrency", "retries", "quality", "max-dimension":
                guard value.allSatisfy(\.isASCIIDigit), let number = Int(value) else { return nil }
                switch key {
                case "concurrency": options.concurrency = number
                case "retries": options.retries = number
                case "quality": options.quality = number
                default: options.maxDimension = number
                }
            case "convert": options.convert = value
            case "max-bytes": options.maxBytes = value
            case "cacert": options.caCertificate = value
            case "limit-rate": options.limitRate = value
            case "connect-timeout": options.connectTimeout = value
            case "stall-timeout": options.stallTimeout = value
            case "answer-timeout": options.answerTimeout = value
            case "proxy": options.proxy = value
            case "noproxy": options.noProxy = value
            case "protocol":
                guard let chosen = UploadProtocol(rawValue: value) else { return nil }
                options.protocol = chosen
            case "chunk-size": options.chunkSize = value
            case "files-from": invocation.filesFrom = value
            case "name": invocation.name = value
            case "upload-url": invocation.uploadURL = value
            default: return nil
            }
        }
        options.formFields = arrays["form"] ?? []
        options.headers = arrays["header"] ?? []
        invocation.include = arrays["include"] ?? []
        invocation.exclude = arrays["exclude"] ?? []
        for flag in flags {
            switch flag {
            case "netrc": options.netrc = true
            case "netrc-optional": options.netrcOptional = true
            case "any-file": options.anyFile = true
            case "insecure": options.insecure = true
            case "no-resume": options.noResume = true
            case "no-digest": options.noDigest = true
            case "strip-location": options.stripLocation = true
            case "put": options.put = true
            case "create-dirs": options.createDirs = true
            case "location": options.location = true
            case "null": invocation.nullSeparated = true
            case "json": invocation.json = true
            case "skip-sent": invocation.skipSent = true
            case "background": invocation.background = true
            case "strict": invocation.strict = true
            case "dry-run": invocation.dryRun = true
            case "recursive": invocation.recursive = true
            default: return nil
            }
        }
        invocation.options = options
        return invocation
    }

    private enum Option {
        case flag(String)
        case value(String)
        case repeated(String)
    }

    /// The options `quick` reads, by every name they are given as (those of `send` and its
    /// upload options; durations and sizes stay text, checked by `UploadChoices`). A switch, not
    /// a dictionary: a dictionary's type is made at run time, at a cost this path exists to avoid.
    private static func option(named name: String) -> Option? {
        switch name {
        case "-F", "--form": return .repeated("form")
        case "--retry": return .value("retries")  // curl's spelling
        case "-H", "--header": return .repeated("header")
        case "--include", "--exclude": return .repeated(String(name.dropFirst(2)))
        case "-r", "--recursive": return .flag("recursive")
        case "-L", "--location": return .flag("location")
        case "--to", "--field", "--netrc-file", "--concurrency", "--retries", "--cacert", "--limit-rate", "--connect-timeout",
            "--stall-timeout", "--answer-timeout", "--proxy", "--noproxy", "--protocol", "--chunk-size", "--files-from", "--name",
            "--upload-url", "--convert", "--quality", "--max-dimension", "--max-bytes":
            return .value(String(name.dropFirst(2)))
        case "--netrc", "--netrc-optional", "--any-file", "--insecure", "--no-resume", "--no-digest", "--strip-location", "--put",
            "--create-dirs", "--null", "--json", "--skip-sent", "--background", "--strict", "--dry-run":
            return .flag(String(name.dropFirst(2)))
        default: return nil
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
