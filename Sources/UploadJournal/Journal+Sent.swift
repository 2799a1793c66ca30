import Foundation
import GRDB
import UploadCore

/// What was sent where, by content: the SHA-256 of a file's bytes as sent and the endpoint
/// that took them, kept apart from the uploads (which are pruned) so that "already sent"
/// survives a rename, a move and the journal's maintenance. The agent writes it as its uploads
/// succeed; a foreground `send` writes it too.
public struct SentContent: Sendable, Equatable, Codable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "sentContent"

    /// The endpoint as shown (no login, no secret query values): the same place however its
    /// secrets change.
    public var endpoint: String
    public var sha256: String
    public var size: Int64
    /// The name it was sent under.
    public var name: String
    public var sentAt: Date

    public init(endpoint: String, sha256: String, size: Int64, name: String, sentAt: Date) {
        self.endpoint = endpoint
        self.sha256 = sha256
        self.size = size
        self.name = name
        self.sentAt = sentAt
    }

    /// The key an endpoint is kept under.
    public static func key(_ url: String) -> String { RedactedURL.display(url) }
}

/// A file's content digest as hashed before, valid while its size, modification time and
/// inode change time stay (nil in entries kept before change times were: they prove nothing).
public struct CachedContent: Sendable, Equatable, Codable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "contentCache"

    public var path: String
    public var size: Int64
    public var mtimeNs: Int64
    public var ctimeNs: Int64?
    public var stripped: Bool
    public var sha256: String

    public init(path: String, size: Int64, mtimeNs: Int64, ctimeNs: Int64?, stripped: Bool, sha256: String) {
        self.path = path
        self.size = size
        self.mtimeNs = mtimeNs
        self.ctimeNs = ctimeNs
        self.stripped = stripped
        self.sha256 = sha256
    }
}

/// A file sent whose content is not hashed yet: its path and its stamps from before it was
/// opened to be sent. While the file still has them (the change time cannot be set back), its
/// bytes are the ones sent, and hashing them then gives what was sent (`SentLedger.resolve`).
public struct PendingSent: Sendable, Equatable, Codable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "sentPending"

    /// The endpoint as `SentContent` keeps it.
    public var endpoint: String
    /// Absolute.
    public var path: String
    public var size: Int64
    public var mtimeNs: Int64
    public var ctimeNs: Int64
    /// Sent without its location (`--strip-location`): the bytes sent are the stripped ones.
    public var stripped: Bool
    /// The name it was sent under.
    public var name: String
    public var sentAt: Date

    public init(endpoint: String, path: String, size: Int64, mtimeNs: Int64, ctimeNs: Int64, stripped: Bool, name: String, sentAt: Date) {
        self.endpoint = SentContent.key(endpoint)
        self.path = path
        self.size = size
        self.mtimeNs = mtimeNs
        self.ctimeNs = ctimeNs
        self.stripped = stripped
        self.name = name
        self.sentAt = sentAt
    }

    /// Whether the file at `path` has these stamps now (`FileFingerprint` of it).
    public func matches(_ now: FileFingerprint?) -> Bool {
        guard let now else { return false }
        return now.size == size && now.modificationNanoseconds == mtimeNs && now.changeNanoseconds == ctimeNs
    }
}

extension Journal {
    /// At most this many sent files wait to be hashed; the oldest go first beyond it (their
    /// content is then not known as sent: a later `--skip-sent` sends it again).
    public static let maxPendingSent = 100_000

