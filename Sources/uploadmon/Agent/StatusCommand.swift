import ArgumentParser
import Foundation
import UploadAgent
import UploadCore
import UploadJournal

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the background uploads from the journal, and whether the agent runs.",
        discussion: """
        Reads the journal directly, so it works whether or not the agent runs. Header values are \
        never shown.

        Examples:
          uploadmon status
          uploadmon status --json | jq '.uploads[] | select(.state == "failed")'
        """
    )

    @Flag(name: .long, help: "Print one JSON document: the agent and the uploads.")
    var json = false

    @Option(name: .long, help: "Show at most this many of the most recent uploads.")
    var limit = 50

    func validate() throws {
        guard limit >= 1 else { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        let paths = StatePaths.resolve()
        let agent = Self.agentStatus(paths)
        var uploads: [UploadRecord] = []
        if FileManager.default.fileExists(atPath: paths.journal) {
            do {
                uploads = try Journal(path: paths.journal).snapshots(limit: limit)
            } catch {
                throw AgentFailure.message("cannot read the journal \(paths.journal): \(error)")
            }
        }
        if json {
            let document = StatusDocument(agent: agent, journal: paths.journal, uploads: uploads)
            print(String(decoding: try Self.prettyEncoder.encode(document), as: UTF8.self))
            return
        }
        print(StatusTable.agentLine(agent, unfinished: uploads.filter { !$0.state.isFinished }.count))
        guard !uploads.isEmpty else {
            print("No background uploads yet. Queue some with `uploadmon send FILE… --to URL --background`.")
            return
        }
        print(StatusTable.render(uploads, now: Date()))
    }

    static func agentStatus(_ paths: StatePaths) -> AgentStatus? {
        guard let client = try? AgentClient.connect(socketPath: paths.socket, client: "status", timeout: 5) else { return nil }
        defer { client.close() }
        guard case .status(let status) = try? client.request(.status, timeout: 5) else { return nil }
        return status
    }

    static let prettyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()
}


struct StatusDocument: Encodable {
    let agent: AgentStatus?
    let journal: String
    /// Each upload as its record's JSON form (the same the agent sends its clients).
    let uploads: [UploadRecord]
}

/// The plain-text form of `status`.
enum StatusTable {
    static func agentLine(_ agent: AgentStatus?, unfinished: Int) -> String {
        guard let agent else {
            return unfinished > 0
                ? "Agent: not running. \(unfinished) unfinished upload(s) continue when it starts (`uploadmon agent`, or any `send --background`)."
                : "Agent: not running."
        }
        return "Agent: running (pid \(agent.pid)), \(agent.running) sending, \(agent.queued) waiting, \(agent.clients - 1) other client(s) attached."
    }

    static func render(_ uploads: [UploadRecord], now: Date) -> String {
        let header = ["ID", "STATE", "NAME", "PROGRESS", "ANSWER", "QUEUED"]
        var rows = [header]
        let timestamp = makeTimestampFormatter()
        for upload in uploads {
            rows.append([
                upload.id.description, upload.state.rawValue, upload.name, progress(upload), answer(upload, now: now),
                timestamp.string(from: upload.createdAt),
            ])
        }
        return Table.render(rows)
    }

    /// Local time, sortable, the same on every machine.
    static func makeTimestampFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter
    }

    static func progress(_ upload: UploadRecord) -> String {
        let total = upload.bytesExpected ?? upload.fileSize
        switch upload.state {
        case .succeeded:
            return ByteFormat.bytes(upload.fileSize ?? 0)
        case .sending:
            guard let total, total > 0 else { return ByteFormat.bytes(upload.bytesSent) }
            return "\(Int(Double(upload.bytesSent) * 100 / Double(total))) % of \(ByteFormat.bytes(total))"
        case .queued, .retrying, .failed:
            return upload.fileSize.map(ByteFormat.bytes) ?? ""
        }
    }

    static func answer(_ upload: UploadRecord, now: Date = Date()) -> String {
        switch upload.phase {
        case .finished(let outcome):
            return outcome.words(reason: upload.response?.reason)
        case .waitingToRetry(let attempt, let reason, let due):
            return "waiting to retry in \(ByteFormat.duration(max(0, due.timeIntervalSince(now)))) (attempt \(attempt): \(reason))"
        case .queued, .sending:
            return ""
        }
    }
}
