import Foundation
import Glibc
import TerminalCanvas
import UploadAgent
import UploadCore
import UploadJournal
import UploadReports

/// `uploadmon status`: the agent (if one answers) and the journal's most recent uploads, as a
/// table or one JSON document.
public struct StatusReport {
    public var paths: StatePaths
    public var output: CommandOutput

    public init(paths: StatePaths = .resolve(), output: CommandOutput = .standard) {
        self.paths = paths
        self.output = output
    }

    /// Prints the agent's state and the newest `limit` uploads from the journal (as JSON with `json`).
    public func run(json: Bool, limit: Int, now: Date) throws {
        let agent = AgentHost.status(paths, client: "status")
        var uploads: [UploadRecord] = []
        var counts: [UploadState: Int] = [:]
        if FileManager.default.fileExists(atPath: paths.journal) {
            do {
                let journal = try Journal(path: paths.journal)
                uploads = try journal.snapshots(limit: limit)
                counts = try journal.stateCounts()
            } catch {
                throw CommandFailure.failed("cannot read the journal \(paths.journal): \(error)")
            }
        }
        // What the agent runs with, or what it will start with (a broken file says so here too).
        let settings: AgentSettings
        if let agent {
            settings = agent.settings
        } else {
            do { settings = try AgentSettings.load(paths.agentSettings) } catch { throw CommandFailure.failed("\(error)") }
        }
        if json {
            let document = StatusDocument(agent: agent, settings: settings, journal: paths.journal, uploads: uploads)
            output.sayJSON(try PrettyJSON.text(document))
            return
        }
        output.say(StatusTable.agentLine(agent, unfinished: uploads.filter { !$0.state.isFinished }.count))
        output.say(StatusTable.settingsLine(settings, running: agent != nil, now: now))
        guard !uploads.isEmpty else {
            output.say("No background uploads yet. Queue some with `uploadmon send FILE… --to URL --background`.")
            return
        }
        output.say(StatusTable.render(uploads, now: now))
        output.say(StatusTable.totalsLine(counts, shown: uploads.count))
    }

    /// `uploadmon jobs`: the agent's scheduled jobs with their next run.
    public func jobs(json: Bool, now: Date) throws {
        let agent = AgentHost.status(paths, client: "jobs")
        var jobs: [JobSnapshot] = []
        if FileManager.default.fileExists(atPath: paths.journal) {
            do {
                jobs = try Journal(path: paths.journal).jobSnapshots()
            } catch {
                throw CommandFailure.failed("cannot read the journal \(paths.journal): \(error)")
            }
        }
        if json {
            output.sayJSON(try PrettyJSON.text(JobsDocument(agent: agent, jobs: jobs)))
            return
        }
        output.say(JobsTable.agentLine(agent, watches: jobs.count { $0.kind == .watch }))
        guard !jobs.isEmpty else {
            output.say("No jobs yet: the agent adds its maintenance job when it first starts. Watch a folder with `uploadmon watch FOLDER --to URL`.")
            return
        }
        output.say(JobsTable.render(jobs, now: now, agentRuns: agent != nil))
    }

    /// A job named by its id or by the folder it watches.
    public func jobID(_ text: String) throws -> Int64 {
        if let id = Int64(text) { return id }
        let folder = (try? WatchSetup.folderPath(text)) ?? URL(fileURLWithPath: text).standardizedFileURL.path
        let jobs = (try? Journal(path: paths.journal).jobSnapshots()) ?? []
        guard let job = jobs.first(where: { $0.kind == .watch && $0.title == folder }) else {
            throw CommandFailure.usage("no watch of \(folder); `uploadmon jobs` lists the jobs")
        }
        return job.id
    }
}

/// What `status --json` prints: the agent, its settings and every upload's record.
public struct StatusDocument: Encodable {
    let agent: AgentStatus?
    /// In force (the agent runs) or read at its next start.
    let settings: AgentSettings
    let journal: String
    /// Each upload as its record's JSON form (the same the agent sends its clients).
    let uploads: [UploadRecord]
}

struct JobsDocument: Encodable {
    let agent: AgentStatus?
    let jobs: [JobSnapshot]
}

/// The commands' JSON documents (`status --json`, `jobs --json`, `watch --json`): indented,
/// keys sorted, dates in ISO 8601.
public enum PrettyJSON {
    public static func text(_ value: some Encodable) throws -> String {
        try JSONWriter.text(value, .indented)
    }
}

/// `uploadmon watch`: a folder handed to the agent, which looks at it every so often.
public struct WatchSetup {
    public var template: EnqueueItem
    public var everySeconds: Double
    public var newOnly: Bool
    public var skipSent: Bool
    public var json: Bool
    public var output: CommandOutput

    public init(template: EnqueueItem, everySeconds: Double, newOnly: Bool, skipSent: Bool, json: Bool, output: CommandOutput = .standard) {
        self.template = template
        self.everySeconds = everySeconds
        self.newOnly = newOnly
        self.skipSent = skipSent
        self.json = json
        self.output = output
    }

