import Foundation
import UploadCore
import UploadJournal

/// The agent's protocol: one JSON object per line over the Unix socket, in both directions.
/// A client sends `AgentEnvelope`s; the agent answers each with a `reply` carrying the same id,
/// and pushes `event`s to clients that subscribed.
public enum AgentProtocol {
    /// Bumped whenever a message changes shape; a client and an agent of different versions
    /// refuse each other with a message that says what to do.
    public static let version = 7
    /// The longest line either side accepts (an enqueue of many files is the largest).
    public static let maxLineBytes = 64 << 20
}

/// A request with the number its reply will carry.
public struct AgentEnvelope: Codable, Sendable {
    public var id: Int
    public var request: AgentRequest

    public init(id: Int, request: AgentRequest) {
        self.id = id
        self.request = request
    }
}

/// What a client asks of the agent.
public enum AgentRequest: Codable, Sendable {
    /// The first message of every connection.
    case hello(version: Int, client: String)
    /// Start receiving events. With `after`, the reply also carries every logged event after
    /// that sequence number (what the client missed while away).
    case subscribe(after: Int64?)
    case enqueue(items: EnqueueBatch)
    case cancel(id: UploadID)
    case retry(id: UploadID)
    case status
    case stop
    /// Register (or update) a watch of `directory` (absolute): its image files are queued like
    /// `template` (its path is ignored). With `newOnly`, what is in the folder now is passed over;
    /// with `skipSent`, files whose content was already sent to the endpoint are (optional, so a
    /// client that does not know it still talks to this agent).
    case watch(directory: String, template: EnqueueItem, everySeconds: Double, newOnly: Bool, skipSent: Bool? = nil)
    case jobs
    /// Run a job at the next chance instead of at its scheduled time.
    case runJob(id: Int64)
    case removeJob(id: Int64)
    /// Change how often maintenance runs and how much history it keeps.
    case maintenance(everySeconds: Double?, keepSeconds: Double?)
    /// Put these settings in force at once (`uploadmon agent config` stored them already).
    case configure(AgentSettings)
}

/// One file to upload, as a client hands it to the agent. `path` is absolute.
public struct EnqueueItem: Codable, Sendable, Hashable {
    /// The request as the client made it, header values included (kept in the journal to
    /// resend after a restart, never shown).
    public var request: UploadRequest
    public var settings: TransportSettings
    public var origin: String

    public init(request: UploadRequest, settings: TransportSettings, origin: String) {
        self.request = request
        self.settings = settings
        self.origin = origin
    }

    /// The file's path as the client gave it (`-` for standard input).
    public var path: String { request.source.path }
}

/// The files of one enqueue request. Files queued together share their transport settings,
/// where they came from and the shape of their request (endpoint, field, form fields,
/// headers): those travel once per distinct value, and each file is a short array of what is
/// its own — the shapes', settings' and origin's positions, then path, name, size, modification
/// and change times, idempotency key and resume point. (10,000 files carried 10,000 copies of
/// the same settings, the larger part of the request; then 10,000 requests of a dozen named
/// fields each, which were most of what handing over a folder cost both ends.)
public struct EnqueueBatch: Codable, Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral {
    public var items: [EnqueueItem]
    /// Whether the client wants each queued upload's id and name only (`EnqueueResult.accepted`)
    /// rather than its whole record: `send --background` prints a line per file, while the
    /// monitor shows the record.
    public var brief = false

    public init(_ items: [EnqueueItem], brief: Bool = false) {
        self.items = items
        self.brief = brief
    }

    public init(arrayLiteral items: EnqueueItem...) { self.items = items }

    public var startIndex: Int { items.startIndex }
    public var endIndex: Int { items.endIndex }
    public subscript(position: Int) -> EnqueueItem { items[position] }

    /// The distinct settings, in the order the files first use them.
    public var distinctSettings: [TransportSettings] { Shared(items.map(\.settings)).values }

    private enum CodingKeys: String, CodingKey { case settings, origins, shapes, files, brief }

    /// What one file has of its own, as an array: `[shape, settings, origin, path or null,
    /// name, size or null, mtime, ctime or null, key or null]`, plus its resume point when it
    /// has one.
    private struct File: Codable {
        var shape: Int
        var settings: Int
        var origin: Int
        var request: UploadRequest

