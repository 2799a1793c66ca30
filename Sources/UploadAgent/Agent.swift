import Foundation
import Glibc
import UploadClient
import UploadCore
import UploadJournal

/// The transfer agent: owns the upload queue and the journal, outlives the clients that queue
/// uploads, and recovers whatever was unfinished when it last stopped (or was killed).
///
/// Every upload event is first written to the journal and then pushed to subscribed clients,
/// with its sequence number, so what a client sees live is exactly what it would read back.
public actor Agent {
    public let configuration: AgentConfiguration
    public let journal: Journal
    let queue: UploadQueue
    private let defaultTransport: HTTPUploadTransport
    /// The total rate all uploads share; its value follows the settings' schedule.
    let sharedLimit = SharedRateLimit()
    /// The settings in force.
    private(set) var settings: AgentSettings
    private var rateSchedule: Task<Void, Never>?
    private var transports: [TransportSettings: HTTPUploadTransport] = [:]
    private var clients: [Int: LineConnection] = [:]
    private var subscribers: Set<Int> = []
    /// What each upload event calls for, decided as a value.
    var events: AgentEvents
    /// Uploads whose end the batch being processed recorded: the queue forgets them together.
    private var finishedInBatch: [UploadID] = []
    /// Uploads whose progress is not told to clients in the batch being processed: they end
    /// well in it (see `endingWell`).
    private var quietProgress: Set<UploadID> = []
    /// The uploads handed over that wait for room in the queue, and those it holds.
    var backlog = UploadBacklog(window: UploadBacklog.window(concurrency: 1))
    private var lastActivity: Double
    private let startedAt: Date
    private var stopWaiters: [CheckedContinuation<StopReason, Never>] = []
    var stopReason: StopReason?
    var stopping = false
    let log: @Sendable (String) -> Void
    /// Whether a folder is watched: then the agent does not exit when idle (it has work to do).
    var watching = false
    var schedulerSleeper: Task<Void, Never>?
    /// Runs of each job that have ended since this agent started (the journal counts runs as
    /// they begin).
    var endedRuns: [Int64: Int] = [:]
    var scheduler: Task<Void, Never>?
    /// The uploads whose files are being prepared, kept where the next agent finds them if a
    /// file stops this one (nil: its file could not be opened, said in the log).
    let preparation: PreparationWatch?

    /// The configuration's clock: every reading of the time here goes through it.
    var clock: HouseClock { configuration.clock }

    public init(configuration: AgentConfiguration, journal: Journal, log: @escaping @Sendable (String) -> Void = { _ in }) throws {
        self.configuration = configuration
        self.journal = journal
        self.log = log
        (lastActivity, startedAt) = (configuration.clock.monotonic(), configuration.clock.wall())
        settings = configuration.settings
        events = AgentEvents(checkpointInterval: configuration.checkpointInterval, progressInterval: configuration.progressInterval)
        defaultTransport = try HTTPUploadTransport(
            settings: TransportSettings(), sharedLimit: sharedLimit,
            preparationLimit: configuration.preparationLimit, clock: configuration.clock)
        queue = UploadQueue(transport: defaultTransport, concurrency: configuration.settings.concurrency, log: log, clock: configuration.clock)
        do {
            preparation = try PreparationWatch(path: configuration.paths.preparing)
        } catch {
            preparation = nil
            log("\(error): a file that stops the agent while it is prepared will not be told apart")
        }
    }

    /// Recovers unfinished uploads from the journal, queues them again and starts processing
    /// events. Returns how many uploads were picked up again.
    @discardableResult
    public func start() async throws -> Int {
        try leaveOutFilesThatStoppedTheAgent()
        let pending = try journal.recoverQueue(at: clock.wall())
        backlog.add(pending)
        let events = queue.events
        let gathering = configuration.eventGathering
        Task { [weak self] in
            // As many waiting events as are there (up to a bound) at a time, recorded in one
            // journal transaction: an agent behind a burst of small uploads catches up instead
            // of falling further behind one commit per event. Events that came with few others
            // wait a moment for more: each commit writes whole pages to the journal's log, and
            // 10,000 small uploads took a quarter less of the agent's CPU gathered for 10 ms
            // than committed as they came (`bench/agent`).
            while var batch = await events.next(atMost: Self.eventBatch) {
                if batch.count < Self.eventBatch, gathering > 0 {
                    try? await Task.sleep(for: .seconds(gathering))
                    batch += events.waiting(atMost: Self.eventBatch - batch.count)
                }
                guard let self else { return }
                await self.process(batch)
            }
        }
        await apply(settings)
        await feed()
        if !pending.isEmpty { log("picked up \(pending.count) unfinished upload(s) from the journal") }
        try startScheduler()
        return pending.count
    }

    /// Gives the queue one upload at once, past the backlog (a retry by hand).
    func startUpload(_ upload: PendingUpload) async {
        backlog.queuedDirectly(upload.id)
        await queue.enqueue([queueItem(upload)])
    }

    /// The upload as the queue takes it, with the transport for its settings.
    func queueItem(_ upload: PendingUpload) -> UploadQueue.Item {
        let transport: any UploadTransport
        do {
            transport = try self.transport(for: upload.settings)
        } catch {
            // The settings were valid when queued (a CA file since removed, say): fail visibly.
            transport = FailingTransport(failure: UploadFailure(.fileError, "\(error)"))
        }
        let watched = preparation.map { PreparationWatchedTransport(inner: transport, id: upload.id, watch: $0) as any UploadTransport }
        return UploadQueue.Item(
            upload.request, record: upload.record, attemptsSoFar: upload.attempts,
            transport: watched ?? transport, retryPolicy: upload.settings.retryPolicy)
    }

    /// The uploads the last agent was preparing when it stopped: one that has now stopped an
    /// agent `PreparationWatch.failAfter` times fails with the reason (it stays in the journal,
    /// to be retried by hand), so that one file cannot stop every later start.
    private func leaveOutFilesThatStoppedTheAgent() throws {
        guard let preparation else { return }
        let now = clock.wall()
        for (id, stops) in preparation.stoppedDuring.sorted(by: { $0.key < $1.key }) {
            guard let record = try journal.snapshot(id), !record.state.isFinished else { continue }
            if stops >= PreparationWatch.failAfter {
                let reason = PreparationWatch.reason(stops: stops)
                _ = try journal.record(.finished(id, .failed(UploadFailure(.fileError, reason))), at: now)
                log("#\(id.rawValue) \(record.name): \(reason)")
            } else {
                log("#\(id.rawValue) \(record.name): the agent stopped while preparing this file; it is tried once more")
            }
        }
    }

    func transport(for settings: TransportSettings) throws -> HTTPUploadTransport {
        var key = settings
        key.retries = 0
        if key == TransportSettings() { return defaultTransport }
        if let existing = transports[key] { return existing }
        let made = try HTTPUploadTransport(settings: key, sharedLimit: sharedLimit, preparationLimit: configuration.preparationLimit, clock: clock)
        transports[key] = made
        return made
    }

    // MARK: Settings

    /// Puts `new` in force at once: the queue's concurrency (uploads already sending go on),
    /// and the total rate, which a task keeps following through the day's window.
    func apply(_ new: AgentSettings) async {
        settings = new
        backlog.window = UploadBacklog.window(concurrency: new.concurrency)
        await queue.setConcurrency(new.concurrency)
        await feed()
        rateSchedule?.cancel()
        sharedLimit.set(bytesPerSecond: new.rate(at: clock.wall()))
        guard new.limitWindow != nil else { return }
        rateSchedule = Task { [sharedLimit, log] in
            var window = RateWindow(new, limited: sharedLimit.bytesPerSecond != nil)
            while !Task.isCancelled {
                let now = clock.wall()
                let step = window.step(at: now)
                sharedLimit.set(bytesPerSecond: step.rate)
                if let line = step.log { log(line) }
                try? await Task.sleep(nanoseconds: UInt64(step.wakeAt.timeIntervalSince(now) * 1e9))
            }
        }
    }

    func configure(_ new: AgentSettings) async -> AgentReply {
        await apply(new)
        log("settings: \(new.inForce(at: clock.wall()))")
        return .configured(new)
    }

    // MARK: Events

    /// The most events recorded in one transaction.
    static let eventBatch = 256

    func process(_ events: [UploadEvent]) async {
        // Once stopping, the cancellations that shutting down causes are not outcomes: the
        // uploads stay unfinished in the journal and continue at the next start.
        guard !stopping else { return }
        // A `queued` for an upload fed from the backlog says what the journal and the clients
        // have had since it was handed over.
        let batch = events.filter { event in
            if case .queued(let record) = event, backlog.isRepeatedQueued(record.id) { return false }
            return true
        }
        let now = clock.wall()
        let recorded: [Result<RecordedEvent?, any Error>]
        do {
            recorded = try await journal.recordInBackground(batch, at: now)
        } catch {
            recorded = batch.map { _ in .failure(error) }
        }
        // Then each in order, as it came: progress and the logged events interleaved.
        quietProgress = subscribers.isEmpty ? [] : Self.endingWell(batch)
        for (event, result) in zip(batch, recorded) {
            process(event, recorded: result, at: now)
        }
        quietProgress.removeAll(keepingCapacity: true)
        if !finishedInBatch.isEmpty {
            let finished = finishedInBatch
            finishedInBatch.removeAll(keepingCapacity: true)
            await queue.forgetFinished(finished)
        }
        // Room that finished uploads left in the queue goes to the backlog.
        await feed()
    }

    private func process(_ event: UploadEvent, recorded: Result<RecordedEvent?, any Error>, at now: Date) {
        let moment = clock.monotonic()
        lastActivity = moment
        for action in events.handle(event, recorded: recorded, backlogEmpty: backlog.isEmpty, moment: moment) {
            switch action {
            case .checkpoint(let id, let sent, let expected):
                do { try journal.checkpoint(id, bytesSent: sent, expected: expected, at: now) } catch { log("journal: \(error)") }
            case .broadcast(let seq, let event):
                if case .progress(let id, _, _, _) = event, quietProgress.contains(id) { continue }
                broadcast(.event(seq: seq, event: event, at: now))
            case .freeSlot(let id):
                backlog.finished(id)
            case .forget(let id):
                finishedInBatch.append(id)
            case .log(let line):
                log(line)
            case .settleSent:
                do { try journal.settleSent() } catch { log("journal: cannot settle the sent-content ledger: \(error)") }
            case .releaseMemory:
                // A burst of thousands of uploads leaves the allocator's arenas full of freed
                // memory; an agent that lives for days should give it back while it waits.
                FreedMemory.release()
            }
        }
    }

    /// The uploads that end well within `batch`: their progress in it need not be told, since a
    /// good end counts every byte as sent (a small photo's upload is a start, one progress, its
    /// content, the answer and the end: one event in six less for each of a camera roll's).
    static func endingWell(_ batch: [UploadEvent]) -> Set<UploadID> {
        var ids: Set<UploadID> = []
        for event in batch {
            if case .finished(let id, let outcome) = event, outcome.isSuccess { ids.insert(id) }
        }
        return ids
    }

    func broadcast(_ message: AgentMessage) {
        guard !subscribers.isEmpty else { return }
        let line = AgentCoding.encode(message)
        for id in subscribers {
            if clients[id]?.send(line) != true { subscribers.remove(id) }
        }
    }

    // MARK: Clients

    /// A client connected on `connection`: it counts as activity and may subscribe.
    public func connected(_ client: Int, connection: LineConnection) {
        clients[client] = connection
        lastActivity = clock.monotonic()
    }

    /// A client went away: it gets no more events.
    public func disconnected(_ client: Int) {
        clients[client] = nil
        subscribers.remove(client)
        lastActivity = clock.monotonic()
    }

    /// Handles one request and sends its reply on `connection` itself, so that a subscriber's
    /// snapshot always goes out before the first event that follows it.
    public func handle(_ envelope: AgentEnvelope, from client: Int, connection: LineConnection) async {
        lastActivity = clock.monotonic()
        let reply: AgentReply
        if let refusal = envelope.request.refusal {
            connection.send(AgentCoding.encode(AgentMessage.reply(id: envelope.id, reply: .error(message: refusal))))
            return
        }
        switch envelope.request {
        case .hello(let version, _):
            reply =
                version == AgentProtocol.version
                ? .hello(version: AgentProtocol.version, pid: getpid())
                : .error(
                    message: "this agent speaks protocol \(AgentProtocol.version), the client \(version); stop it with `uploadmon agent stop` and start again")
        case .subscribe(let after):
            do {
                let snapshot = try makeSnapshot(after: after)
                connection.send(AgentCoding.encode(AgentMessage.reply(id: envelope.id, reply: .subscribed(snapshot))))
                subscribers.insert(client)
                return
            } catch {
                reply = .error(message: "cannot read the journal: \(error)")
            }
        case .enqueue(let items):
            reply = .enqueued(results: await enqueue(items.items, brief: items.brief))
        case .cancel(let id):
            reply = await cancel(id)
        case .retry(let id):
            reply = await retry(id)
        case .status:
            reply = .status(await status())
        case .stop:
            connection.sendAndWait(AgentCoding.encode(AgentMessage.reply(id: envelope.id, reply: .ok)))
            requestStop(.requested)
            return
        case .watch(let directory, let template, let every, let newOnly, let skipSent):
            reply = await watch(directory, template: template, every: every, newOnly: newOnly, skipSent: skipSent ?? false)
        case .jobs:
            reply = (try? journal.jobSnapshots()).map { .jobs($0) } ?? .error(message: "cannot read the journal")
        case .runJob(let id):
            reply = runSoon(id)
        case .removeJob(let id):
            reply = removeJob(id)
        case .maintenance(let every, let keep):
            reply = configureMaintenance(every: every, keep: keep)
        case .configure(let settings):
            reply = await configure(settings)
        }
        connection.send(AgentCoding.encode(AgentMessage.reply(id: envelope.id, reply: reply)))
    }

    func makeSnapshot(after: Int64?) throws -> AgentSnapshot {
        let last = try journal.lastSequence()
        let missed = try after.map { try journal.entries(after: $0) } ?? []
        let recent = try journal.snapshots(limit: configuration.snapshotLimit)
        let earlier = try recent.first.map { try journal.failed(before: $0.id, limit: AgentSnapshot.failuresKept) } ?? []
        var snapshot = AgentSnapshot(
            uploads: recent, missed: missed, lastSequence: last, jobs: try journal.jobSnapshots(),
            earlierFailures: earlier.isEmpty ? nil : earlier)
        if let after {
            let away = try journal.finishedCounts(after: after)
            (snapshot.awaySucceeded, snapshot.awayFailed) = (away.succeeded, away.failed)
        }
        return snapshot
    }

    func status() async -> AgentStatus {
        let unfinished = (try? journal.unfinishedCounts()) ?? [:]
        return AgentStatus(
            pid: getpid(), version: UploadmonVersion.current, startedAt: startedAt, journal: journal.path,
            socket: configuration.paths.socket, clients: clients.count,
            running: unfinished[.sending] ?? 0, queued: unfinished.filter { $0.key != .sending }.values.reduce(0, +),
            idleExitSeconds: configuration.idleExitSeconds, settings: settings)
    }

    // MARK: Lifetime

    /// True when nothing is queued or running and no client is connected.
    public func idleSeconds() async -> Double? {
        guard clients.isEmpty, !watching, backlog.isEmpty, await !queue.isBusy else { return nil }
        return clock.monotonic() - lastActivity
    }

    /// Stops the agent for `reason` (the first reason given counts): subscribers are told, the scheduler ends, `waitUntilStopped` returns.
    public func requestStop(_ reason: StopReason) {
        guard stopReason == nil else { return }
        stopReason = reason
        // Clients that watch are told before the connections close, so they do not start the agent again.
        broadcast(.stopping(reason: reason.description))
        scheduler?.cancel()
        schedulerSleeper?.cancel()
        for waiter in stopWaiters { waiter.resume(returning: reason) }
        stopWaiters.removeAll()
    }

    /// Returns when the agent was asked to stop, was idle long enough, or got a signal.
    public func waitUntilStopped() async -> StopReason {
        if let stopReason { return stopReason }
        return await withCheckedContinuation { stopWaiters.append($0) }
    }

    /// Watches for idleness until the agent stops.
    public func runIdleTimer() async {
        guard configuration.idleExitSeconds > 0 else { return }
        while stopReason == nil {
            try? await Task.sleep(nanoseconds: 500_000_000)
            if let idle = await idleSeconds(), idle >= configuration.idleExitSeconds {
                requestStop(.idle(seconds: idle))
            }
        }
    }

    /// Closes every client and the HTTP clients. Unfinished uploads stay in the journal as they
    /// are and continue when the agent next starts.
    public func shutdown() async {
        stopping = true
        rateSchedule?.cancel()
        scheduler?.cancel()
        schedulerSleeper?.cancel()
        await scheduler?.value
        // What was sent last (a stop's reason) goes out first, unless a client is not reading.
        let deadline = HouseClock.waitDeadline(after: 0.5)
        for connection in clients.values {
            _ = connection.drain(until: deadline)
            connection.shutdown()
        }
        clients.removeAll()
        subscribers.removeAll()
        for transport in transports.values { try? await transport.shutdown() }
        try? await defaultTransport.shutdown()
    }
}
