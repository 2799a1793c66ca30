import Foundation
import UploadClient
import UploadCore
import UploadJournal

/// Scheduled jobs (watched folders, maintenance): each has an earliest-begin time and runs at
/// the first chance after it, one job at a time, never more often than its interval.
extension Agent {
    func startScheduler() throws {
        let maintenance = configuration.maintenance
        try journal.ensureJob(
            .maintenance(maintenance.keep), every: maintenance.every, firstRunAt: clock.wall().addingTimeInterval(maintenance.every), at: clock.wall())
        watching = try journal.scheduledJobs().contains { $0.spec.kind == .watch }
        scheduler = Task { await self.runScheduler() }
    }

    func runScheduler() async {
        while stopReason == nil && !stopping && !Task.isCancelled {
            let next = await runDueJobs()
            let delay = JobSchedule.sleep(until: next, now: clock.wall())
            let sleeper = Task { _ = try? await Task.sleep(nanoseconds: UInt64(DurationRule.nanoseconds(delay))) }
            schedulerSleeper = sleeper
            await sleeper.value
            schedulerSleeper = nil
        }
    }

    /// Makes the scheduler look at the jobs again now (one was added or moved).
    func wakeScheduler() {
        schedulerSleeper?.cancel()
    }

    /// Runs every job whose time has come, one after the other; returns when the next is due.
    func runDueJobs() async -> Date {
        do {
            for id in JobSchedule.due(try journal.scheduledJobs().map { ($0.id, $0.earliestBeginAt) }, at: clock.wall()) {
                guard stopReason == nil, !stopping else { break }
                await runJob(id)
            }
            return JobSchedule.next(try journal.scheduledJobs().map { ($0.id, $0.earliestBeginAt) }, after: clock.wall())
        } catch {
            log("jobs: cannot read the journal: \(error)")
            return clock.wall().addingTimeInterval(60)
        }
    }

    func runJob(_ id: Int64) async {
        let job: ScheduledJob
        do {
            guard let begun = try journal.beginJobRun(id, at: clock.wall()) else { return }
            job = begun
        } catch {
            log("job \(id): cannot note its start in the journal: \(error)")
            return
        }
        let outcome: JobOutcome
        switch job.spec {
        case .watch(let spec): outcome = await scan(jobID: id, spec)
        case .maintenance(let spec): outcome = maintain(spec)
        }
        do { try journal.endJobRun(id, result: outcome.summary, failed: outcome.failed) } catch { log("job \(id): \(error)") }
        endedRuns[id, default: 0] += 1
        if outcome.worthLogging { log("job \(id) (\(job.spec.title)): \(outcome.summary)") }
        broadcastJobs()
    }

    /// How many runs of job `id` have ended since this agent started.
    public func runsEnded(_ id: Int64) -> Int { endedRuns[id] ?? 0 }

    struct JobOutcome {
        var summary: String
        var failed = false
        var worthLogging = true
    }

    // MARK: Watched folders

