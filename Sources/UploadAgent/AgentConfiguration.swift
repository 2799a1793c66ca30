import NIOCore
import UploadClient
import Foundation
import UploadCore
import UploadJournal

/// How an agent runs: where its state is, when it exits by itself, its settings at start, how
/// often it writes and pushes progress, its maintenance, and the clock it reads the time from.
public struct AgentConfiguration: Sendable {
    public var paths: StatePaths
    /// Exit after this many seconds with no uploads and no clients; 0 never exits by itself.
    public var idleExitSeconds: Double
    /// Concurrency and the total rate at start (`uploadmon agent config`; changed later by
    /// `configure` requests).
    public var settings: AgentSettings
    /// How many recent uploads a subscriber's snapshot carries.
    public var snapshotLimit: Int
    /// How often a running upload's progress is written to the journal, at most.
    public var checkpointInterval: Double
    /// How often progress is pushed to clients per upload, at most (the final one always goes).
    public var progressInterval: Double
    /// How long events that came alone wait for others before they are recorded together (one
    /// journal transaction for a moment's events rather than for each few).
    public var eventGathering: Double
    /// The maintenance job's interval and how much history it keeps, when the journal has no
    /// maintenance job yet (afterwards, `uploadmon jobs maintenance` changes them).
    public var maintenance: (every: Double, keep: MaintenanceSpec)
    /// What the agent reads the time from (records, schedules, the rate window, idle time).
    public var clock: HouseClock
    /// How long reading a file before its upload may take (`PreparationThreads`); one that
    /// took longer twice is left out with the reason.
    public var preparationLimit: TimeAmount

    public init(
        paths: StatePaths, idleExitSeconds: Double = 600, settings: AgentSettings = AgentSettings(),
        snapshotLimit: Int = 1000, checkpointInterval: Double = 1, progressInterval: Double = 0.1,
        eventGathering: Double = 0.01, maintenance: (every: Double, keep: MaintenanceSpec) = (86400, MaintenanceSpec()),
        clock: HouseClock = .system, preparationLimit: TimeAmount = PreparationThreads.defaultLimit
    ) {
        self.preparationLimit = preparationLimit
        self.clock = clock
        self.paths = paths
        self.idleExitSeconds = idleExitSeconds
        self.settings = settings
        self.snapshotLimit = snapshotLimit
        self.checkpointInterval = checkpointInterval
        self.progressInterval = progressInterval
        self.eventGathering = eventGathering
        self.maintenance = maintenance
    }
}
