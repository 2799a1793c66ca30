import Foundation
import Testing
import UploadTesting

/// `uploadmon completions install` puts each shell's script where that shell finds a user's
/// own, and bash then completes the commands.
@Suite(.timeLimit(.minutes(2))) struct CompletionsTests {
    @Test func theScriptsGoWhereTheShellsLookAndBashCompletesWithIt() async throws {
        let home = TestFiles.makeTemporaryDirectory("completions")
        let environment = ["HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": "relative/ignored"]
        let run = try await CLIRun.run(["completions", "install"], environment: environment)
        #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
        let bash = home + "/data/bash-completion/completions/uploadmon"
        let zsh = home + "/data/zsh/site-functions/_uploadmon"
        let fish = home + "/.config/fish/completions/uploadmon.fish"
        for path in [bash, zsh, fish] {
            #expect(FileManager.default.fileExists(atPath: path), "\(path): \(run.stdout)")
            #expect(run.stdout.contains(path))
        }
        #expect(try String(contentsOfFile: zsh, encoding: .utf8).hasPrefix("#compdef uploadmon"))
        #expect(run.stdout.contains("fpath=(\(home)/data/zsh/site-functions $fpath)"))
        // bash, as a new shell would load it: the commands are offered after `uploadmon `.
        let script = """
            source '\(bash)'
            COMP_WORDS=(uploadmon se); COMP_CWORD=1; COMP_LINE='uploadmon se'; COMP_POINT=${#COMP_LINE}
            $(complete -p uploadmon | sed -E 's/.*-F ([^ ]+).*/\\1/') uploadmon se uploadmon
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let bashRun = Process()
        bashRun.executableURL = URL(fileURLWithPath: "/bin/bash")
        bashRun.arguments = ["--norc", "-c", script]
        let out = Pipe()
        bashRun.standardOutput = out
        bashRun.standardError = out
        try bashRun.run()
        let said = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        bashRun.waitUntilExit()
        #expect(said.split(separator: "\n").contains("send") && said.split(separator: "\n").contains("serve"), "\(said)")

        // One shell only; a shell it does not know is a usage error; a place it cannot write says which.
        let onlyFish = try await CLIRun.run(["completions", "install", "--shell", "fish"], environment: environment)
        #expect(onlyFish.status == 0 && !onlyFish.stdout.contains("bash:"))
        let unknown = try await CLIRun.run(["completions", "install", "--shell", "tcsh"], environment: environment)
        #expect(unknown.status == 64 && unknown.stderr.contains("--shell tcsh"), "\(unknown.stderr)")
        try "".write(toFile: home + "/blocked", atomically: true, encoding: .utf8)
        let blocked = try await CLIRun.run(["completions", "install", "--shell", "bash"], environment: ["HOME": home, "XDG_DATA_HOME": home + "/blocked"])
        #expect(blocked.status == 1 && blocked.stderr.contains("cannot write the bash completion to \(home)/blocked/bash-completion"), "\(blocked.stderr)")
    }
}
