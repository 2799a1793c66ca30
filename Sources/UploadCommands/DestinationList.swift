import Foundation
import UploadCore

/// `--to @LIST`: every file to a URL of its own — the presigned URLs a service handed out, one
/// per object. A line is `FILE URL` (the URL is the line's last word: URLs hold no blanks, so a
/// path may) or a URL alone, paired in order with the files named on the command line; blank
/// lines and lines starting with `#` are skipped. Every URL must be on one origin (scheme, host,
/// port): the proxy, the `-H` headers and the connections are chosen once, for it.
public struct DestinationList: Sendable, Equatable {
    /// One file and the URL it goes to.
    public struct Line: Sendable, Equatable {
        public var file: String?
        public var url: String
    }

    public var lines: [Line]
    /// Where the list came from, as the messages name it.
    public var name: String

    /// The list in `text`; every URL checked, the origins compared.
    public static func parse(_ text: String, name: String) throws(CommandFailure) -> DestinationList {
        var lines: [Line] = []
        var origin: (Origin, Int)?
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") { continue }
            let number = index + 1
            let split = line.lastIndex { $0 == " " || $0 == "\t" }
            let url = String(split.map { line[line.index(after: $0)...] } ?? Substring(line))
            let file = split.map { line[..<$0].trimmingCharacters(in: .whitespaces) }
            let endpoint: Endpoint
            do throws(UploadInputError) {
                guard !S3Location.isS3(url) else {
                    throw .unsupportedDestination(url: url)
                }
                endpoint = try Endpoint(parsing: url)
            } catch {
                throw .usage("line \(number) of the destination list \(name): \(error.description)")
            }
            if let (first, at) = origin, first != endpoint.origin {
                throw .usage(
                    "the destination list \(name) names two origins, \(first) (line \(at)) and \(endpoint.origin) (line \(number)): "
                        + "one list goes to one origin (its proxy, headers and connections are chosen once); send each origin's files with a list of their own")
            }
            if origin == nil { origin = (endpoint.origin, number) }
            lines.append(Line(file: file, url: url))
        }
        guard !lines.isEmpty else { throw .usage("the destination list \(name) names no URL") }
        let withFiles = lines.filter { $0.file != nil }.count
        guard withFiles == 0 || withFiles == lines.count else {
            throw .usage(
                "the destination list \(name) names a file on some lines and not on others: give `FILE URL` on every line, or URLs alone paired with the files on the command line"
            )
        }
        return DestinationList(lines: lines, name: name)
    }

    /// The list at `path` ('-': standard input).
    public static func read(_ path: String) throws(CommandFailure) -> DestinationList {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let read = FileManager.default.contents(atPath: path) else {
                throw .usage("cannot read the destination list \(path): \(String(cString: strerror(errno)))")
            }
            data = read
        }
        return try parse(String(decoding: data, as: UTF8.self), name: path == "-" ? "(standard input)" : path)
    }

    /// The URL every file goes to: the list's own files, or `files` in the list's order.
    public func destinations(for files: [String]) throws(CommandFailure) -> [(file: String, url: String)] {
        if lines.first?.file != nil {
            guard files.isEmpty else {
                throw .usage("the destination list \(name) names the files itself; name none on the command line (\(files.count) were given)")
            }
            return lines.map { ($0.file ?? "", $0.url) }
        }
        guard files.count == lines.count else {
            throw .usage("the destination list \(name) has \(lines.count) URL(s) for \(files.count) file(s): each file needs one")
        }
        return zip(files, lines).map { ($0, $1.url) }
    }

    /// Said by a command that needs one `--to` URL (the monitor, watch).
    public static func oneURLNeeded(by command: String) -> String {
        "--to @LIST gives each file of a send its own URL; \(command) needs one --to URL"
    }

    /// `--netrc` finds a login for one host; a list's URLs carry their own authorization.
    public static let netrcRefusal =
        "--netrc finds the login for one --to URL; a destination list's URLs carry their own (a presigned URL's signature), or give -H"

    /// The first URL: the origin the proxy and headers are chosen for.
    public var firstURL: String { lines[0].url }
}