    /// Keeps files sent, to be hashed when "already sent" is asked.
    public func rememberPending(_ pending: [PendingSent]) throws {
        guard !pending.isEmpty else { return }
        try pool.write { db in
            // One prepared statement, not a record encoded per row: a thousand files sent
            // cost a tenth of send's CPU the other way.
            let insert = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO sentPending (endpoint, path, size, mtimeNs, ctimeNs, stripped, name, sentAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for one in pending {
                try insert.execute(arguments: [
                    one.endpoint, one.path, one.size, one.mtimeNs, one.ctimeNs, one.stripped, one.name, JournalDates.text(one.sentAt),
                ])
            }
            let count = try PendingSent.fetchCount(db)
            if count > Self.maxPendingSent {
                try db.execute(
                    sql: "DELETE FROM sentPending WHERE rowid IN (SELECT rowid FROM sentPending ORDER BY sentAt LIMIT ?)",
                    arguments: [count - Self.maxPendingSent])
            }
        }
    }

    /// The files sent to `endpoint` not hashed yet, after taking in what foreground sends
    /// appended to the `SentLog`. Every "already sent" lookup starts here (`SentLedger`'s
    /// `resolvePending`), so the log is read once per lookup, not once per file looked up.
    public func pendingSent(to endpoint: String) throws -> [PendingSent] {
        try? drainSentLog()
        return try pool.read { db in try PendingSent.filter(Column("endpoint") == SentContent.key(endpoint)).fetchAll(db) }
    }

    /// Replaces pending files by what their hashing found (`sent`), in one transaction; those
    /// in `done` that found nothing (changed since) are dropped.
    public func resolvePending(_ done: [PendingSent], sent: [SentContent]) throws {
        guard !done.isEmpty else { return }
        try pool.write { db in
            for one in sent { try Self.remember(one, in: db) }
            for one in done { _ = try one.delete(db) }
        }
    }

    /// The digests kept for these files (whatever their size and time then: the caller compares).
    public func cachedContents(_ paths: [String], stripped: Bool) throws -> [String: CachedContent] {
        try pool.read { db in
            var found: [String: CachedContent] = [:]
            // In slices: SQLite limits the number of arguments of one statement.
            for start in stride(from: 0, to: paths.count, by: 500) {
                let slice = Array(paths[start..<min(start + 500, paths.count)])
                for content in try CachedContent.filter(slice.contains(Column("path")) && Column("stripped") == stripped).fetchAll(db) {
                    found[content.path] = content
                }
            }
            return found
        }
    }

    /// Keeps digests for later looks.
    public func cacheContents(_ contents: [CachedContent]) throws {
        guard !contents.isEmpty else { return }
        try pool.write { db in
            for content in contents { try content.save(db, onConflict: .replace) }
        }
    }

    /// Remembers that `sha256` was sent to `endpoint` (the latest sending wins).
    public func rememberSent(_ sent: SentContent) throws {
        try pool.write { db in try Self.remember(sent, in: db) }
    }

    /// Remembers what went by content and what went by path, each in one transaction; one
    /// that fails does not keep the other from being written, and its error is thrown after.
    public func remember(sent: [SentContent], pending: [PendingSent]) throws {
        var failure: (any Error)?
        do { try rememberSent(sent) } catch { failure = error }
        do { try rememberPending(pending) } catch { failure = failure ?? error }
        if let failure { throw failure }
    }

    /// Remembers many at once, in one transaction.
    public func rememberSent(_ sent: [SentContent]) throws {
        guard !sent.isEmpty else { return }
        try pool.write { db in
            for one in sent { try Self.remember(one, in: db) }
        }
    }

    /// A sent content's columns as `sentContent` and `sentRecent` both store them.
    private static func columns(_ sent: SentContent) -> [DatabaseValue] {
        [
            SentContent.key(sent.endpoint).databaseValue, sent.sha256.lowercased().databaseValue, sent.size.databaseValue,
            sent.name.databaseValue, JournalDates.text(sent.sentAt),
        ]
    }

    static func remember(_ sent: SentContent, in db: Database) throws {
        // A prepared statement, not a record encoded per row (a thousand at a time at the end of a `send`).
        try StoredValues.execute(
            db.cachedStatement(sql: "INSERT OR REPLACE INTO sentContent (endpoint, sha256, size, name, sentAt) VALUES (?, ?, ?, ?, ?)"),
            columns(sent), db)
    }

    /// The most successes kept in `sentRecent` before they move into the ledger in one go.
    static let recentLimit: Int64 = 4096

    /// One success among many recorded one by one (the agent's): appended to `sentRecent`, in
    /// order, and moved into `sentContent` with the others in bulk (`settleSent`). The ledger's
    /// key is a digest: inserting one row per upload touched a page of it each, and without it
    /// the agent wrote less than half as much to the write-ahead log.
    static func rememberRecent(_ sent: SentContent, in db: Database) throws {
        try StoredValues.execute(
            db.cachedStatement(sql: "INSERT INTO sentRecent (endpoint, sha256, size, name, sentAt) VALUES (?, ?, ?, ?, ?)"),
            columns(sent), db)
        if db.lastInsertedRowID >= recentLimit { try settleSent(db) }
    }

    static func settleSent(_ db: Database) throws {
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO sentContent (endpoint, sha256, size, name, sentAt)
                SELECT endpoint, sha256, size, name, sentAt FROM sentRecent ORDER BY id
                """)
        try db.execute(sql: "DELETE FROM sentRecent")
    }

    /// Moves the successes recorded one by one into the ledger, if there are any: every read
    /// of the ledger does this first, and the agent when its queue runs dry.
    public func settleSent() throws {
        guard try pool.read({ try Bool.fetchOne($0, sql: "SELECT EXISTS (SELECT 1 FROM sentRecent)") }) == true else { return }
        try pool.write { db in try Self.settleSent(db) }
    }

    /// Every content (SHA-256, hex) sent to `endpoint`.
    public func sentContents(to endpoint: String) throws -> Set<String> {
        try settleSent()
        return try pool.read { db in
            Set(try String.fetchAll(db, sql: "SELECT sha256 FROM sentContent WHERE endpoint = ?", arguments: [SentContent.key(endpoint)]))
        }
    }

    /// When content `sha256` was last sent to `endpoint`, if it was.
    public func sentBefore(sha256: String, to endpoint: String) throws -> SentContent? {
        try settleSent()
        return try pool.read { db in
            try SentContent.filter(Column("endpoint") == SentContent.key(endpoint) && Column("sha256") == sha256.lowercased()).fetchOne(db)
        }
    }
}
