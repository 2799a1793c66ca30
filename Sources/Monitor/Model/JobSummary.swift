/// A scheduled job of the background agent (a watched folder, maintenance), as the monitor
/// shows it. Times are relative: the monitor's clock is not the agent's.
public struct JobSummary: Sendable, Equatable {
    public var id: Int64
    /// "watch /srv/in → http://host/photo (3 queued)", "maintenance, keeps 7d of history".
    public var title: String
    /// How often it runs at most, e.g. "5m".
    public var every: String
    public var lastResult: String?
    public var lastFailed: Bool
    /// Seconds from when the list arrived until its next run; 0 or less: due now.
    public var nextRunIn: Double
    public var isWatch: Bool

    public init(id: Int64, title: String, every: String, lastResult: String?, lastFailed: Bool, nextRunIn: Double, isWatch: Bool) {
        self.id = id
        self.title = title
        self.every = every
        self.lastResult = lastResult
        self.lastFailed = lastFailed
        self.nextRunIn = nextRunIn
        self.isWatch = isWatch
    }
}

/// The jobs as last heard from the agent, and when (on the monitor's clock).
public struct JobsState: Sendable, Equatable {
    public var jobs: [JobSummary] = []
    public var receivedAt: Double = 0

    public init() {}

    public var watchCount: Int { jobs.count { $0.isWatch } }
}
