import Foundation
import UploadCore

/// What bare `uploadmon` shows when there is nowhere to send yet: what the tool is and the two
/// ways to start — the demo, or the URL photos go to, saved as the default destination so the
/// next `uploadmon` opens the monitor on it. Line by line on the terminal, before any screen is
/// taken (a typed URL can be pasted, edited and seen as it is).
public struct FirstRun {
    /// What to run after it.
    public enum Next: Sendable, Equatable {
        /// These arguments, as if typed (`demo`, or the monitor on the new destination).
        case run([String])
        case quit
    }

    public var file: DestinationFile
    public var home: String
    /// The monitor's arguments as typed (a folder, its own options).
    public var passing: [String]
    let readLine: () -> String?
    let write: (String) -> Void

    public init(file: DestinationFile, home: String, passing: [String], readLine: @escaping () -> String?, write: @escaping (String) -> Void) {
        self.file = file
        self.home = home
        self.passing = passing
        self.readLine = readLine
        self.write = write
    }

    /// Said where there is no terminal to ask on.
    public static func guidance(file path: String) -> String {
        """
        uploadmon sends photos to an HTTP endpoint and shows each upload's progress and the server's answer.
        Nothing to send to yet. To start:
          uploadmon demo                                  the monitor against a receiver on this machine
          uploadmon --to https://example.com/upload       the monitor, sending to your endpoint
          uploadmon destinations add NAME --to URL        save it in \(path) (then: uploadmon --to NAME)
          uploadmon send FILE… --to URL                   send without the monitor
        More: uploadmon --help
        """
    }

    public func run() throws(CommandFailure) -> Next {
        write(
            """
            uploadmon sends photos to an HTTP endpoint and shows each upload's progress and the server's answer.

            Nothing to send to yet. Start with one of these:
              d   the demo: the monitor against a receiver on this machine, with sample photos
              u   the URL your photos go to (saved as a destination in \(file.path), used next time)
              q   quit

            Later: uploadmon destinations add NAME --to URL · uploadmon send FILE --to URL · uploadmon --help


            """)
        while true {
            write("Your choice [d/u/q]: ")
            guard let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() else { return .quit }
            switch answer {
            case "d", "demo": return .run(["demo"])
            case "q", "quit", "": return .quit
            case "u", "url": return try askURL()
            default:
                // A URL typed straight away is taken as one.
                if answer.contains("://") || answer.contains(".") || answer.contains(":") { return try askURL(answer) }
                write("d, u or q, please.\n")
            }
        }
    }

    /// The URL (asked until it is one the tool can send to), then its name; saved as the default.
    func askURL(_ typed: String? = nil) throws(CommandFailure) -> Next {
        var url = typed
        while true {
            if url == nil {
                write("URL (e.g. https://example.com/upload or s3://bucket/prefix/; empty to quit): ")
                guard let line = readLine()?.trimmingCharacters(in: .whitespaces), !line.isEmpty else { return .quit }
                url = line
            }
            let choices = UploadChoices(to: url ?? "")
            let refusal =
                choices.refusal(environment: ProcessInfo.processInfo.environment)
                ?? SecretRule.refusal(key: "url", value: .text(choices.to), at: "that URL")
            if let refusal {
                write("\(refusal)\n")
                url = nil
                continue
            }
            let suggested = Self.suggestedName(for: choices.to, taken: Set(file.destinations.keys))
            write("A name for it [\(suggested)]: ")
            var name = readLine()?.trimmingCharacters(in: .whitespaces) ?? ""
            if name.isEmpty { name = suggested }
            guard SavedDestination.isValidName(name), file.destinations[name] == nil else {
                write("\(name): a name is a letter, then letters, digits, - or _, and not one already saved; try again.\n")
                continue
            }
            let text = try file.adding(SavedDestination(name: name, url: choices.to), makeDefault: true)
            _ = try file.write(text, home: home)
            write("Saved as \(name) (the default) in \(file.path). Next time: uploadmon (or uploadmon --to \(name)).\n")
            return .run(["--to", name] + passing)
        }
    }

    /// A name from the URL's host: its first label (`photos.example.com` → `photos`), or `s3`
    /// with the bucket, else `server`; a number added when taken.
    static func suggestedName(for url: String, taken: Set<String>) -> String {
        var base = "server"
        if S3Location.isS3(url), let bucket = (try? S3Location(parsing: url))?.bucket {
            base = bucket
        } else if let host = URLComponents(string: url)?.host, let label = host.split(separator: ".").first,
            !host.allSatisfy({ $0.isNumber || $0 == "." || $0 == ":" })
        {
            base = String(label)
        }
        base = String(base.unicodeScalars.filter { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") })
        if !SavedDestination.isValidName(base) { base = "server" }
        var name = base
        var number = 2
        while taken.contains(name) {
            name = "\(base)\(number)"
            number += 1
        }
        return name
    }
}

extension DestinationArguments {
    /// The command line to parse: as typed, with a saved destination put in for `--to NAME`
    /// (or the default), or — for bare `uploadmon` with nothing saved — what the first run
    /// chose (asked on the terminal; said on standard error, exit 64, where there is none).
    /// Nil: the user chose to quit.
    public static func commandLine(_ arguments: [String], environment: [String: String], terminal: Bool) throws(CommandFailure) -> [String]? {
        let load = { () throws(CommandFailure) -> DestinationFile in try DestinationFile.load(environment: environment) }
        switch try expand(arguments, loading: load) {
        case .unchanged: return arguments
        case .expanded(let expanded): return expanded
        case .firstRun(let passing):
            let file = try load()
            guard terminal else {
                FileHandle.standardError.write(Data((FirstRun.guidance(file: file.path) + "\n").utf8))
                throw .said(status: 64)
            }
            let run = FirstRun(
                file: file, home: environment["HOME"] ?? NSHomeDirectory(), passing: passing,
                readLine: { Swift.readLine(strippingNewline: true) },
                write: { FileHandle.standardOutput.write(Data($0.utf8)) })
            guard case .run(let chosen) = try run.run() else { return nil }
            if case .expanded(let expanded) = try expand(chosen, loading: load) { return expanded }
            return chosen
        }
    }
}
