import Foundation
import Monitor
import NIOConcurrencyHelpers
import UploadAgent
import UploadCore
import UploadReports
import UploadJournal

/// The monitor's uploads in the background agent: they go on after the monitor quits, the
/// terminal closes or the SSH session drops. On attach the monitor gets the agent's uploads and
/// what finished while it was away; if the agent goes away, the monitor starts it again and
/// reattaches from the last event it saw.
public final class AgentBackend: MonitorBackend {
    public let paths: StatePaths
    /// Where the files queued now go (`switchDestination` changes it).
    private let current: NIOLockedValueBox<MonitorDestination>
    public var settings: TransportSettings { current.withLockedValue { $0.settings } }
    public var uploads: MonitorUploads { current.withLockedValue { $0.uploads } }
    private let client: NIOLockedValueBox<AgentClient>
    /// The decisions (hold or deliver, the cursor, reconnect); everything below carries out
    /// the actions, outside this lock, one after another on `acting` in the order decided.
    private let subscription: NIOLockedValueBox<AgentSubscription>
    private let acting = DispatchQueue(label: "uploadmon.monitor.agent-actions")
    private let outlet = MonitorOutlet()
    private let enqueueing = DispatchQueue(label: "uploadmon.monitor.enqueue")
    /// Files given to `enqueue` whose hand-over has not ended.
    private let handingOver = NIOLockedValueBox(0)

    public init(client: AgentClient, paths: StatePaths, settings: TransportSettings, uploads: MonitorUploads) {
        self.client = NIOLockedValueBox(client)
        self.paths = paths
        current = NIOLockedValueBox(MonitorDestination(uploads: uploads, settings: settings))
        subscription = NIOLockedValueBox(AgentSubscription(cursor: MonitorCursor.read(paths)))
    }

    public func start(post: @escaping @Sendable (MonitorEvent) -> Void, now: @escaping @Sendable () -> EventTime) {
        outlet.start(post: post, now: now)
        attach(client.withLockedValue({ $0 }))
    }

    public func switchDestination(_ destination: MonitorDestination) {
        current.withLockedValue { $0 = destination }
    }

    private func post(_ event: MonitorEvent) { outlet.post(event) }
    private func now() -> EventTime { outlet.now() }

    /// Feeds the subscription one input and carries out what it decides: handed to `acting`
    /// while the decision is held, so actions keep the order of the inputs that made them
    /// (records before the events held for them), and carried out after it is let go.
    private func handle(_ input: (inout AgentSubscription) -> [AgentSubscription.Action]) {
        subscription.withLockedValue { machine in
            let actions = input(&machine)
            guard !actions.isEmpty else { return }
            acting.async { [self] in
                // One time for the run: its events arrived together.
                let time = now()
                for action in actions { perform(action, at: time) }
            }
        }
    }

    private func perform(_ action: AgentSubscription.Action, at time: EventTime) {
        switch action {
        case .attach(let snapshot):
            post(.attached(Self.reattachment(snapshot, at: time.date), time))
        case .deliver(let event): post(.upload(event, time))
        case .jobs(let jobs):
            post(.jobs(Self.summaries(jobs, at: time.date), time))
        case .saveCursor(let seq): saveCursorSoon(seq)
        case .lost:
            post(.notice("Lost the agent; starting it again (unfinished uploads resume from the journal)", isError: true, time))
        case .reconnect(let seconds):
            acting.asyncAfter(deadline: HouseClock.waitDeadline(after: seconds)) { [self] in reconnect() }
        case .stopped(let reason):
            post(.notice("The agent stopped (\(reason)); queuing files starts it again", isError: false, time))
        }
    }

