import ArgumentParser
import Foundation
import Glibc
import TerminalCanvas
import UploadAgent
import UploadCore
import UploadJournal

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Have the background agent upload the new image files of a folder, checking it every few minutes.",
        discussion: """
        The agent (started when none runs) looks at the folder every --every, not in its subfolders. \
        A file is queued once its size and modification time stayed the same over two looks in a \
        row, so a file still being copied or downloaded is never sent half-written; hidden files \
        and names like *.part, *.crdownload, *.tmp or *~ are never looked at. Each file is queued \
        once: a file that changes after it was queued is not sent again (a file that leaves the \
        folder is forgotten, so a new one under the same name is new). Without --new-only, the \
        files already in the folder are sent too.

        While a folder is watched the agent does not exit when idle. Watching the same folder again \
        updates its settings. List jobs with `uploadmon jobs`, look now with `uploadmon jobs run ID`, \
        stop watching with `uploadmon jobs remove ID` (or the folder).

        Examples:
          uploadmon watch ~/Pictures/incoming --to http://127.0.0.1:3000/photo
          uploadmon watch /srv/camera --to https://host/photo --every 30s --new-only \\
              -H 'Authorization: Bearer …'
        """
    )

    @Argument(help: ArgumentHelp("The folder to watch.", valueName: "folder"))
    var folder: String

    @Option(name: .long, help: ArgumentHelp("How often to look at the folder, at most (e.g. 30s, 5m, 1h; at least 1s).", valueName: "duration"))
    var every = "5m"

    @Flag(name: .long, help: "Leave the files already in the folder alone; send only files that arrive from now on.")
    var newOnly = false

    @Flag(name: .long, help: "Print the job as JSON.")
    var json = false

    @OptionGroup var upload: UploadOptions

    func validate() throws {
        do throws(RangeError) {
            _ = try DurationRule.watchInterval.parse(every, option: "--every")
        } catch {
            throw ValidationError(error.message)
        }
        if upload.concurrency != UploadOptions.defaultConcurrency { throw ValidationError(UploadOptions.agentConcurrencyNote) }
    }

    func run() throws {
        let directory = try Self.folderPath(folder)
        let template: EnqueueItem
        do throws(UploadInputError) {
            let request = UploadRequest(
                source: .file(path: directory), url: upload.to, field: upload.field, uploadName: "-",
                formFields: try upload.parsedFormFields(), headers: try upload.parsedHeaders(), allowAnyFile: upload.anyFile)
            template = EnqueueItem(request: request, settings: upload.transportSettings, origin: "watch")
        } catch {
            throw ValidationError(error.description)
        }
        let seconds = DurationText.parse(every) ?? 300
        let paths = StatePaths.resolve()
        let connection = try BackgroundSend.connectOrStart(paths: paths, client: "watch")
        defer { connection.client.close() }
        let reply = try connection.client.request(.watch(directory: directory, template: template, everySeconds: seconds, newOnly: newOnly), timeout: 60)
        guard case .job(let job, let created) = reply else {
            throw AgentFailure.message(AgentClient.text(of: reply, doing: "watch \(directory)"))
        }
        if json {
            print(String(decoding: try StatusCommand.prettyEncoder.encode(job), as: UTF8.self))
            return
        }
        let interval = DurationText.format(seconds)
        print("\(created ? "Watching" : "Updated the watch of") \(directory) every \(interval) \(job.detail) (job \(job.id)).")
        print(newOnly
            ? "Files already in the folder are left alone (\(job.filesSkipped) passed over); new ones are queued once they stay the same over two looks (\(interval) apart)."
            : "Image files are queued once they stay the same over two looks, \(interval) apart; the first look was just now.")
        let how = connection.started ? "started the agent (pid \(connection.client.agentPID))" : "agent pid \(connection.client.agentPID)"
        print("The agent runs the watch (\(how)) and does not exit while a folder is watched. `uploadmon jobs` lists jobs; `uploadmon jobs remove \(job.id)` stops watching.")
    }

    /// The folder as an absolute path with symbolic links resolved, so one folder is one job.
    static func folderPath(_ folder: String) throws -> String {
        let absolute = URL(fileURLWithPath: folder).standardizedFileURL.path
        guard let resolved = realpath(absolute, nil) else {
            throw ValidationError("cannot watch \(folder): \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        var isDirectory: ObjCBool = false
        let path = String(cString: resolved)
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ValidationError("cannot watch \(folder): it is not a folder")
        }
        return path
    }
}

