import Foundation

/// `uploadmon completions install`: the shells' completion scripts written where each shell
/// finds a user's own (bash-completion and fish load them by themselves; zsh needs the folder
/// in `fpath`, which is said).
public struct CompletionFiles {
    public enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    /// `completions install`'s help.
    public static let help = """
        bash: $XDG_DATA_HOME/bash-completion/completions/uploadmon; zsh: \
        $XDG_DATA_HOME/zsh/site-functions/_uploadmon (that folder must be in fpath); fish: \
        $XDG_CONFIG_HOME/fish/completions/uploadmon.fish. XDG_DATA_HOME is ~/.local/share and \
        XDG_CONFIG_HOME ~/.config when unset. Nothing needs root. To print one instead: \
        uploadmon --generate-completion-script bash|zsh|fish.
        """

    /// The shells `--shell` names (none: all three); a name that is not one is a usage error.
    public static func shells(named names: [String]) throws(CommandFailure) -> [Shell] {
        guard !names.isEmpty else { return Shell.allCases }
        var shells: [Shell] = []
        for name in names {
            guard let shell = Shell(rawValue: name) else { throw .usage("--shell \(name): bash, zsh or fish") }
            shells.append(shell)
        }
        return shells
    }

    public var environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    private var home: String { environment["HOME"] ?? NSHomeDirectory() }

    /// `XDG_DATA_HOME`, else `~/.local/share` (an XDG variable that is not absolute is ignored, as the spec says).
    private var dataHome: String { Self.absolute(environment["XDG_DATA_HOME"]) ?? home + "/.local/share" }
    private var configHome: String { Self.absolute(environment["XDG_CONFIG_HOME"]) ?? home + "/.config" }

    private static func absolute(_ path: String?) -> String? {
        guard let path, path.hasPrefix("/") else { return nil }
        return path
    }

    /// Where `shell` looks for a user's completion of `uploadmon`.
    public func path(for shell: Shell) -> String {
        switch shell {
        case .bash: dataHome + "/bash-completion/completions/uploadmon"
        case .zsh: dataHome + "/zsh/site-functions/_uploadmon"
        case .fish: configHome + "/fish/completions/uploadmon.fish"
        }
    }

    /// Writes each shell's `script(shell)` to its place; what was written, and what to do for it
    /// to be used, in lines to print.
    public func install(_ shells: [Shell], script: (Shell) -> String) throws(CommandFailure) -> [String] {
        var said: [String] = []
        for shell in shells {
            let path = path(for: shell)
            do {
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try script(shell).write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw .failed("cannot write the \(shell.rawValue) completion to \(path): \(error.localizedDescription)")
            }
            switch shell {
            case .bash:
                said.append("bash: \(path) (bash-completion loads it in new shells)")
            case .zsh:
                let folder = (path as NSString).deletingLastPathComponent
                said.append("zsh:  \(path) (add `fpath=(\(folder) $fpath)` before `compinit` in ~/.zshrc if it is not there)")
            case .fish:
                said.append("fish: \(path) (fish loads it in new shells)")
            }
        }
        return said
    }
}
