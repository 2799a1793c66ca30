import Foundation

/// `--to NAME` on the command line of a sending command (`send`, the monitor, `watch`): the
/// saved destination's URL and options put in its place, before the command line is parsed, so
/// every command and both of `send`'s parsers read it as if typed. Options given on the command
/// line win over the destination's (`-F`/`-H` add to its own). Without `--to`, the default
/// destination is used; with no destination at all, bare `uploadmon` is a first run.
///
/// A `--to` value that is a URL (it has `://`, a colon, a slash or a dot) or a list (`@FILE`)
/// is left as it is, and the file is not read: a `send` to a URL starts as before.
public enum DestinationArguments {
    /// What the command line becomes.
    public enum Outcome: Sendable, Equatable {
        case unchanged
        case expanded([String])
        /// Bare `uploadmon` (or with a folder, or the monitor's own options) and nothing
        /// configured: the first-run screen, then the monitor with these arguments.
        case firstRun(passing: [String])
    }

    /// The subcommands; the first argument that is none of these is the monitor's.
    public static let subcommands: Set<String> = [
        "monitor", "send", "serve", "demo", "presign", "status", "retry", "cancel", "watch", "jobs", "agent", "completions", "destinations", "help",
    ]
    static let sending: Set<String> = ["monitor", "send", "watch"]
    static let informational: Set<String> = ["-h", "--help", "--version", "--generate-completion-script", "--experimental-dump-help"]

    /// Whether `value` after `--to` names a destination rather than a URL, a host or a list.
    public static func isName(_ value: String) -> Bool {
        !value.hasPrefix("@") && !value.contains(where: { ":/.[".contains($0) }) && !value.isEmpty
    }

    public static func expand(
        _ arguments: [String], loading file: () throws(CommandFailure) -> DestinationFile
    ) throws(CommandFailure) -> Outcome {
        guard !arguments.contains(where: informational.contains) else { return .unchanged }
        var explicit = arguments.first.map(subcommands.contains) ?? false
        var command = explicit ? arguments[0] : "monitor"
        var prefix = explicit ? [command] : []
        var rest = Array(arguments.dropFirst(prefix.count))
        // `destinations check [NAME]`: the name is its --to.
        if command == "destinations", rest.first == "check" {
            (command, prefix, explicit) = ("check", ["destinations", "check"], true)
            rest.removeFirst()
            if let name = rest.first, !name.hasPrefix("-") { rest.replaceSubrange(0..<1, with: ["--to", name]) }
        }
        guard sending.contains(command) || command == "check" else { return .unchanged }
        let options = rest.prefix { $0 != "--" }
        var given: Set<String> = []
        var to: (value: String, at: Range<Int>)?
        for (index, argument) in options.enumerated() where argument.hasPrefix("-") && argument != "-" {
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            given.insert(name)
            if argument == "--to", index + 1 < options.count {
                to = (options[index + 1], index..<index + 2)
            } else if argument.hasPrefix("--to=") {
                to = (String(argument.dropFirst(5)), index..<index + 1)
            }
        }
        let destination: SavedDestination
        var remaining = rest
        if let to {
            guard isName(to.value) else { return .unchanged }
            let file = try file()
            guard let named = file.destinations[to.value] else {
                throw .refused(file.unknown(to.value) + "; for a host of that name, write its URL (http://\(to.value)/…)")
            }
            destination = named
            remaining.removeSubrange(to.at)
            given.remove("--to")
        } else {
            let file = try file()
            guard let chosen = file.destination(named: nil) else {
                if command == "check" {
                    throw .refused(
                        file.destinations.isEmpty
                            ? "there is no destination to check: \(file.path) names none yet (uploadmon destinations add NAME --to URL), or give --to URL"
                            : "name the destination to check (there is no default): \(file.names.joined(separator: ", "))")
                }
                // Bare `uploadmon` or `uploadmon DIR` (with the monitor's own options at most),
                // nothing to send to: say how to start.
                if command == "monitor", onlyMonitorOptions(rest) {
                    return .firstRun(passing: rest)
                }
                return .unchanged
            }
            destination = chosen
        }
        // The agent runs a background send's and a watch's uploads, as many at once as its own
        // settings say: a destination's concurrency is for the processes that run them.
        let skipping: Set<String> = command == "watch" || rest.contains("--background") ? ["concurrency"] : []
        var inserted = destination.arguments(leavingOut: given, skipping: skipping)
        // The monitor shows the name, and `check` says it.
        if command == "check" || command == "monitor" { inserted += ["--destination-name", destination.name] }
        return .expanded(prefix + inserted + remaining)
    }

    /// The monitor's options that say nothing of where uploads go, and whether they take a value.
    static let monitorOwn: [String: Bool] = ["--no-agent": false, "--no-mouse": false, "--notify": true, "--graphics": true]

    /// Whether `arguments` are at most a folder and the monitor's own options.
    static func onlyMonitorOptions(_ arguments: [String]) -> Bool {
        var operands = 0
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-") else {
                operands += 1
                continue
            }
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            guard let takesValue = monitorOwn[name] else { return false }
            if takesValue, !argument.contains("=") { index += 1 }
        }
        return operands <= 1
    }
}
