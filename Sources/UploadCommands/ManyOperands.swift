import Foundation

/// ArgumentParser gathers the values of an array argument in quadratic time (for each value it
/// copies the array and the set of positions it came from): `send` given 10,000 files by a
/// shell glob spent 8.6 s of CPU parsing before it looked at one. With many arguments, the
/// file operands after the first are taken out beforehand and added to the parsed command.
public enum ManyOperands {
    /// Past this many arguments, operands are taken out first (below it, parsing costs little).
    public static let threshold = 256

    /// The options that take a value (`--to`, `-H`), from ArgumentParser's own description of
    /// the command (the JSON of `--experimental-dump-help`).
    public static func valueOptions(fromHelpDump json: String) -> Set<String> {
        struct Dump: Decodable {
            struct Command: Decodable { let arguments: [Argument]? }
            struct Argument: Decodable {
                struct Name: Decodable {
                    let kind: String
                    let name: String
                }
                let kind: String
                let names: [Name]?
            }
            let command: Command
        }
        guard let dump = try? JSONDecoder().decode(Dump.self, from: Data(json.utf8)) else { return [] }
        var names: Set<String> = []
        for argument in dump.command.arguments ?? [] where argument.kind == "option" {
            for name in argument.names ?? [] {
                switch name.kind {
                case "long": names.insert("--" + name.name)
                case "short", "longWithSingleDash": names.insert("-" + name.name)
                default: break
                }
            }
        }
        return names
    }

    /// `arguments` (after the command's name) as what ArgumentParser parses — every option with
    /// its value, and the first operand where it stood — and the other operands, in order. Nil
    /// when an argument cannot be told apart with certainty (a short option with its value
    /// attached, a value option at the end): the caller then parses them all as usual.
    public static func split(_ arguments: [String], valueOptions: Set<String>) -> (parsed: [String], operands: [String])? {
        var parsed: [String] = []
        var operands: [String] = []
        parsed.reserveCapacity(32)
        operands.reserveCapacity(arguments.count)
        var firstTaken = false
        func operand(_ argument: String) {
            if firstTaken {
                operands.append(argument)
            } else {
                firstTaken = true
                parsed.append(argument)
            }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                // Everything after it is an operand; ArgumentParser needs the marker only when
                // the first of them is still to come.
                if !firstTaken, index < arguments.count { parsed.append(argument) }
                for rest in arguments[index...] { operand(rest) }
                return (parsed, operands)
            }
            guard argument.hasPrefix("-"), argument != "-" else {
                operand(argument)
                continue
            }
            parsed.append(argument)
            if argument.hasPrefix("--") {
                // `--name=value` carries its value; a flag takes none.
                guard !argument.contains("="), valueOptions.contains(argument) else { continue }
            } else {
                guard argument.count == 2 else {
                    // `-Hvalue`, or short flags run together: not told apart here.
                    if valueOptions.contains(String(argument.prefix(2))) { return nil }
                    continue
                }
                guard valueOptions.contains(argument) else { continue }
            }
            guard index < arguments.count else { return nil }
            parsed.append(arguments[index])
            index += 1
        }
        return (parsed, operands)
    }
}
