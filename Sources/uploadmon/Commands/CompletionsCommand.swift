import ArgumentParser
import Foundation
import UploadCommands

/// `uploadmon completions install`: tab completion for bash, zsh and fish.
struct CompletionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completions",
        abstract: "Install tab completion for bash, zsh and fish.",
        subcommands: [Install.self])

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "install",
            abstract: "Write the completion scripts where your shells find them.",
            discussion: """
            bash: $XDG_DATA_HOME/bash-completion/completions/uploadmon; zsh: \
            $XDG_DATA_HOME/zsh/site-functions/_uploadmon (that folder must be in fpath); fish: \
            $XDG_CONFIG_HOME/fish/completions/uploadmon.fish. XDG_DATA_HOME is ~/.local/share and \
            XDG_CONFIG_HOME ~/.config when unset. Nothing needs root. To print one instead: \
            uploadmon --generate-completion-script bash|zsh|fish.
            """)

        @Option(name: .long, help: ArgumentHelp("Only this shell (repeatable): bash, zsh or fish. Default: all three.", valueName: "shell"))
        var shell: [String] = []

        func validate() throws {
            for name in shell where CompletionFiles.Shell(rawValue: name) == nil {
                throw ValidationError("--shell \(name): bash, zsh or fish")
            }
        }

        func run() throws {
            let shells = shell.isEmpty ? CompletionFiles.Shell.allCases : shell.compactMap(CompletionFiles.Shell.init(rawValue:))
            let said = try CompletionFiles().install(shells) { shell in
                Uploadmon.completionScript(for: CompletionShell(rawValue: shell.rawValue) ?? .bash)
            }
            print("Wrote the completion of uploadmon for\n  " + said.joined(separator: "\n  "))
        }
    }
}
