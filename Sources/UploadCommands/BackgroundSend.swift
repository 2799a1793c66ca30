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
        var refused = 0
        // Each request's files are reported as it is answered, so a long list shows progress.
        let unexpected = try connection.client.enqueue(items, brief: true) { results in refused += report(results) }
        if let unexpected {
            throw CommandFailure.failed(AgentClient.text(of: unexpected, doing: "queue the files"))
        }
        sayContinuing(agentPID: connection.client.agentPID, started: connection.started)
        return refused > 0 ? SendExit.usage : SendExit.success
    }

    /// The closing line (none in JSON): where the uploads go on and how to follow them.
    public func sayContinuing(agentPID: Int32, started: Bool) {
        guard !json else { return }
        output.say(
            "The uploads continue in the background (\(AgentWording.which(pid: agentPID, started: started))). Follow them with `uploadmon status` or the monitor."
        )
    }

    /// Says what the agent did with each file; how many it refused.
    public func report(_ results: [EnqueueResult]) -> Int {
        var refused = 0
        for result in results {
            switch result {
            case .queued, .accepted:
                guard let upload = result.queuedUpload else { continue }
                if json {
                    output.sayJSON(
                        String(
                            decoding: AgentCoding.encode(Queued(id: upload.id.rawValue, file: upload.path ?? "-", name: upload.name, url: upload.url)),
                            as: UTF8.self))
                } else {
                    output.say("queued \(upload.id) \(InvisibleCharacters.escaped(upload.name)) → \(upload.url)")
                }
            case .refused(let path, let reason):
                refused += 1
                output.complain("uploadmon: \(path): \(reason)")
            }
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