    /// The folder as an absolute path with symbolic links resolved, so one folder is one job.
    public static func folderPath(_ folder: String) throws -> String {
        let absolute = URL(fileURLWithPath: folder).standardizedFileURL.path
        guard let resolved = realpath(absolute, nil) else {
            throw CommandFailure.usage("cannot watch \(folder): \(String(cString: strerror(errno)))")
        }
        defer { free(resolved) }
        var isDirectory: ObjCBool = false
        let path = String(cString: resolved)
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure.usage("cannot watch \(folder): it is not a folder")
        }
        return path
    }

    /// Registers the watch with the agent (starting it when none runs) and prints the job.
    public func run(paths: StatePaths = .resolve()) throws {
        guard case .file(let directory) = template.request.source else { return }
        let connection = try AgentHost.connectOrStart(paths: paths, client: "watch")
        defer { connection.client.close() }
        let reply = try connection.client.request(
            .watch(directory: directory, template: template, everySeconds: everySeconds, newOnly: newOnly, skipSent: skipSent), timeout: 60)
        guard case .job(let job, let created) = reply else {
            throw CommandFailure.failed(AgentClient.text(of: reply, doing: "watch \(directory)"))
        }
        if json {
            output.sayJSON(try PrettyJSON.text(job))
            return
        }
        for line in lines(job, created: created, directory: directory, agent: AgentWording.which(pid: connection.client.agentPID, started: connection.started))
        {
            output.say(line)
        }
    }

    /// What a person reads once the agent took the watch.
    public func lines(_ job: JobSnapshot, created: Bool, directory: String, agent: String) -> [String] {
        let interval = DurationText.format(everySeconds)
        return [
            "\(created ? "Watching" : "Updated the watch of") \(directory) every \(interval) \(job.detail) (job \(job.id)).",
            newOnly
                ? "Files already in the folder are left alone (\(job.filesSkipped) passed over); new ones are queued once they stay the same over two looks (\(interval) apart)."
                : "Image files are queued once they stay the same over two looks, \(interval) apart; the first look was just now.",
            "The agent runs the watch (\(agent)) and does not exit while a folder is watched. `uploadmon jobs` lists jobs; `uploadmon jobs remove \(job.id)` stops watching.",
        ]
    }
}

/// `uploadmon agent config`: the stored settings shown, or changed, stored and put in force in
/// a running agent.
public struct AgentSettingsChange: Sendable {
    public var concurrency: Int?
    /// A rate, or "none" for full speed.
    public var limitRate: String?
    public var between: String?
    public var allDay: Bool

    public init(concurrency: Int? = nil, limitRate: String? = nil, between: String? = nil, allDay: Bool = false) {
        self.concurrency = concurrency
        self.limitRate = limitRate
        self.between = between
        self.allDay = allDay
    }

    public var changes: Bool { concurrency != nil || limitRate != nil || between != nil || allDay }

    /// Why these options cannot be taken, or nil.
    public var refusal: String? {
        if between != nil && allDay { return "--between and --all-day contradict each other; give one" }
        if let limitRate, limitRate != "none",
            let refusal = ByteSize.refusal(limitRate, option: "--limit-rate", atLeast: 1, like: "500k or 2MB, or none for full speed", noun: "rate")
        {
            return refusal
        }
        do throws(RangeError) {
            if let between { _ = try DailyWindow(parsing: between) }
        } catch {
            return error.message
        }
        return nil
    }

    /// The stored settings with these changes.
    public func changed(_ stored: AgentSettings) throws -> AgentSettings {
        var settings = stored
        if let concurrency { settings.concurrency = concurrency }
        if let limitRate {
            settings.rateLimit = limitRate == "none" ? nil : ByteSize.parse(limitRate)
            if settings.rateLimit == nil { settings.limitWindow = nil }
        }
        do throws(RangeError) {
            if let between { settings.limitWindow = try DailyWindow(parsing: between) }
        } catch {
            throw CommandFailure.usage(error.message)
        }
        if allDay { settings.limitWindow = nil }
        if let refusal = settings.refusal { throw CommandFailure.usage(refusal) }
        return settings
    }

    /// Shows the settings, or changes them: written next to the journal and put in force in a running agent.
    public func run(paths: StatePaths = .resolve(), output: CommandOutput = .standard, now: Date) throws {
        var settings: AgentSettings
        do {
            settings = try AgentSettings.load(paths.agentSettings)
            if changes {
                settings = try changed(settings)
                try paths.prepare()
                try settings.save(paths.agentSettings)
            }
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure.failed("\(error)")
        }
        output.say("Agent settings (\(paths.agentSettings)):")
        output.say("  \(settings.summary)")
        if let line = settings.nowText(at: now) { output.say("  \(line)") }
        output.say(Self.tellRunningAgent(paths, settings: settings, changed: changes))
    }

