import Foundation

/// A `.netrc` file as curl reads it (`--netrc`, `--netrc-file`): whitespace-separated tokens;
/// `machine NAME` starts an entry, `default` the entry for any other host; `login`, `password`
/// and `account` take a value; `macdef NAME` is followed by a macro that runs to the next empty
/// line and is skipped. A value may be double-quoted with `\"`, `\\`, `\n`, `\r`, `\t` escapes
/// (curl 7.84 and later). Host names match without regard to case; the first matching `machine`
/// wins, `default` only when none does. Secrets read here never reach output: only the header
/// they become is sent.
public struct Netrc: Sendable, Equatable {
    /// One `machine` (or `default`) entry with its login and password.
    public struct Entry: Sendable, Equatable {
        /// nil for `default`.
        public var machine: String?
        public var login: String?
        public var password: String?
    }

    public private(set) var entries: [Entry] = []

    public init(parsing text: String) throws(NetrcError) {
        var tokens = Tokens(text)
        var current: Entry?
        while let token = try tokens.next() {
            switch token {
            case "machine":
                if let current { entries.append(current) }
                guard let name = try tokens.next() else { throw NetrcError(message: "'machine' without a host name") }
                current = Entry(machine: name)
            case "default":
                if let current { entries.append(current) }
                current = Entry(machine: nil)
            case "login", "password", "account":
                guard let value = try tokens.next() else { throw NetrcError(message: "'\(token)' without a value") }
                guard current != nil else { throw NetrcError(message: "'\(token)' before any 'machine' or 'default'") }
                if token == "login" { current?.login = value }
                if token == "password" { current?.password = value }
            case "macdef":
                _ = try tokens.next()
                tokens.skipMacro()
            default:
                // curl ignores what it does not know.
                continue
            }
        }
        if let current { entries.append(current) }
    }

    /// The login and password for `host` (and `user`, when the URL names one: only an entry with
    /// that login then counts), or nil.
    public func credentials(for host: String, user: String? = nil) -> (login: String, password: String)? {
        let host = host.lowercased()
        let named = entries.filter { $0.machine?.lowercased() == host }
        let candidates = named.isEmpty ? entries.filter { $0.machine == nil } : named
        for entry in candidates {
            guard let login = entry.login, let password = entry.password else { continue }
            if let user, login != user { continue }
            return (login, password)
        }
        return nil
    }

    /// The tokenizer: whitespace separates, double quotes group with escapes.
    struct Tokens {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ text: String) { scalars = Array(text.unicodeScalars) }

        mutating func next() throws(NetrcError) -> String? {
            while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
            guard index < scalars.count else { return nil }
            var token = String.UnicodeScalarView()
            if scalars[index] == "\"" {
                index += 1
                while true {
                    guard index < scalars.count else { throw NetrcError(message: "a quoted value is not closed") }
                    let scalar = scalars[index]
                    index += 1
                    if scalar == "\"" { break }
                    if scalar == "\\", index < scalars.count {
                        let escaped = scalars[index]
                        index += 1
                        switch escaped {
                        case "n": token.append("\n")
                        case "r": token.append("\r")
                        case "t": token.append("\t")
                        default: token.append(escaped)
                        }
                        continue
                    }
                    token.append(scalar)
                }
                return String(token)
            }
            while index < scalars.count, !scalars[index].properties.isWhitespace {
                token.append(scalars[index])
                index += 1
            }
            return String(token)
        }

        /// Skips a macro definition: from the end of its line to the next empty line.
        mutating func skipMacro() {
            while index < scalars.count, scalars[index] != "\n" { index += 1 }
            index += 1
            while index < scalars.count {
                // An empty line ends it.
                if scalars[index] == "\n" {
                    index += 1
                    return
                }
                while index < scalars.count, scalars[index] != "\n" { index += 1 }
                index += 1
            }
        }
    }
}

/// Why a netrc file's text cannot be read as one (a keyword without its value, a quote not closed).
public struct NetrcError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// A netrc file as a command asks for it (`--netrc`, `--netrc-file`, `--netrc-optional`), and
/// what it gives an endpoint, by curl's rules: required, the file must exist and its entry wins
/// over a password in the URL (which is then not sent); optional, a missing file is no error
/// and a password in the URL wins. A user in the URL narrows the search to that login.
public struct NetrcChoice: Sendable, Equatable {
    public var path: String
    public var optional: Bool

    public init(path: String, optional: Bool) {
        self.path = path
        self.optional = optional
    }

    /// The login and password for `url`'s host, or nil.
    public func credentials(for url: String) throws(UploadInputError) -> (login: String, password: String)? {
        let components = URLComponents(string: url)
        guard let host = components?.host, !host.isEmpty else { return nil }
        if optional, components?.password != nil { return nil }
        let data: Data
        do throws(SmallFileProblem) {
            data = try SmallFile.read(path)
        } catch {
            if optional { return nil }
            throw .netrc(path: path, reason: error.reason)
        }
        do {
            return try Netrc(parsing: String(decoding: data, as: UTF8.self)).credentials(for: host, user: components?.user)
        } catch {
            throw .netrc(path: path, reason: error.message)
        }
    }

    /// `url` as sent: without its own login and password when an entry of a required file replaces them.
    public func endpoint(_ url: String) -> String {
        guard !optional, (try? credentials(for: url)) != nil, var components = URLComponents(string: url),
            components.user != nil || components.password != nil
        else { return url }
        components.user = nil
        components.password = nil
        return components.string ?? url
    }
}
