import Foundation
import UploadCore

/// A named destination from the configuration file: the URL and the upload options that go with
/// it, as a user would otherwise type them after `--to`. Only what is known not to be a secret is
/// kept in the file (`SecretRule`); credentials come from netrc, the environment, or a header
/// file named by `@FILE`.
public struct SavedDestination: Sendable, Equatable {
    /// One setting's value, as the file wrote it.
    public enum Value: Sendable, Equatable {
        case text(String)
        case number(Int)
        case flag(Bool)
        case list([String])
    }

    /// The settings a destination may have: each is one command-line option of the sending
    /// commands, under the same name (`headers` and `form` are `-H` and `-F`, repeatable).
    public struct Key: Sendable, Equatable {
        public enum Kind: Sendable { case text, number, flag, list }
        public let name: String
        public let kind: Kind
        /// The option it stands for; `aliases`: other spellings of it on a command line.
        public let option: String
        public let aliases: [String]
        public let help: String

        init(_ name: String, _ kind: Kind, option: String? = nil, aliases: [String] = [], _ help: String) {
            self.name = name
            self.kind = kind
            self.option = option ?? "--" + name
            self.aliases = aliases
            self.help = help
        }

        /// Every spelling of the option.
        public var spellings: [String] { [option] + aliases }
    }

    /// The keys a destination's table may hold besides `url`, in the order they are written.
    public static let keys: [Key] = [
        Key("protocol", .text, "auto, multipart, tus or put"),
        Key("field", .text, "the form field that carries the file"),
        Key("form", .list, option: "--form", aliases: ["-F"], "text fields sent before the file, name=value"),
        Key("headers", .list, option: "--header", aliases: ["-H"], "request headers: @FILE (one a line), or a header that holds no secret"),
        Key("netrc", .flag, "the login for the host from ~/.netrc"),
        Key("netrc-file", .text, "the login for the host from this netrc file"),
        Key("proxy", .text, "a proxy URL without a password"),
        Key("noproxy", .text, "hosts reached directly"),
        Key("concurrency", .number, "uploads at once (send and the monitor without the agent)"),
        Key("retries", .number, aliases: ["--retry"], "retries of a failed upload"),
        Key("limit-rate", .text, "bytes per second per upload, e.g. 2MB"),
        Key("strip-location", .flag, "send photos without where they were taken"),
        Key("convert", .text, "jpeg, webp or keep: the format photos are sent in"),
        Key("quality", .number, "1-100, the quality converted photos are written at"),
        Key("max-dimension", .number, "the longest side of a photo sent, in pixels"),
        Key("max-bytes", .text, "the largest a photo sent may be, e.g. 2MB"),
        Key("cacert", .text, "a PEM CA bundle to trust"),
        Key("chunk-size", .text, "tus: bytes per PATCH"),
        Key("create-dirs", .flag, "with put: make missing WebDAV folders"),
        Key("location", .flag, aliases: ["-L"], "follow redirects to other origins"),
        Key("any-file", .flag, "send files that are not images too"),
        Key("no-digest", .flag, "send no Content-Digest"),
        Key("no-resume", .flag, "always send from the start"),
        Key("connect-timeout", .text, "e.g. 10s"),
        Key("stall-timeout", .text, "e.g. 30s"),
        Key("answer-timeout", .text, "e.g. 60s"),
    ]

    public static func key(named name: String) -> Key? { keys.first { $0.name == name } }

    public var name: String
    public var url: String
    /// The settings by key name.
    public var settings: [String: Value]

    public init(name: String, url: String, settings: [String: Value] = [:]) {
        self.name = name
        self.url = url
        self.settings = settings
    }

    /// A destination's name: a letter, then letters, digits, `-` or `_` (a bare TOML key, and
    /// never a host name with a dot or a URL).
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, CharacterSet.letters.contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }
    }

    /// The destination as the command-line options it stands for, in the keys' order, leaving
    /// out every option in `given` (any of its spellings: the command line wins) and the keys
    /// in `skipping`. Repeatable options (`-F`, `-H`) are kept: the command line's come after.
    public func arguments(leavingOut given: Set<String> = [], skipping: Set<String> = []) -> [String] {
        var arguments = ["--to", url]
        for key in Self.keys where !skipping.contains(key.name) {
            guard let value = settings[key.name] else { continue }
            if key.kind != .list, key.spellings.contains(where: given.contains) { continue }
            switch value {
            case .text(let text): arguments += [key.option, text]
            case .number(let number): arguments += [key.option, String(number)]
            case .flag(let on): if on { arguments.append(key.option) }
            case .list(let items): for item in items { arguments += [key.option, item] }
            }
        }
        return arguments
    }

    /// The protocol the destination names, for lists (`auto` when it names none; `put`/`s3`
    /// by the URL).
    public var protocolName: String {
        if S3Location.isS3(url) { return "s3" }
        if case .text(let name)? = settings["protocol"] { return name }
        return "auto"
    }
}
