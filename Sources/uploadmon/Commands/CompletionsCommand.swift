import ArgumentParser
import UploadCommands

/// `uploadmon completions install`: tab completion for bash, zsh and fish.
struct CompletionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completions", abstract: "Install tab completion for bash, zsh and fish.", subcommands: [Install.self])

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install", abstract: "Write the completion scripts where your shells find them.", discussion: CompletionFiles.help)

        @Option(name: .long, help: ArgumentHelp("Only this shell (repeatable): bash, zsh or fish. Default: all three.", valueName: "shell"))
        var shell: [String] = []

        func run() throws {
            let said = try CompletionFiles().install(try CompletionFiles.shells(named: shell)) { shell in
                Uploadmon.completionScript(for: CompletionShell(rawValue: shell.rawValue) ?? .bash)
            }
            print("Wrote the completion of uploadmon for\n  " + said.joined(separator: "\n  "))
        }
    }
}
