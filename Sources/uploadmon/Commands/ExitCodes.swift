import ArgumentParser

/// Exit statuses of `uploadmon send`, documented in its help.
enum SendExit {
    /// Every upload got a 2xx answer.
    static let success = ExitCode(0)
    /// At least one upload got an answer that was not 2xx (and none failed without an answer).
    static let httpError = ExitCode(1)
    /// At least one upload got no answer: connection, timeout, file or cancellation.
    static let transportError = ExitCode(2)
    /// Every upload got a 2xx answer, but at least one answer was cut off before its end (the
    /// answer timeout, a closed connection): the file arrived, what the server said of it did
    /// not all arrive.
    static let answerCut = ExitCode(3)
    /// The command line was wrong or a file was refused before anything was sent.
    static let usage = ExitCode(64)
    /// Ctrl-C (130) or SIGTERM (143) cancelled the uploads that had not finished.
    static func interrupted(by signal: Int32) -> ExitCode { ExitCode(128 + signal) }
}
