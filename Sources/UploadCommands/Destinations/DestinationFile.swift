import Foundation
import TOMLKit
import UploadCore

/// The destinations file, `$XDG_CONFIG_HOME/uploadmon/destinations.toml` (`~/.config/…` when
/// unset): TOML, one table a destination, a default at the top.
///
/// ```toml
/// default = "blog"
///
/// [destinations.blog]
/// url = "https://blog.example.com/photo"
/// field = "file"
/// headers = ["@~/.config/uploadmon/blog.headers"]
/// strip-location = true
/// ```
///
/// Read by TOMLKit (toml++), checked key by key: an unknown key, a value of the wrong type and
/// anything `SecretRule` refuses is an error that names the file, the table and the key. Edits
/// (`add`, `remove`, `default`) change the text, so the user's comments and layout stay, and the
/// result is read back before it replaces the file (0600, in a 0700 folder).
public struct DestinationFile: Sendable, Equatable {
    public var path: String
    public var destinations: [String: SavedDestination]
    public var defaultName: String?
    /// The file's text as read ("" when there is no file).
    public var text: String

    /// Where the file is for this environment.
    public static func path(environment: [String: String]) -> String {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
        return config + "/uploadmon/destinations.toml"
    }

    /// The file at `path`; an empty one when there is none. A file that cannot be read or does
    /// not hold what it should is an error in words.
    public static func load(path: String, home: String) throws(CommandFailure) -> DestinationFile {
        guard FileManager.default.fileExists(atPath: path) else {
            return DestinationFile(path: path, destinations: [:], defaultName: nil, text: "")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .failed("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        return try parse(String(decoding: data, as: UTF8.self), path: path, home: home)
    }

    /// The file of this environment.
    public static func load(environment: [String: String]) throws(CommandFailure) -> DestinationFile {
        try load(path: path(environment: environment), home: environment["HOME"] ?? NSHomeDirectory())
    }

    /// `text` as the file at `path` (paths in it that start with `~/` are under `home`; relative
    /// ones beside the file).
    public static func parse(_ text: String, path: String, home: String) throws(CommandFailure) -> DestinationFile {
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw .failed("\(path), line \(error.source.begin.line), column \(error.source.begin.column): \(error.description)")
        } catch {
            throw .failed("\(path): \(error)")
        }
        var file = DestinationFile(path: path, destinations: [:], defaultName: nil, text: text)
        for key in root.keys {
            switch key {
            case "default":
                guard let name = root[key]?.string else { throw .failed("\(path): default must be a destination's name in quotes") }
                file.defaultName = name
            case "destinations":
                guard let tables = root[key]?.table else { throw .failed("\(path): destinations must hold tables, [destinations.NAME]") }
                for name in tables.keys {
                    let place = "\(path), [destinations.\(name)]"
                    guard SavedDestination.isValidName(name) else {
                        throw .failed("\(place): a destination's name is a letter, then letters, digits, - or _")
                    }
                    guard let table = tables[name]?.table else { throw .failed("\(place) must be a table") }
                    file.destinations[name] = try destination(name, table, at: place, folder: (path as NSString).deletingLastPathComponent, home: home)
                }
            default:
                throw .failed("\(path): unknown key \(key) (the file holds default = \"NAME\" and [destinations.NAME] tables)")
            }
        }
        if let name = file.defaultName, file.destinations[name] == nil {
            throw .failed("\(path): default = \"\(name)\", but there is no [destinations.\(name)]")
        }
        return file
    }

    private static func destination(_ name: String, _ table: TOMLTable, at place: String, folder: String, home: String) throws(CommandFailure)
        -> SavedDestination
    {
        guard let url = table["url"]?.string else { throw .failed("\(place): url = \"…\" is missing") }
        if let refusal = SecretRule.refusal(key: "url", value: .text(url), at: place) { throw .failed(refusal) }
        var destination = SavedDestination(name: name, url: url)
        for key in table.keys where key != "url" {
            guard let known = SavedDestination.key(named: key) else {
                throw .failed("\(place): unknown key \(key); a destination has url and \(SavedDestination.keys.map(\.name).joined(separator: ", "))")
            }
            let raw = table[key]
            let value: SavedDestination.Value
            switch known.kind {
            case .text:
                guard let text = raw?.string else { throw .failed("\(place): \(key) must be text in quotes (\(known.help))") }
                value = .text(text)
            case .number:
                guard let number = raw?.int else { throw .failed("\(place): \(key) must be a whole number (\(known.help))") }
                value = .number(number)
            case .flag:
                guard let flag = raw?.bool else { throw .failed("\(place): \(key) must be true or false (\(known.help))") }
                value = .flag(flag)
            case .list:
                guard let array = raw?.array else { throw .failed("\(place): \(key) must be a list in brackets, [\"…\", \"…\"] (\(known.help))") }
                var items: [String] = []
                for item in array {
                    guard let text = item.string else { throw .failed("\(place): every item of \(key) must be text in quotes") }
                    items.append(text)
                }
                value = .list(items)
            }
            if let refusal = SecretRule.refusal(key: key, value: value, at: place) { throw .failed(refusal) }
            destination.settings[key] = resolvingPaths(key, value, folder: folder, home: home)
        }
        return destination
    }

    /// File names in a destination as the commands take them: `~/` under the home folder, a
    /// relative one beside the destinations file (not wherever the command runs).
    static func resolvingPaths(_ key: String, _ value: SavedDestination.Value, folder: String, home: String) -> SavedDestination.Value {
        func path(_ text: String) -> String {
            if text.hasPrefix("~/") { return home + text.dropFirst() }
            if text.hasPrefix("/") || text.isEmpty { return text }
            return folder + "/" + text
        }
        switch (key, value) {
        case ("netrc-file", .text(let text)), ("cacert", .text(let text)): return .text(path(text))
        case ("headers", .list(let items)): return .list(items.map { $0.hasPrefix("@") && $0 != "@-" ? "@" + path(String($0.dropFirst())) : $0 })
        default: return value
        }
    }

    /// The destination the command line means by `name`, or the default; nil when the file
    /// names none.
    public func destination(named name: String?) -> SavedDestination? {
        guard let name = name ?? defaultName else { return nil }
        return destinations[name]
    }

    /// Names, sorted, for messages.
    public var names: [String] { destinations.keys.sorted() }
}

// MARK: - Edits

extension DestinationFile {
    /// The file with `destination` added (made the default when `makeDefault`, or when it is
    /// the first); refused when the name is taken or a value is a secret.
    public func adding(_ destination: SavedDestination, makeDefault: Bool) throws(CommandFailure) -> String {
        guard SavedDestination.isValidName(destination.name) else {
            throw .refused(
                "\(destination.name): a destination's name is a letter, then letters, digits, - or _ (it is said after --to, where a URL has a dot or a colon)")
        }
        guard destinations[destination.name] == nil else {
            throw .refused(
                "there is already a destination \(destination.name) in \(path): remove it first (uploadmon destinations remove \(destination.name)), or edit the file"
            )
        }
        let place = "destination \(destination.name)"
        if let refusal = SecretRule.refusal(key: "url", value: .text(destination.url), at: place) { throw .refused(refusal) }
        for (key, value) in destination.settings {
            if let refusal = SecretRule.refusal(key: key, value: value, at: place) { throw .refused(refusal) }
        }
        var text = self.text.isEmpty ? Self.header : self.text
        if !text.hasSuffix("\n") { text += "\n" }
        text += "\n[destinations.\(destination.name)]\n"
        text += "url = \(Self.quoted(destination.url))\n"
        for key in SavedDestination.keys {
            guard let value = destination.settings[key.name] else { continue }
            text += "\(key.name) = \(Self.literal(value))\n"
        }
        if makeDefault || defaultName == nil { text = Self.settingDefault(destination.name, in: text) }
        return text
    }

