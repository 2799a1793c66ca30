import Foundation
import GRDB
import Synchronization
import UploadCore

/// One entry of the append-only event log (the `event` table).
struct EventRow: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "event"

    var seq: Int64?
    var uploadID: Int64?
    var kind: String
    var event: UploadEvent
    var at: Date

    mutating func didInsert(_ inserted: InsertionSuccess) {
        seq = inserted.rowID
    }
}

extension EventRow {
    enum CodingKeys: String, CodingKey { case seq, uploadID, kind, event, at }

    /// Appends an entry through a cached statement (the event as the JSON the record's own
    /// encoding writes) and returns its sequence number: one per event of every upload.
    static func append(uploadID: Int64?, kind: String, event: UploadEvent, at: Date, _ db: Database) throws -> Int64 {
        let json = try directJSON(event) ?? String(decoding: eventEncoder.encode(event), as: UTF8.self)
        try StoredValues.execute(
            db.cachedStatement(sql: "INSERT INTO event (uploadID, kind, event, at) VALUES (?, ?, ?, ?)"),
            [uploadID.databaseValue, kind.databaseValue, json.databaseValue, JournalDates.text(at)], db)
        return db.lastInsertedRowID
    }

    /// The `event` column for the one event nearly every upload logs, its end with an answer,
    /// written directly as the encoder writes it: the encoder took a sixth of recording an
    /// upload's events. (A debug build checks every logged event against the encoder's form.)
    static func directJSON(_ event: UploadEvent) -> String? {
        guard case .finished(let id, .answered(let status)) = event else { return nil }
        return #"{"finished":{"_0":\#(id.rawValue),"_1":{"answered":{"status":\#(status)}}}}"#
    }

    /// The encoder the record's own encoding uses for the `event` column, made once (one event
    /// per upload is logged).
    private static let eventEncoder = databaseJSONEncoder(for: CodingKeys.event.stringValue)

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        seq = try c.decodeIfPresent(Int64.self, forKey: .seq)
        uploadID = try c.decodeIfPresent(Int64.self, forKey: .uploadID)
        kind = try c.decode(String.self, forKey: .kind)
        at = try c.decode(Date.self, forKey: .at)
        do {
            event = try c.decode(UploadEvent.self, forKey: .event)
        } catch {
            // Logged by an earlier version, whose `queued` carried the name and size alone: the
            // record it stands for, with what it said.
            guard let legacy = try? c.decode(LegacyQueued.self, forKey: .event) else { throw error }
            event = .queued(
                UploadRecord(
                    id: legacy.queued.id, name: legacy.queued.name, path: nil, url: "", origin: "", fileSize: legacy.queued.totalBytes, createdAt: at))
        }
    }

    /// `{"queued": {"_0": 7, "name": "a.jpg", "totalBytes": 100}}`.
    private struct LegacyQueued: Decodable {
        struct Fields: Decodable {
            let id: UploadID
            let name: String
            let totalBytes: Int64?
            enum CodingKeys: String, CodingKey {
                case id = "_0"
                case name, totalBytes
            }
        }
        let queued: Fields
    }
}

/// A logged event with its place in the log.
/// An event as the journal applied it to its upload: the event as kept (an answer's body cut to
/// the journal's limit, credentials redacted), and its log entry when the log keeps its kind.
public struct RecordedEvent: Sendable, Hashable {
    public let event: UploadEvent
    public let entry: JournalEntry?

    public init(event: UploadEvent, entry: JournalEntry?) {
        self.event = event
        self.entry = entry
    }
}

/// One event of the journal's log: its sequence number (what a client's cursor counts), the event and when.
public struct JournalEntry: Sendable, Hashable, Codable {
    public let seq: Int64
    public let event: UploadEvent
    public let at: Date

    public init(seq: Int64, event: UploadEvent, at: Date) {
        self.seq = seq
        self.event = event
        self.at = at
    }
}