    /// One scan: files seen for the first time (or changed) wait for the next scan; files that
    /// stayed the same since the last one are checked and queued, with their marks, in one
    /// journal transaction.
    func scan(jobID: Int64, _ spec: WatchSpec) async -> JobOutcome {
        let listing: [WatchScanner.Entry]
        let known: [String: WatchFile]
        do {
            listing = try WatchScanner.list(spec.directory)
            known = try journal.watchFiles(jobID)
        } catch {
            return JobOutcome(summary: "\(error)", failed: true)
        }
        let now = clock.wall()
        var plan = WatchScanner.plan(jobID: jobID, listing: listing, known: known, at: now)
        if spec.skipSent == true {
            // Hashing reads every settled file: off the agent's own thread.
            let ledger = SentLedger(journal: journal)
            let paths = plan.settled.map { spec.directory + "/" + $0.name }
            let sent = await Task.detached {
                ledger.alreadySent(paths, to: spec.url, stripLocation: spec.settings.stripLocation, conversion: spec.settings.conversion)
            }.value
            plan.settled.removeAll { entry in
                guard let skip = sent[spec.directory + "/" + entry.name] else { return false }
                let note = SentLedger.sentText(skip.earlier, name: entry.name)
                plan.changes.skipped.append(WatchFile(jobID: jobID, name: entry.name, fingerprint: entry.fingerprint, state: .skipped, note: note, at: now))
                return true
            }
        }
        let items = plan.settled.map { entry in
            EnqueueItem(request: spec.request(forFileNamed: entry.name), settings: spec.settings, origin: "watch \(spec.directory)")
        }
        let inspections = await inspectAll(items)
        for (index, entry) in plan.settled.enumerated() {
            switch admit(items[index], inspected: inspections[index]) {
            case .success(let upload) where upload.fingerprint == entry.fingerprint:
                plan.changes.queue.append((entry.name, upload))
            case .success(let upload):
                // Written to between the listing and the check: not settled after all.
                plan.changes.pending.append(WatchFile(jobID: jobID, name: entry.name, fingerprint: upload.fingerprint, state: .pending, at: now))
            case .failure(let refusal) where refusal.mayPass:
                plan.changes.failed.append(
                    WatchScanner.failed(entry, seen: known[entry.name], reason: refusal.reason, jobID: jobID, at: now))
            case .failure(let refusal):
                plan.changes.skipped.append(
                    WatchFile(jobID: jobID, name: entry.name, fingerprint: entry.fingerprint, state: .skipped, note: refusal.reason, at: now))
            }
            // A first scan of a big folder checks many files: let uploads' events through.
            if index % 256 == 255 { await Task.yield() }
        }
        let added: [UploadRecord]
        do {
            added = try journal.applyWatchScan(jobID, plan.changes, at: now)
        } catch {
            return JobOutcome(summary: "cannot write the journal: \(error)", failed: true)
        }
        await launch(added)
        return Self.describeScan(plan, queued: added.count, listed: listing.count)
    }

    static func describeScan(_ plan: WatchScanner.Plan, queued: Int, listed: Int) -> JobOutcome {
        var parts: [String] = []
        if queued > 0 { parts.append("queued \(queued) new file(s)") }
        let settling = plan.changes.pending.count
        if settling > 0 { parts.append("\(settling) new or changing file(s) wait for the next scan") }
        if let first = plan.changes.skipped.first {
            parts.append("passed over \(plan.changes.skipped.count) (\(first.name): \(first.note ?? "not sendable"))")
        }
        let failing = plan.changes.failed.filter { $0.state == .pending }
        if let first = failing.first { parts.append("cannot read \(failing.count) yet (\(first.name): \(first.note ?? "failed"))") }
        let parked = plan.changes.failed.filter { $0.state == .parked }
        if let first = parked.first {
            parts.append("parked \(parked.count) until it changes (\(first.name): \(first.note ?? "failed"), \(WatchScanner.parkAfter) looks in a row)")
        }
        guard !parts.isEmpty else {
            return JobOutcome(summary: "nothing new (\(listed) file(s) in the folder)", worthLogging: false)
        }
        return JobOutcome(summary: parts.joined(separator: "; "), failed: !plan.changes.failed.isEmpty)
    }

