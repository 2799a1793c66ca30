import Foundation
import UploadReports

/// Where a command's words go: standard output and error in the program, a list in tests.
/// `say`/`complain` escape what came from outside (see `Console`); `write` is raw.
public struct CommandOutput: Sendable {
    public var say: @Sendable (String) -> Void
    public var complain: @Sendable (String) -> Void
    public var sayJSON: @Sendable (String) -> Void
    public var write: @Sendable (String) -> Void

    public init(
        say: @escaping @Sendable (String) -> Void, complain: @escaping @Sendable (String) -> Void,
        sayJSON: @escaping @Sendable (String) -> Void, write: @escaping @Sendable (String) -> Void
    ) {
        self.say = say
        self.complain = complain
        self.sayJSON = sayJSON
        self.write = write
    }

    public static let standard = CommandOutput(
        say: { Console.say($0) }, complain: { Console.complain($0) }, sayJSON: { Console.sayJSON($0) },
        write: { Console.put($0, to: STDOUT_FILENO) })
}