    private func attach(_ agent: AgentClient) {
        subscription.withLockedValue { $0.connecting() }
        // A run of events (what one read of the socket brought) is decided under one lock and
        // carried out in one turn of `acting`: one hand-over per read, not per event.
        agent.onEvents { [self] messages in
            handle { machine in messages.flatMap { machine.received($0) } }
        }
        agent.onClose { [self] in handle { $0.closed() } }
        DispatchQueue.global().async { [self] in
            do {
                let reply = try agent.request(.subscribe(after: subscription.withLockedValue({ $0.cursor })))
                guard case .subscribed(let snapshot) = reply else {
                    post(.notice(AgentClient.text(of: reply, doing: "attach the monitor"), isError: true, now()))
                    return
                }
                handle { $0.subscribed(snapshot) }
            } catch {
                post(.notice("cannot attach to the agent: \(error)", isError: true, now()))
            }
        }
    }

    /// The jobs as the monitor lists them, their next runs counted from `now`.
    public static func summaries(_ jobs: [JobSnapshot], at now: Date) -> [JobSummary] {
        jobs.map { job in
            JobSummary(
                id: job.id, title: JobsTable.describe(job), every: DurationText.format(job.intervalSeconds),
                lastResult: job.lastResult, lastFailed: job.lastFailed,
                nextRunIn: job.earliestBeginAt.timeIntervalSince(now), isWatch: job.kind == .watch)
        }
    }

    /// One attempt to reach the agent again (starting it when none runs); a failure is the
    /// subscription's to time the next one.
    private func reconnect() {
        guard !subscription.withLockedValue({ $0.isClosing }) else { return }
        guard
            let connection = try? AgentLauncher.connectOrStart(
                paths: paths, client: "monitor", executable: AgentLauncher.currentExecutable())
        else {
            handle { $0.reconnectFailed() }
            return
        }
        client.withLockedValue { $0 = connection.client }
        post(.notice("Reattached to the agent (pid \(connection.client.agentPID))", isError: false, now()))
        attach(connection.client)
    }

    /// The agent to ask: one stopped on purpose is reached (started) again now that work is
    /// asked of it. Called off the loop.
    private func agentForWork() -> AgentClient {
        if subscription.withLockedValue({ $0.wanted() }) { reconnect() }
        return client.withLockedValue({ $0 })
    }

    public var filesBeingHandedOver: Int { handingOver.withLockedValue { $0 } }

    /// The cursor to write (the newest decided), whether a write is scheduled, and whether the
    /// monitor has gone (nothing more is written).
    private let cursor = NIOLockedValueBox<(latest: Int64?, scheduled: Bool, closed: Bool)>((nil, false, false))

    /// The cursor is written at most every `cursorEvery` seconds: it was written for every
    /// upload that finished (a file made and renamed each time), and 20,000 of them held the
    /// monitor's actions and its ending behind the writes. A monitor that dies loses at most
    /// that much of what it saw: the next one tells those finishes again.
    static let cursorEvery = 0.25

