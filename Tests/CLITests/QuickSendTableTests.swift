import Foundation
import Testing
import UploadCommands

/// `send`'s quick reader (`SendInvocation.quick`) keeps a table of its own beside the
/// ArgumentParser declaration, to spare every `send` the declaration's reflection at start-up.
/// An option added to the declaration and not to the table would still work, only slowly (the
/// command line goes to ArgumentParser): this reads the declaration as ArgumentParser describes
/// it (`--experimental-dump-help`) and checks that the quick reader takes every option in it.
@Suite struct QuickSendTableTests {
    /// Left to ArgumentParser on purpose: they print and exit, no upload starts.
    static let leftToArgumentParser: Set<String> = ["--help", "-h", "--version"]

    /// A value each option accepts (the reader gives up on a value it cannot take as typed).
    static let sample: [String: String] = [
        "--protocol": "tus", "--concurrency": "2", "--retries": "2", "--retry": "2", "--quality": "90", "--max-dimension": "100",
        "--convert": "jpeg", "--to": "http://h/p",
    ]

    @Test func theQuickReaderTakesEveryOptionSendDeclares() async throws {
        let dump = try await CLIRun.run(["send", "--experimental-dump-help"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        let command = try #require(tool["command"] as? [String: Any])
        let arguments = try #require(command["arguments"] as? [[String: Any]])
        var checked = 0
        for argument in arguments {
            guard let kind = argument["kind"] as? String, kind == "option" || kind == "flag" else { continue }
            for name in argument["names"] as? [[String: String]] ?? [] {
                let spelled = (name["kind"] == "short" ? "-" : "--") + (name["name"] ?? "")
                guard !Self.leftToArgumentParser.contains(spelled) else { continue }
                var line = ["photo.jpg"]
                if spelled != "--to" { line += ["--to", "http://h/p"] }
                line += kind == "flag" ? [spelled] : [spelled, Self.sample[spelled] ?? "x"]
                #expect(
                    SendInvocation.quick(line) != nil,
                    "send declares \(spelled), which the quick reader does not take: add it to SendInvocation.quick's table")
                checked += 1
            }
        }
        #expect(checked > 40, "\(checked) options read from the declaration")
    }
}