    /// The file without `name`'s table (and without the default, when it was that one).
    public func removing(_ name: String) throws(CommandFailure) -> String {
        guard destinations[name] != nil else { throw .refused(unknown(name)) }
        var lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { Self.tableHeader($0) == "destinations.\(name)" }) else {
            throw .failed("\(path) holds \(name) in another form than a [destinations.\(name)] table: edit the file by hand")
        }
        var end = start + 1
        while end < lines.count, Self.tableHeader(lines[end]) == nil { end += 1 }
        // Keep the comments just above the next table with it.
        while end > start + 1, lines[end - 1].trimmingCharacters(in: .whitespaces).hasPrefix("#") { end -= 1 }
        lines.removeSubrange(start..<end)
        var text = lines.joined(separator: "\n")
        if defaultName == name { text = Self.settingDefault(nil, in: text) }
        return text
    }

    /// The file with `name` as its default.
    public func settingDefault(_ name: String) throws(CommandFailure) -> String {
        guard destinations[name] != nil else { throw .refused(unknown(name)) }
        return Self.settingDefault(name, in: text)
    }

    /// Said when the command line names a destination the file does not have.
    public func unknown(_ name: String) -> String {
        if destinations.isEmpty {
            return "there is no destination \(name): \(path) names none yet (add one: uploadmon destinations add \(name) --to URL)"
        }
        return "there is no destination \(name) in \(path) (it has \(names.joined(separator: ", ")))"
    }