    /// Registers (or updates) a watch and scans at once.
    func watch(_ directory: String, template: EnqueueItem, every: Double, newOnly: Bool, skipSent: Bool = false) async -> AgentReply {
        guard directory.hasPrefix("/") else {
            return .error(message: "the agent needs an absolute folder path (it does not share your working directory)")
        }
        guard every > 0 else { return .error(message: "the interval must be more than 0 seconds") }
        let listing: [WatchScanner.Entry]
        do {
            listing = try WatchScanner.list(directory)
            try Destination.validate(template.request.url)
            _ = try transport(for: template.settings)
        } catch {
            return .error(message: "\(error)")
        }
        var spec = WatchSpec(directory: directory, template: template.request, settings: template.settings)
        spec.skipSent = skipSent ? true : nil
        do {
            let now = clock.wall()
            let (job, created) = try journal.registerJob(.watch(spec), every: every, firstRunAt: now, at: now)
            if newOnly {
                let known = try journal.watchFiles(job.id)
                var changes = WatchScanChanges()
                changes.skipped = listing.filter { known[$0.name] == nil }.map {
                    WatchFile(
                        jobID: job.id, name: $0.name, fingerprint: $0.fingerprint, state: .skipped,
                        note: "already in the folder when the watch began", at: now)
                }
                _ = try journal.applyWatchScan(job.id, changes, at: now)
            }
            watching = true
            log(
                "\(created ? "watching" : "updated the watch of") \(directory) every \(DurationText.format(every)) → \(RedactedURL.display(template.request.url))"
            )
            wakeScheduler()
            broadcastJobs()
            // Read again: passing over the existing files changed the job's counts.
            return .job(try journal.jobSnapshots().first { $0.id == job.id } ?? job, created: created)
        } catch {
            return .error(message: "cannot write the journal: \(error)")
        }
    }

    // MARK: Maintenance

    func maintain(_ spec: MaintenanceSpec) -> JobOutcome {
        do {
            let report = try Maintenance.run(journal: journal, spec: spec, paths: configuration.paths, now: clock.wall())
            return JobOutcome(summary: report.summary)
        } catch {
            return JobOutcome(summary: "\(error)", failed: true)
        }
    }

    func configureMaintenance(every: Double?, keep: Double?) -> AgentReply {
        do {
            guard let job = try journal.scheduledJobs().first(where: { $0.spec.kind == .maintenance }),
                case .maintenance(var spec) = job.spec
            else {
                return .error(message: "there is no maintenance job")
            }
            if let keep { spec.keepSeconds = keep }
            let interval = every ?? job.intervalSeconds
            // A shorter interval takes effect from the last run; a longer one too.
            let next = (job.lastRunAt ?? clock.wall()).addingTimeInterval(interval)
            let (snapshot, _) = try journal.registerJob(.maintenance(spec), every: interval, firstRunAt: next, at: clock.wall())
            wakeScheduler()
            broadcastJobs()
            return .job(snapshot, created: false)
        } catch {
            return .error(message: "cannot write the journal: \(error)")
        }
    }

    // MARK: Requests

    func runSoon(_ id: Int64) -> AgentReply {
        do {
            guard try journal.rescheduleJob(id, earliestBeginAt: clock.wall()) else { return .error(message: "there is no job \(id)") }
        } catch {
            return .error(message: "cannot write the journal: \(error)")
        }
        wakeScheduler()
        return .ok
    }

    func removeJob(_ id: Int64) -> AgentReply {
        do {
            guard let job = try journal.scheduledJob(id) else { return .error(message: "there is no job \(id)") }
            guard job.spec.kind == .watch else {
                return .error(message: "the maintenance job cannot be removed; change it with `uploadmon jobs maintenance --every … --keep …`")
            }
            try journal.removeJob(id)
            watching = try journal.scheduledJobs().contains { $0.spec.kind == .watch }
            if case .watch(let spec) = job.spec { log("stopped watching \(spec.directory)") }
        } catch {
            return .error(message: "cannot write the journal: \(error)")
        }
        broadcastJobs()
        return .ok
    }

    func broadcastJobs() {
        guard let jobs = try? journal.jobSnapshots() else { return }
        broadcast(.jobs(jobs))
    }
}

extension JobSpec {
    /// How the agent's log names the job.
    var title: String {
        switch self {
        case .watch(let spec): "watch \(spec.directory)"
        case .maintenance: "maintenance"
        }
    }
}
