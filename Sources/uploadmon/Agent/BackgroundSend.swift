import ArgumentParser
import Foundation
import UploadAgent
import UploadClient
import UploadCore
import UploadReports
import UploadJournal

/// `uploadmon send --background`: hands the files to the agent (starting it when none runs)
/// and returns at once; the uploads go on after this command, the terminal or the SSH session end.
enum BackgroundSend {
    static func run(_ requests: [UploadRequest], options: UploadOptions, json: Bool) throws {
        let paths = StatePaths.resolve()
        let connection = try connectOrStart(paths: paths, client: "send --background")
        defer { connection.client.close() }
        let items = requests.map { EnqueueItem(request: $0, settings: options.transportSettings, origin: "send") }
        let reply = try connection.client.request(.enqueue(items: items), timeout: 120)
        guard case .enqueued(let results) = reply else {
            throw AgentFailure.message(AgentClient.text(of: reply, doing: "queue the files"))
        }
        var refused = 0
        for result in results {
            switch result {
            case .queued(let upload):
                if json {
                    Console.sayJSON(String(decoding: AgentCoding.encode(BackgroundQueued(id: upload.id.rawValue, file: upload.path ?? "-", name: upload.name, url: upload.url)), as: UTF8.self))
                } else {
                    Console.say("queued \(upload.id) \(InvisibleCharacters.escaped(upload.name)) → \(upload.url)")
                }
            case .refused(let path, let reason):
                refused += 1
                Console.complain("uploadmon: \(path): \(reason)")
            }
        }
        if !json {
            let how = connection.started ? "started the agent (pid \(connection.client.agentPID))" : "agent pid \(connection.client.agentPID)"
            Console.say("The uploads continue in the background (\(how)). Follow them with `uploadmon status` or the monitor.")
        }
        if refused > 0 { throw SendExit.usage }
    }

    static func connectOrStart(paths: StatePaths, client: String) throws -> AgentLauncher.Connection {
        do {
            return try AgentLauncher.connectOrStart(paths: paths, client: client, executable: AgentLauncher.currentExecutable())
        } catch {
            throw AgentFailure.message("\(error)")
        }
    }
}

struct BackgroundQueued: Encodable {
    let event = "queued"
    let id: Int
    let file: String
    let name: String
    let url: String
}
