import NIOConcurrencyHelpers
import UploadCommands

/// A `CommandOutput` that keeps what a command said, for tests.
final class OutputRecorder: Sendable {
    private let lines = NIOLockedValueBox<[(stream: String, text: String)]>([])

    var output: CommandOutput {
        CommandOutput(
            say: { [lines] text in lines.withLockedValue { $0.append(("out", text)) } },
            complain: { [lines] text in lines.withLockedValue { $0.append(("err", text)) } },
            sayJSON: { [lines] text in lines.withLockedValue { $0.append(("json", text)) } },
            write: { [lines] text in lines.withLockedValue { $0.append(("out", text)) } })
    }

    func said(_ stream: String = "out") -> [String] { lines.withLockedValue { $0.filter { $0.stream == stream }.map(\.text) } }
    func clear() { lines.withLockedValue { $0 = [] } }
    var all: String { lines.withLockedValue { $0.map(\.text).joined(separator: "\n") } }
}