    /// Writes `text` as the file, once it reads back without an error: to a new file beside it
    /// (0600), then renamed over it; the folder made (0700) when missing.
    public func write(_ text: String, home: String) throws(CommandFailure) -> DestinationFile {
        let written = try Self.parse(text, path: path, home: home)
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .failed("cannot make the folder \(folder): \(error.localizedDescription)")
        }
        let temporary = path + ".new-\(getpid())"
        let bytes = Array(text.utf8)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .failed("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let wrote = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard wrote == bytes.count, synced, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .failed("cannot write \(path): \(reason)")
        }
        return written
    }

    static let header = """
        # uploadmon's destinations: `uploadmon send FILE --to NAME`, `uploadmon --to NAME`.
        # Each [destinations.NAME] has a url and any of the sending options by their long names
        # (field, form, headers, protocol, proxy, concurrency, limit-rate, strip-location, …).
        # No secrets here: logins come from ~/.netrc (netrc = true), the environment, or a header
        # file (headers = ["@~/.config/uploadmon/NAME.headers"], chmod 600).

        """

    /// The name of the table a line opens (`[a.b]` → `a.b`), or nil.
    static func tableHeader(_ line: String) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") else { return nil }
        var inside = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
        if inside.hasPrefix("[") { inside = inside.dropFirst() }
        return inside.split(separator: ".").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"'")) }
            .joined(separator: ".")
    }

    /// `text` with its top-level `default = …` line set to `name` (or removed for nil), or one
    /// added before the first table.
    static func settingDefault(_ name: String?, in text: String) -> String {
        var lines = text.components(separatedBy: "\n")
        let firstTable = lines.firstIndex { tableHeader($0) != nil } ?? lines.count
        let line = name.map { "default = \(quoted($0))" }
        if let index = lines[..<firstTable].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("default") && $0.contains("=") }) {
            if let line { lines[index] = line } else { lines.remove(at: index) }
        } else if let line {
            // After the opening comments, before the first table.
            var at = 0
            while at < firstTable, lines[at].trimmingCharacters(in: .whitespaces).hasPrefix("#") { at += 1 }
            lines.insert(contentsOf: [line], at: at)
            if at + 1 < lines.count, !lines[at + 1].trimmingCharacters(in: .whitespaces).isEmpty { lines.insert("", at: at + 1) }
        }
        return lines.joined(separator: "\n")
    }

    /// A TOML basic string.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += String(format: "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func literal(_ value: SavedDestination.Value) -> String {
        switch value {
        case .text(let text): quoted(text)
        case .number(let number): String(number)
        case .flag(let flag): flag ? "true" : "false"
        case .list(let items): "[" + items.map(quoted).joined(separator: ", ") + "]"
        }
    }
}