    private func saveCursorSoon(_ seq: Int64) {
        let schedule = cursor.withLockedValue { state -> Bool in
            guard !state.closed else { return false }
            state.latest = max(state.latest ?? seq, seq)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        guard schedule else { return }
        acting.asyncAfter(deadline: HouseClock.waitDeadline(after: Self.cursorEvery)) { [self] in
            let seq = cursor.withLockedValue { state -> Int64? in
                defer { (state.latest, state.scheduled) = (nil, false) }
                return state.closed ? nil : state.latest
            }
            if let seq { MonitorCursor.write(seq, paths) }
        }
    }

    /// Files one hand-over request carries.
    static let handOverBatch = 2_000

    public func enqueue(_ items: [QueueItem]) {
        // Off the loop, one hand-over after another, so batches keep the order they were queued
        // in. The files are not opened here: the agent checks each as it takes it (opening and
        // sniffing 20,000 photos twice doubled the hand-over) and says which it refused.
        handingOver.withLockedValue { $0 += items.count }
        let destination = current.withLockedValue { $0 }
        enqueueing.async { [self] in
            defer { handingOver.withLockedValue { $0 -= items.count } }
            let agent = agentForWork()
            let accepted = items.map { item in
                var own = destination.settings
                own.stripLocation = item.stripLocation
                if let conversion = item.conversion { own.conversion = conversion }
                return EnqueueItem(request: destination.uploads.unchecked(item), settings: own, origin: "monitor")
            }
            guard !accepted.isEmpty else { return }
            do {
                // Brief answers: the agent's own `queued` event (which it sends every monitor)
                // brings each row; whole records in the answers as well made the hand-over of a
                // camera roll twice the work for both.
                // In requests of 2,000: each waits its turn among the agent's upload events, and
                // a camera roll in requests of 500 spent most of its hand-over waiting.
                let unexpected = try agent.enqueue(accepted, brief: true, batch: Self.handOverBatch) { results in
                    for result in results {
                        switch result {
                        case .queued(let record):
                            post(.upload(.queued(record), now()))
                        case .accepted:
                            // The agent's queued event brings the row.
                            break
                        case .refused(let path, let reason):
                            post(.enqueueRefused(name: (path as NSString).lastPathComponent, reason: reason, now()))
                        }
                    }
                }
                if let unexpected {
                    post(.notice(AgentClient.text(of: unexpected, doing: "queue the files"), isError: true, now()))
                }
            } catch {
                post(.notice("cannot queue \(accepted.count) file(s): \(error)", isError: true, now()))
            }
        }
    }

    public func cancel(_ id: UploadID) { send(.cancel(id: id), doing: "cancel \(id)") }
    public func retry(_ id: UploadID) { send(.retry(id: id), doing: "retry \(id)") }

    private func send(_ request: AgentRequest, doing what: String) {
        DispatchQueue.global().async { [self] in
            let agent = agentForWork()
            do {
                let reply = try agent.request(request)
                if case .error = reply { post(.notice(AgentClient.text(of: reply, doing: what), isError: true, now())) }
            } catch {
                post(.notice("cannot \(what): \(error)", isError: true, now()))
            }
        }
    }

    public func finish(_ state: MonitorState) async {
        // Files queued and not yet handed over go to the agent first: it sends them once the
        // monitor is gone, as it does the rest; leaving now would lose them.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in enqueueing.async { done.resume() } }
        let last = subscription.withLockedValue({ $0.close() })
        // After every action already decided (a cursor saved there is never newer than this).
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            acting.async { [self] in
                // The newest of what was decided, once; a write still scheduled does nothing.
                let pending = cursor.withLockedValue { state -> Int64? in
                    defer { state = (nil, false, true) }
                    return state.latest
                }
                if let newest = [last, pending].compactMap({ $0 }).max() { MonitorCursor.write(newest, paths) }
                done.resume()
            }
        }
        client.withLockedValue({ $0 }).close()
    }

    /// The agent's uploads and what finished while no monitor watched, for the monitor.
    public static func reattachment(_ snapshot: AgentSnapshot, at now: Date) -> Reattachment {
        let away = snapshot.missed.compactMap { entry -> (UploadID, UploadOutcome)? in
            if case .finished(let id, let outcome) = entry.event { (id, outcome) } else { nil }
        }
        // The failed uploads older than the recent ones first, so each failure has its row.
        var attachment = Reattachment(records: (snapshot.earlierFailures ?? []) + snapshot.uploads, missedOutcomes: away, at: now)
        // Counted by the agent over the whole log when it can (the events it sends stop at a limit).
        if let ok = snapshot.awaySucceeded, let failed = snapshot.awayFailed { attachment.awayTotals = AwayTotals(ok: ok, failed: failed) }
        return attachment
    }
}

/// The last event a monitor on this account saw, kept across runs so the next monitor can say
/// what happened while none was open.
enum MonitorCursor {
    static func read(_ paths: StatePaths) -> Int64? {
        guard let text = try? String(contentsOfFile: paths.monitorCursor, encoding: .utf8) else { return nil }
        return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func write(_ seq: Int64, _ paths: StatePaths) {
        try? FileReplacement.write(Data("\(seq)\n".utf8), to: paths.monitorCursor, mode: 0o600)
    }
}
