/// Why a command stopped, and with which exit status: what the commands decide in this library
/// and the executable turns into a message and a status (usage errors with the command's usage).
public struct CommandFailure: Error, CustomStringConvertible, Equatable {
    /// What went wrong, which decides the exit status.
    public enum Kind: Equatable, Sendable {
        /// The command line or its input was wrong (exit 64, shown with the usage).
        case usage
        /// The command could not do what it was asked (exit 1).
        case failed
        /// What the command was given is refused, said without the usage (exit 64): a
        /// command that parsed but whose values cannot be taken.
        case refused
        /// Already said in full on standard error; exit with this status and say nothing more.
        case said(status: Int32)
    }

    public let kind: Kind
    public let message: String

    public static func usage(_ message: String) -> CommandFailure { CommandFailure(kind: .usage, message: message) }
    public static func failed(_ message: String) -> CommandFailure { CommandFailure(kind: .failed, message: message) }
    public static func refused(_ message: String) -> CommandFailure { CommandFailure(kind: .refused, message: message) }
    public static func said(status: Int32) -> CommandFailure { CommandFailure(kind: .said(status: status), message: "") }

    public var description: String { message }
}

/// Exit statuses of `uploadmon send`, documented in its help.
public enum SendExit {
    /// Every upload got a 2xx answer.
    public static let success: Int32 = 0
    /// At least one upload got an answer that was not 2xx (and none failed without an answer).
    public static let httpError: Int32 = 1
    /// At least one upload got no answer: connection, timeout, file or cancellation.
    public static let transportError: Int32 = 2
    /// Every upload got a 2xx answer, but at least one answer was cut off before its end (the
    /// answer timeout, a closed connection): the file arrived, what the server said of it did
    /// not all arrive.
    public static let answerCut: Int32 = 3
    /// The command line was wrong or a file was refused before anything was sent.
    public static let usage: Int32 = 64
    /// Ctrl-C (130) or SIGTERM (143) cancelled the uploads that had not finished.
    public static func interrupted(by signal: Int32) -> Int32 { 128 + signal }
}
