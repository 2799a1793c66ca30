import UploadCore
/// What both resumable machines (the draft's and tus's) keep through one attempt beside their
/// own state: the reports not yet handed to the shell, the rounds begun (a round is a creation
/// or a `HEAD`, then the body), and why the last one started over.
struct ResumableRounds: Sendable {
    /// Rounds one attempt may begin before giving up.
    static let limit = 3

    private var reports: [ResumableUploadMachine.Report] = []
    private var round = 0
    private var startedOver: String?

    mutating func report(_ report: ResumableUploadMachine.Report) {
        reports.append(report)
    }

    /// What the server had is given up, for `why`: the upload starts over.
    mutating func startOver(_ why: String) {
        startedOver = why
        reports.append(.resumable(nil, startedOver: why))
    }

    /// Begins a round; the attempt's end instead when `limit` rounds were begun already.
    mutating func begin() -> AttemptResult? {
        round += 1
        guard round > Self.limit else { return nil }
        return AttemptResult(
            outcome: .failed(UploadFailure(.other, "the server keeps losing the upload (\(startedOver ?? "gone")); giving up")),
            response: nil, bytesSent: 0)
    }

    /// The reports so far, each handed out once.
    mutating func take() -> [ResumableUploadMachine.Report] {
        defer { reports = [] }
        return reports
    }
}

extension AttemptResult {
    /// The result with the server keeping the upload at `point` for the next attempt (nil: as is).
    func keeping(_ point: ResumePoint?) -> AttemptResult {
        var result = self
        if let point { result.resume = point }
        return result
    }
}
