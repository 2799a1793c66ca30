import Foundation
import UploadClient
import UploadCore

/// `uploadmon destinations …`: list, add, remove, choose the default, check.
public struct DestinationCommands {
    public var environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    var home: String { environment["HOME"] ?? NSHomeDirectory() }

    public func load() throws(CommandFailure) -> DestinationFile { try DestinationFile.load(environment: environment) }

    /// The destinations as a table (name, protocol, URL; the default marked), or how to add one.
    public func list() throws(CommandFailure) -> String {
        let file = try load()
        guard !file.destinations.isEmpty else {
            return
                "No destinations yet (\(file.path) does not name any).\nAdd one: uploadmon destinations add NAME --to URL [options] — then uploadmon send FILE --to NAME, or uploadmon --to NAME."
        }
        let names = file.names
        let width = max(4, names.map(\.count).max() ?? 0)
        let protocolWidth = max(8, names.compactMap { file.destinations[$0]?.protocolName.count }.max() ?? 0)
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        var lines = ["  " + pad("NAME", width) + "  " + pad("PROTOCOL", protocolWidth) + "  URL"]
        for name in names {
            guard let destination = file.destinations[name] else { continue }
            let mark = name == file.defaultName ? "* " : "  "
            var extras: [String] = []
            for key in SavedDestination.keys where key.name != "protocol" {
                if let value = destination.settings[key.name] { extras.append(Self.describe(key, value)) }
            }
            lines.append(
                mark + pad(name, width) + "  " + pad(destination.protocolName, protocolWidth) + "  " + RedactedURL.display(destination.url)
                    + (extras.isEmpty ? "" : "  (" + extras.joined(separator: ", ") + ")"))
        }
        lines.append("")
        lines.append(
            file.defaultName != nil
                ? "* the default, used when --to is not given. From \(file.path)." : "No default (uploadmon destinations default NAME). From \(file.path).")
        return lines.joined(separator: "\n")
    }

    static func describe(_ key: SavedDestination.Key, _ value: SavedDestination.Value) -> String {
        switch value {
        case .text(let text): "\(key.name) \(key.name == "proxy" ? RedactedURL.display(text) : text)"
        case .number(let number): "\(key.name) \(number)"
        case .flag(let on): on ? key.name : "no \(key.name)"
        case .list(let items): "\(key.name): \(items.count)"
        }
    }

    /// The destination the sending options describe: the URL and every option given with
    /// another value than its default. File names are made absolute from `directory` (the
    /// file is read from anywhere later).
    public static func saved(name: String, choices: UploadChoices, directory: String) -> SavedDestination {
        let standard = UploadChoices.standard
        let choices = absolutePaths(choices, directory: directory)
        var settings: [String: SavedDestination.Value] = [:]
        if choices.uploadProtocol != standard.uploadProtocol { settings["protocol"] = .text(choices.uploadProtocol.rawValue) }
        if choices.field != standard.field { settings["field"] = .text(choices.field) }
        if !choices.formFields.isEmpty { settings["form"] = .list(choices.formFields) }
        if !choices.headers.isEmpty { settings["headers"] = .list(choices.headers) }
        if choices.netrc || choices.netrcOptional { settings["netrc"] = .flag(true) }
        if let file = choices.netrcFile { settings["netrc-file"] = .text(file) }
        if let proxy = choices.proxy { settings["proxy"] = .text(proxy) }
        if let noProxy = choices.noProxy { settings["noproxy"] = .text(noProxy) }
        if choices.concurrency != standard.concurrency { settings["concurrency"] = .number(choices.concurrency) }
        if choices.retries != standard.retries { settings["retries"] = .number(choices.retries) }
        if let rate = choices.limitRate { settings["limit-rate"] = .text(rate) }
        if choices.stripLocation { settings["strip-location"] = .flag(true) }
        if let convert = choices.convert { settings["convert"] = .text(convert) }
        if let quality = choices.quality { settings["quality"] = .number(quality) }
        if let side = choices.maxDimension { settings["max-dimension"] = .number(side) }
        if let bytes = choices.maxBytes { settings["max-bytes"] = .text(bytes) }
        if let cacert = choices.caCertificate { settings["cacert"] = .text(cacert) }
        if let chunk = choices.chunkSize { settings["chunk-size"] = .text(chunk) }
        if choices.createDirs { settings["create-dirs"] = .flag(true) }
        if choices.location { settings["location"] = .flag(true) }
        if choices.anyFile { settings["any-file"] = .flag(true) }
        if choices.noDigest { settings["no-digest"] = .flag(true) }
        if choices.noResume { settings["no-resume"] = .flag(true) }
        if choices.connectTimeout != standard.connectTimeout { settings["connect-timeout"] = .text(choices.connectTimeout) }
        if choices.stallTimeout != standard.stallTimeout { settings["stall-timeout"] = .text(choices.stallTimeout) }
        if choices.answerTimeout != standard.answerTimeout { settings["answer-timeout"] = .text(choices.answerTimeout) }
        return SavedDestination(name: name, url: choices.to, settings: settings)
    }