struct JobsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "List the agent's scheduled jobs (watched folders, maintenance) with their next run.",
        discussion: """
        Jobs run inside the agent, each not before its next-run time and never more often than its \
        interval; a job that came due while the agent was not running runs once when it starts. \
        Maintenance (daily by default) prunes finished uploads and events older than a week, removes \
        leftover temporary files, rotates a large agent log and vacuums the journal when worthwhile.

        Examples:
          uploadmon jobs
          uploadmon jobs run 2
          uploadmon jobs remove ~/Pictures/incoming
          uploadmon jobs maintenance --every 12h --keep 30d
        """,
        subcommands: [JobsListCommand.self, JobsRunCommand.self, JobsRemoveCommand.self, JobsMaintenanceCommand.self],
        defaultSubcommand: JobsListCommand.self
    )
}

struct JobsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the jobs (read from the journal; works whether or not the agent runs).")

    @Flag(name: .long, help: "Print one JSON document: the agent and the jobs.")
    var json = false

    func run() throws {
        let paths = StatePaths.resolve()
        let agent = StatusCommand.agentStatus(paths)
        var jobs: [JobSnapshot] = []
        if FileManager.default.fileExists(atPath: paths.journal) {
            do {
                jobs = try Journal(path: paths.journal).jobSnapshots()
            } catch {
                throw AgentFailure.message("cannot read the journal \(paths.journal): \(error)")
            }
        }
        if json {
            let document = JobsDocument(agent: agent, jobs: jobs)
            print(String(decoding: try StatusCommand.prettyEncoder.encode(document), as: UTF8.self))
            return
        }
        print(JobsTable.agentLine(agent, watches: jobs.count { $0.kind == .watch }))
        guard !jobs.isEmpty else {
            print("No jobs yet: the agent adds its maintenance job when it first starts. Watch a folder with `uploadmon watch FOLDER --to URL`.")
            return
        }
        print(JobsTable.render(jobs, now: Date(), agentRuns: agent != nil))
    }
}

struct JobsRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run a job now instead of at its next run (starts the agent when none runs).")

    @Argument(help: "The job's id (see `uploadmon jobs`).")
    var id: Int64

    func run() throws {
        try JobsRequest.send(.runJob(id: id), doing: "run job \(id)")
        print("Job \(id) runs now; see how it went with `uploadmon jobs`.")
    }
}

struct JobsRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Stop watching a folder (by job id or folder). Uploads it queued carry on.")

    @Argument(help: ArgumentHelp("The job's id, or the watched folder.", valueName: "id-or-folder"))
    var job: String

    func run() throws {
        let id = try Self.jobID(job)
        try JobsRequest.send(.removeJob(id: id), doing: "remove job \(id)")
        print("Removed job \(id); uploads it already queued carry on.")
    }

    static func jobID(_ text: String) throws -> Int64 {
        if let id = Int64(text) { return id }
        let folder = (try? WatchCommand.folderPath(text)) ?? URL(fileURLWithPath: text).standardizedFileURL.path
        let paths = StatePaths.resolve()
        let jobs = (try? Journal(path: paths.journal).jobSnapshots()) ?? []
        guard let job = jobs.first(where: { $0.kind == .watch && $0.title == folder }) else {
            throw ValidationError("no watch of \(folder); `uploadmon jobs` lists the jobs")
        }
        return job.id
    }
}

