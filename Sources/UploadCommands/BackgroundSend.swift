import Foundation
import UploadAgent
import UploadCore
import UploadJournal
import UploadReports

/// `uploadmon send --background`: hands the files to the agent (starting it when none runs)
/// and returns at once; the uploads go on after this command, the terminal or the SSH session end.
public struct BackgroundSend {
    public var settings: TransportSettings
    public var json: Bool
    public var output: CommandOutput
    public var paths: StatePaths

    public init(settings: TransportSettings, json: Bool, output: CommandOutput = .standard, paths: StatePaths = .resolve()) {
        self.settings = settings
        self.json = json
        self.output = output
        self.paths = paths
    }

    /// The exit status: usage when the agent refused a file.
    public func run(_ requests: [UploadRequest]) throws -> Int32 {
        let connection = try AgentHost.connectOrStart(paths: paths, client: "send --background")
        defer { connection.client.close() }
        let items = requests.map { EnqueueItem(request: $0, settings: settings, origin: "send") }
        let reply = try connection.client.request(.enqueue(items: items), timeout: 120)
        guard case .enqueued(let results) = reply else {
            throw CommandFailure.failed(AgentClient.text(of: reply, doing: "queue the files"))
        }
        let refused = report(results, agentPID: connection.client.agentPID, started: connection.started)
        return refused > 0 ? SendExit.usage : SendExit.success
    }

    /// Says what the agent did with each file; how many it refused.
    public func report(_ results: [EnqueueResult], agentPID: Int32, started: Bool) -> Int {
        var refused = 0
        for result in results {
            switch result {
            case .queued(let upload):
                if json {
                    output.sayJSON(String(decoding: AgentCoding.encode(Queued(id: upload.id.rawValue, file: upload.path ?? "-", name: upload.name, url: upload.url)), as: UTF8.self))
                } else {
                    output.say("queued \(upload.id) \(InvisibleCharacters.escaped(upload.name)) → \(upload.url)")
                }
            case .refused(let path, let reason):
                refused += 1
                output.complain("uploadmon: \(path): \(reason)")
            }
        }
        if !json {
            output.say("The uploads continue in the background (\(AgentWording.which(pid: agentPID, started: started))). Follow them with `uploadmon status` or the monitor.")
        }
        return refused
    }

    struct Queued: Encodable {
        let event = "queued"
        let id: Int
        let file: String
        let name: String
        let url: String
    }
}

/// How the commands that talk to the agent name it.
public enum AgentWording {
    /// "started the agent (pid 12)" or "agent pid 12".
    public static func which(pid: Int32, started: Bool) -> String {
        started ? "started the agent (pid \(pid))" : "agent pid \(pid)"
    }
}