    /// The file names in `choices` (`-H @FILE`, `--netrc-file`, `--cacert`) made absolute from
    /// `directory`: the destination is used from anywhere.
    static func absolutePaths(_ choices: UploadChoices, directory: String) -> UploadChoices {
        func absolute(_ path: String) -> String { path.hasPrefix("/") || path.hasPrefix("~/") ? path : directory + "/" + path }
        var choices = choices
        choices.headers = choices.headers.map { $0.hasPrefix("@") && $0 != "@-" ? "@" + absolute(String($0.dropFirst())) : $0 }
        choices.netrcFile = choices.netrcFile.map(absolute)
        choices.caCertificate = choices.caCertificate.map(absolute)
        return choices
    }

    /// Adds `name` with these options; what to print.
    public func add(name: String, choices: UploadChoices, makeDefault: Bool, directory: String) throws(CommandFailure) -> String {
        guard choices.destinationList == nil else { throw .refused("a destination is one URL; --to @LIST gives each file its own, on the command line") }
        guard !choices.insecure else {
            throw .refused(
                "--insecure is not kept in a destination (every upload to it would go unverified): give the server's CA with --cacert, or --insecure on the command line each time"
            )
        }
        if choices.headersFromStandardInput { throw .refused("-H @- reads standard input once; a destination names a header file, -H @FILE") }
        if let refusal = Self.absolutePaths(choices, directory: directory).commandLineRefusal(environment: environment) { throw .refused(refusal) }
        let file = try load()
        let destination = Self.saved(name: name, choices: choices, directory: directory)
        let written = try file.write(try file.adding(destination, makeDefault: makeDefault), home: home)
        let isDefault = written.defaultName == name
        return "Added \(name) (\(RedactedURL.display(destination.url)))\(isDefault ? " as the default" : "") to \(file.path).\n"
            + "Send to it: uploadmon send FILE --to \(name)\(isDefault ? " (or without --to)" : ""); the monitor: uploadmon --to \(name). Check it: uploadmon destinations check \(name)."
    }

    public func remove(name: String) throws(CommandFailure) -> String {
        let file = try load()
        let written = try file.write(try file.removing(name), home: home)
        let note =
            file.defaultName == name ? " It was the default; now there is none\(written.names.isEmpty ? "" : " (uploadmon destinations default NAME)")." : ""
        return "Removed \(name) from \(file.path).\(note)"
    }

    public func setDefault(name: String) throws(CommandFailure) -> String {
        let file = try load()
        _ = try file.write(try file.settingDefault(name), home: home)
        return "\(name) is the default destination: uploadmon send FILE and uploadmon without --to go there."
    }

    /// One request to the destination the options describe, and its verdict; exit 0 when it
    /// passed, 1 when the server refused, 2 when nothing answered.
    public func check(choices: UploadChoices, named name: String?) async throws(CommandFailure) -> (text: String, status: Int32) {
        guard choices.destinationList == nil else { throw .refused("check takes one destination, not a list") }
        if let refusal = choices.commandLineRefusal(environment: environment) { throw .refused(refusal) }
        let headers: [RequestHeader]
        do throws(UploadInputError) { headers = try choices.parsedHeaders(environment: environment) } catch { throw .refused(error.description) }
        let transport: HTTPUploadTransport
        do { transport = try HTTPUploadTransport(settings: choices.transportSettings(for: choices.endpoint, environment: environment)) } catch {
            throw .failed("cannot set up the connection: \(error)")
        }
        let result = await transport.check(url: choices.endpoint, headers: headers)
        try? await transport.shutdown()
        let title = name.map { "\($0) (\(RedactedURL.display(choices.to)))" } ?? RedactedURL.display(choices.to)
        var lines = ["\(result.passed ? "OK" : "FAILED") \(title)", "  \(result.request)" + (result.status.map { " → \($0)" } ?? "")]
        lines.append("  " + result.verdict)
        return (lines.joined(separator: "\n"), result.passed ? 0 : (result.status == nil ? 2 : 1))
    }
}