        init(shape: Int, settings: Int, origin: Int, request: UploadRequest) {
            self.shape = shape
            self.settings = settings
            self.origin = origin
            self.request = request
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(shape)
            try container.encode(settings)
            try container.encode(origin)
            if case .file(let path) = request.source { try container.encode(path) } else { try container.encodeNil() }
            try container.encode(request.uploadName)
            if let file = request.expectedFile {
                try container.encode(file.size)
                try container.encode(file.modificationNanoseconds)
                if let change = file.changeNanoseconds { try container.encode(change) } else { try container.encodeNil() }
            } else {
                try container.encodeNil()
                try container.encode(0 as Int64)
                try container.encodeNil()
            }
            if let key = request.idempotencyKey { try container.encode(key) } else { try container.encodeNil() }
            if let resume = request.resume { try container.encode(resume) }
        }

        /// The file's fields over `shape`'s request.
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            shape = try container.decode(Int.self)
            settings = try container.decode(Int.self)
            origin = try container.decode(Int.self)
            let path = try container.decodeNil() ? nil : try container.decode(String.self)
            request = UploadRequest(source: path.map { .file(path: $0) } ?? .standardInput, url: "", uploadName: try container.decode(String.self))
            let size = try container.decodeNil() ? nil : try container.decode(Int64.self)
            let modified = try container.decode(Int64.self)
            let changed = try container.decodeNil() ? nil : try container.decode(Int64.self)
            request.expectedFile = size.map { FileFingerprint(size: $0, modificationNanoseconds: modified, changeNanoseconds: changed) }
            request.idempotencyKey = try container.decodeNil() ? nil : try container.decode(String.self)
            if !container.isAtEnd { request.resume = try container.decode(ResumePoint.self) }
        }

        /// `request` with the fields each file has of its own taken out: what files share.
        static func shape(of request: UploadRequest) -> UploadRequest {
            var shape = request
            shape.source = .standardInput
            shape.uploadName = ""
            shape.expectedFile = nil
            shape.idempotencyKey = nil
            shape.resume = nil
            return shape
        }

        /// The file's request: `shape` with the file's own fields.
        func request(over shape: UploadRequest) -> UploadRequest {
            var whole = shape
            whole.source = request.source
            whole.uploadName = request.uploadName
            whole.expectedFile = request.expectedFile
            whole.idempotencyKey = request.idempotencyKey
            whole.resume = request.resume
            return whole
        }
    }

    /// Values with their positions in a table of the distinct ones.
    private struct Shared<Value: Hashable> {
        var values: [Value] = []
        var positions: [Int] = []

        init(_ all: [Value]) {
            var known: [Value: Int] = [:]
            positions.reserveCapacity(all.count)
            for (index, value) in all.enumerated() {
                // Most files share the one before's: no hashing for those.
                if index > 0, all[index - 1] == value {
                    positions.append(positions[index - 1])
                    continue
                }
                if let position = known[value] {
                    positions.append(position)
                } else {
                    known[value] = values.count
                    positions.append(values.count)
                    values.append(value)
                }
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        let settings = Shared(items.map(\.settings))
        let origins = Shared(items.map(\.origin))
        let shapes = Shared(items.map { File.shape(of: $0.request) })
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(settings.values, forKey: .settings)
        try container.encode(origins.values, forKey: .origins)
        try container.encode(shapes.values, forKey: .shapes)
        try container.encode(
            items.indices.map {
                File(shape: shapes.positions[$0], settings: settings.positions[$0], origin: origins.positions[$0], request: items[$0].request)
            }, forKey: .files)
        if brief { try container.encode(brief, forKey: .brief) }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let settings = try container.decode([TransportSettings].self, forKey: .settings)
        let origins = try container.decode([String].self, forKey: .origins)
        let shapes = try container.decode([UploadRequest].self, forKey: .shapes)
        let files = try container.decode([File].self, forKey: .files)
        brief = try container.decodeIfPresent(Bool.self, forKey: .brief) ?? false
        items = try files.map { file in
            guard shapes.indices.contains(file.shape), settings.indices.contains(file.settings), origins.indices.contains(file.origin) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .files, in: container, debugDescription: "a file names a shape, settings or an origin the request does not carry")
            }
            return EnqueueItem(request: file.request(over: shapes[file.shape]), settings: settings[file.settings], origin: origins[file.origin])
        }
    }
}

