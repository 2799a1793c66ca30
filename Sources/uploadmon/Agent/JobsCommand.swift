import ArgumentParser
import Foundation
import Glibc
import TerminalCanvas
import UploadAgent
import UploadCore
import UploadReports
import UploadJournal

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
            Console.sayJSON(String(decoding: try StatusCommand.prettyEncoder.encode(document), as: UTF8.self))
            return
        }
        Console.say(JobsTable.agentLine(agent, watches: jobs.count { $0.kind == .watch }))
        guard !jobs.isEmpty else {
            Console.say("No jobs yet: the agent adds its maintenance job when it first starts. Watch a folder with `uploadmon watch FOLDER --to URL`.")
            return
        }
        Console.say(JobsTable.render(jobs, now: Date(), agentRuns: agent != nil))
    }
}

struct JobsRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run a job now instead of at its next run (starts the agent when none runs).")

    @Argument(help: "The job's id (see `uploadmon jobs`).")
    var id: Int64

    func run() throws {
        try JobsRequest.send(.runJob(id: id), doing: "run job \(id)")
        Console.say("Job \(id) runs now; see how it went with `uploadmon jobs`.")
    }
}

struct JobsRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Stop watching a folder (by job id or folder). Uploads it queued carry on.")

    @Argument(help: ArgumentHelp("The job's id, or the watched folder.", valueName: "id-or-folder"))
    var job: String

    func run() throws {
        let id = try Self.jobID(job)
        try JobsRequest.send(.removeJob(id: id), doing: "remove job \(id)")
        Console.say("Removed job \(id); uploads it already queued carry on.")
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
        Console.say("Maintenance runs every \(DurationText.format(job.intervalSeconds)) and \(job.detail); next run \(JobsTable.timestamp(job.earliestBeginAt)).")
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