struct JobsMaintenanceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "maintenance", abstract: "Change how often maintenance runs and how much history it keeps.")

    @Option(name: .long, help: ArgumentHelp("Run at most this often (e.g. 12h, 1d; at least 1m).", valueName: "duration"))
    var every: String?

    @Option(name: .long, help: ArgumentHelp("Keep finished uploads and events this long (e.g. 7d, 30d).", valueName: "duration"))
    var keep: String?

    func validate() throws {
        guard every != nil || keep != nil else { throw ValidationError("say what to change: --every, --keep or both") }
        do throws(RangeError) {
            if let every { _ = try DurationRule.maintenanceInterval.parse(every, option: "--every") }
            if let keep { _ = try DurationRule.history.parse(keep, option: "--keep") }
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() throws {
        let reply = try JobsRequest.send(.maintenance(everySeconds: every.flatMap(DurationText.parse), keepSeconds: keep.flatMap(DurationText.parse)), doing: "change maintenance")
        guard case .job(let job, _) = reply else { return }
        print("Maintenance runs every \(DurationText.format(job.intervalSeconds)) and \(job.detail); next run \(JobsTable.timestamp(job.earliestBeginAt)).")
    }
}

enum JobsRequest {
    /// Sends a request to the agent (starting it when none runs); fails on an error reply.
    @discardableResult
    static func send(_ request: AgentRequest, doing what: String) throws -> AgentReply {
        let connection = try BackgroundSend.connectOrStart(paths: StatePaths.resolve(), client: "jobs")
        defer { connection.client.close() }
        let reply = try connection.client.request(request, timeout: 30)
        if case .error = reply { throw AgentFailure.message(AgentClient.text(of: reply, doing: what)) }
        return reply
    }
}

struct JobsDocument: Encodable {
    let agent: AgentStatus?
    let jobs: [JobSnapshot]
}

/// The plain-text form of `jobs`.
enum JobsTable {
    static func agentLine(_ agent: AgentStatus?, watches: Int) -> String {
        guard let agent else {
            return watches > 0
                ? "Agent: not running, so watched folders are not looked at until it starts (`uploadmon agent`, `send --background` or the monitor start it)."
                : "Agent: not running; due jobs run when it next starts."
        }
        return "Agent: running (pid \(agent.pid))."
    }

    static func render(_ jobs: [JobSnapshot], now: Date, agentRuns: Bool) -> String {
        let header = ["ID", "JOB", "EVERY", "LAST RUN", "RESULT", "NEXT RUN"]
        var rows = [header]
        for job in jobs {
            rows.append([
                String(job.id), describe(job), DurationText.format(job.intervalSeconds),
                job.lastRunAt.map(timestamp) ?? "never", result(job), next(job, now: now, agentRuns: agentRuns),
            ])
        }
        return Table.render(rows)
    }

    static func describe(_ job: JobSnapshot) -> String {
        switch job.kind {
        case .watch:
            var text = "watch \(job.title) \(job.detail)"
            text += " (\(job.filesQueued) queued"
            if job.filesPending > 0 { text += ", \(job.filesPending) settling" }
            if job.filesSkipped > 0 { text += ", \(job.filesSkipped) passed over" }
            return text + ")"
        case .maintenance:
            return "maintenance, \(job.detail)"
        }
    }

    static func result(_ job: JobSnapshot) -> String {
        guard let result = job.lastResult else { return "" }
        return job.lastFailed ? "FAILED: " + result : result
    }

    static func next(_ job: JobSnapshot, now: Date, agentRuns: Bool) -> String {
        let wait = job.earliestBeginAt.timeIntervalSince(now)
        if wait <= 0 { return agentRuns ? "now" : "when the agent starts" }
        return "\(timestamp(job.earliestBeginAt)) (in \(DurationText.countdown(wait)))" + (agentRuns ? "" : ", if the agent runs")
    }

    static func timestamp(_ date: Date) -> String {
        StatusTable.makeTimestampFormatter().string(from: date)
    }
}

/// Left-aligned columns two spaces apart, by terminal width (wide CJK characters count two);
/// the last column is not padded.
enum Table {
    static func render(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        let widths = first.indices.map { column in rows.map { DisplayWidth.of($0[column]) }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: max(0, widths[index] - DisplayWidth.of(cell)))
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
