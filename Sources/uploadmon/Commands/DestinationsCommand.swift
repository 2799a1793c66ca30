import ArgumentParser
import Foundation
import UploadCommands

/// `uploadmon destinations`: named destinations, as rclone has remotes.
struct DestinationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "destinations",
        abstract: "List, add, remove and check saved destinations (used as --to NAME).",
        discussion: CommandHelp.destinations,
        subcommands: [List.self, Add.self, Remove.self, Default.self, Check.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the saved destinations (the default marked *).")
        func run() throws { print(try DestinationCommands().list()) }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Save a destination: a name, --to URL and the options to keep with it.")
        @Argument(help: "The destination's name: a letter, then letters, digits, - or _.")
        var name: String
        @Flag(name: .long, help: "Make it the default destination (the first one is).")
        var `default` = false
        @OptionGroup var upload: UploadOptions

        func run() throws {
            print(
                try DestinationCommands().add(
                    name: name, choices: upload.choices, makeDefault: `default`,
                    directory: FileManager.default.currentDirectoryPath))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a saved destination.")
        @Argument(help: "The destination's name.")
        var name: String
        func run() throws { print(try DestinationCommands().remove(name: name)) }
    }

    struct Default: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "default", abstract: "Make a saved destination the default.")
        @Argument(help: "The destination's name.")
        var name: String
        func run() throws { print(try DestinationCommands().setDefault(name: name)) }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check", abstract: "Prove a destination's URL and credentials with one request that uploads nothing.",
            discussion: CommandHelp.destinations2)
        @OptionGroup var upload: UploadOptions
        /// Set when `--to` named a saved destination (`DestinationArguments`).
        @Option(name: .customLong("destination-name"), help: .hidden)
        var destinationName: String?

        func run() async throws {
            let (text, status) = try await DestinationCommands().check(choices: upload.choices, named: destinationName)
            print(text)
            throw ExitCode(status)
        }
    }
}
