import Foundation
import ArgumentParser
import UploadCommands
import UploadCore
import UploadReports

struct JobsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract: "List the agent's scheduled jobs (watched folders, maintenance) with their next run.",
        discussion: CommandHelp.jobs,
        subcommands: [List.self, Run.self, Remove.self, Maintenance.self],
        defaultSubcommand: List.self
    )
}

extension JobsCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the jobs (read from the journal; works whether or not the agent runs).")

        @Flag(name: .long, help: "Print one JSON document: the agent and the jobs.")
        var json = false

        func run() throws {
            try StatusReport().jobs(json: json, now: Date())
        }
    }

    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run a job now instead of at its next run (starts the agent when none runs).")

        @Argument(help: "The job's id (see `uploadmon jobs`).")
        var id: Int64

        func run() throws {
            try AgentHost.request(.runJob(id: id), doing: "run job \(id)", client: "jobs")
            Console.say("Job \(id) runs now; see how it went with `uploadmon jobs`.")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop watching a folder (by job id or folder). Uploads it queued carry on.")

        @Argument(help: ArgumentHelp("The job's id, or the watched folder.", valueName: "id-or-folder"))
        var job: String

        func run() throws {
            let id = try StatusReport().jobID(job)
            try AgentHost.request(.removeJob(id: id), doing: "remove job \(id)", client: "jobs")
            Console.say("Removed job \(id); uploads it already queued carry on.")
        }
    }

    struct Maintenance: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change how often maintenance runs and how much history it keeps.")

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
            let reply = try AgentHost.request(
                .maintenance(everySeconds: every.flatMap(DurationText.parse), keepSeconds: keep.flatMap(DurationText.parse)),
                doing: "change maintenance", client: "jobs")
            guard case .job(let job, _) = reply else { return }
            Console.say(
                "Maintenance runs every \(DurationText.format(job.intervalSeconds)) and \(job.detail); next run \(JobsTable.timestamp(job.earliestBeginAt)).")
        }
    }
}