    /// Puts changed settings in force in a running agent, or says what the running one uses.
    public static func tellRunningAgent(_ paths: StatePaths, settings: AgentSettings, changed: Bool) -> String {
        let client: AgentClient
        do {
            client = try AgentClient.connect(socketPath: paths.socket, client: "agent config", timeout: 5)
        } catch let error as SocketError where error.meansNoAgent {
            return changed ? "No agent is running; it starts with these." : "No agent is running; these apply when it starts."
        } catch {
            return "The running agent cannot take them (\(error)); they apply at its next start (`uploadmon agent stop` ends it)."
        }
        defer { client.close() }
        let pid = client.agentPID
        if changed {
            let reply = try? client.request(.configure(settings), timeout: 10)
            guard case .configured = reply else {
                return "The running agent (pid \(pid)) did not take them: " + (reply.map { AgentClient.text(of: $0, doing: "configure") } ?? "no answer")
                    + "; they apply at its next start."
            }
            return "In force in the running agent (pid \(pid)) now."
        }
        guard case .status(let status)? = try? client.request(.status, timeout: 5) else {
            return "The running agent (pid \(pid)) did not say what it uses."
        }
        return status.settings == settings
            ? "The running agent (pid \(pid)) uses these."
            : "The running agent (pid \(pid)) runs with: \(status.settings.summary) (given when it started)."
    }
}

/// `uploadmon retry` and `uploadmon cancel`: the background agent's uploads, by id or all that
/// qualify, from the command line (as `R` and `c` in the monitor).
public struct BackgroundControl {
    public var paths: StatePaths

    public init(paths: StatePaths = .resolve()) {
        self.paths = paths
    }

    /// `12` or `#12`.
    public static func id(_ text: String) -> UploadID? {
        let digits = text.hasPrefix("#") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Int(digits), number > 0 else { return nil }
        return UploadID(number)
    }

    /// The ids given, or every upload in `states` when `all`; usage errors said in words.
    func ids(_ given: [String], all: Bool, states: [UploadState], flag: String) throws(CommandFailure) -> [UploadID] {
        guard all != !given.isEmpty else {
            throw .usage(all ? "name ids or give \(flag), not both" : "name the uploads by id (uploadmon status shows them), or give \(flag)")
        }
        if all {
            guard FileManager.default.fileExists(atPath: paths.journal) else { return [] }
            do { return try Journal(path: paths.journal).ids(in: states) } catch { throw .failed("cannot read the journal \(paths.journal): \(error)") }
        }
        var ids: [UploadID] = []
        for text in given {
            guard let id = Self.id(text) else { throw .usage("\(text) is not an upload id (a number, as uploadmon status shows it: 12 or #12)") }
            ids.append(id)
        }
        return ids
    }

    /// Asks the agent (started when none runs) to `verb` each; what to print and the status:
    /// 0 all taken, 1 when any was refused (each said).
    func ask(_ ids: [UploadID], verb: String, request: (UploadID) -> AgentRequest) throws(CommandFailure) -> (text: String, status: Int32) {
        guard !ids.isEmpty else { return ("Nothing to \(verb).", 0) }
        let connection: AgentLauncher.Connection
        do { connection = try AgentHost.connectOrStart(paths: paths, client: verb) } catch { throw .failed("\(error)") }
        defer { connection.client.close() }
        var refused: [String] = []
        for id in ids {
            do {
                if case .error(let message) = try connection.client.request(request(id)) { refused.append("\(id): \(message)") }
            } catch {
                throw .failed("the agent stopped answering after \(ids.count - refused.count) of \(ids.count): \(error)")
            }
        }
        let done = ids.count - refused.count
        var lines = refused.map { "uploadmon: " + $0 }
        if done > 0 {
            lines.append(
                "\(verb == "retry" ? "Retrying" : "Cancelled") \(done) upload\(done == 1 ? "" : "s")\(verb == "retry" ? " in the background agent" : ""); follow with uploadmon status, or open the monitor."
            )
        }
        return (lines.joined(separator: "\n"), refused.isEmpty ? 0 : 1)
    }

    /// `uploadmon retry ID…` or `--failed` (every failed or cancelled upload).
    public func retry(_ given: [String], failed: Bool) throws(CommandFailure) -> (text: String, status: Int32) {
        try ask(try ids(given, all: failed, states: [.failed], flag: "--failed"), verb: "retry") { .retry(id: $0) }
    }

    /// `uploadmon cancel ID…` or `--all` (every upload not finished).
    public func cancel(_ given: [String], all: Bool) throws(CommandFailure) -> (text: String, status: Int32) {
        try ask(try ids(given, all: all, states: [.queued, .sending, .waitingToRetry], flag: "--all"), verb: "cancel") { .cancel(id: $0) }
    }
}