/// What the agent sends a client: replies to its requests, and to subscribers the live events, the jobs and a stop.
public enum AgentMessage: Codable, Sendable {
    case reply(id: Int, reply: AgentReply)
    /// A live event; `seq` is set for events the journal logged (everything but progress and
    /// the drain summary), so a client can remember where it got to.
    case event(seq: Int64?, event: UploadEvent, at: Date)
    /// The scheduled jobs, pushed to subscribers whenever one changes or runs.
    case jobs([JobSnapshot])
    /// The agent is stopping on purpose (asked to, or a signal), for `reason`: a client should
    /// not start it again by itself. Clients that predate it skip the line.
    case stopping(reason: String)
}

/// The agent's answer to one request.
public enum AgentReply: Codable, Sendable {
    case hello(version: Int, pid: Int32)
    case ok
    case error(message: String)
    case subscribed(AgentSnapshot)
    case enqueued(results: [EnqueueResult])
    case status(AgentStatus)
    case job(JobSnapshot, created: Bool)
    case jobs([JobSnapshot])
    case configured(AgentSettings)
}

/// Where things stand when a client subscribes.
public struct AgentSnapshot: Codable, Sendable, Hashable {
    /// The most recent uploads, oldest first (finished ones included, up to a limit).
    public var uploads: [UploadRecord]
    /// The logged events after the client's `after`, oldest first; empty without `after`.
    public var missed: [JournalEntry]
    /// The newest sequence number at the moment of the snapshot.
    public var lastSequence: Int64
    public var jobs: [JobSnapshot]
    /// The failed uploads older than `uploads`, oldest first (up to `AgentSnapshot.failuresKept`):
    /// every failure of a large batch has its row. Absent from older agents.
    public var earlierFailures: [UploadRecord]?
    /// Of the uploads whose end was logged after the client's `after`, how many succeeded and
    /// how many failed (all of them, where `missed` stops at its limit). Absent from older agents.
    public var awaySucceeded: Int?
    public var awayFailed: Int?

    /// Failed uploads a snapshot carries beyond the recent ones, at most.
    public static let failuresKept = 10_000

    public init(uploads: [UploadRecord], missed: [JournalEntry], lastSequence: Int64, jobs: [JobSnapshot], earlierFailures: [UploadRecord]? = nil) {
        self.uploads = uploads
        self.earlierFailures = earlierFailures
        self.missed = missed
        self.lastSequence = lastSequence
        self.jobs = jobs
    }
}

/// What became of one file handed to the agent.
public enum EnqueueResult: Codable, Sendable, Hashable {
    case queued(UploadRecord)
    /// Queued, said briefly (a request that asked for it, `EnqueueBatch.brief`).
    case accepted(QueuedUpload)
    case refused(path: String, reason: String)

    /// What a line about a queued upload says, from either answer; nil for a refusal.
    public var queuedUpload: QueuedUpload? {
        switch self {
        case .queued(let record): QueuedUpload(record)
        case .accepted(let upload): upload
        case .refused: nil
        }
    }
}

/// A queued upload as a line names it: about a tenth of its record's JSON, for clients that
/// hand over thousands of files and print one line each.
public struct QueuedUpload: Codable, Sendable, Hashable {
    public var id: UploadID
    /// The file's path (nil for standard input).
    public var path: String?
    public var name: String
    /// The endpoint as it may be shown.
    public var url: String

    public init(_ record: UploadRecord) {
        id = record.id
        path = record.path
        name = record.name
        url = record.url
    }

    /// As an array, `[id, name, url, path or null]`: thousands travel in one reply.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(id.rawValue)
        try container.encode(name)
        try container.encode(url)
        if let path { try container.encode(path) } else { try container.encodeNil() }
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        id = UploadID(try container.decode(Int.self))
        name = try container.decode(String.self)
        url = try container.decode(String.self)
        path = try container.decodeNil() ? nil : try container.decode(String.self)
    }
}

/// The running agent as `uploadmon status` shows it.
public struct AgentStatus: Codable, Sendable {
    public var pid: Int32
    public var version: String
    public var startedAt: Date
    public var journal: String
    public var socket: String
    public var clients: Int
    public var running: Int
    public var queued: Int
    public var idleExitSeconds: Double
    /// The settings in force.
    public var settings: AgentSettings
}
