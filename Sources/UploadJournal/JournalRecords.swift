import Foundation
import GRDB
import Synchronization
import UploadCore

/// The journal stores the phase's word in its `state` column.
extension UploadState: DatabaseValueConvertible {}

/// One upload as the journal keeps it (the `upload` table).
struct UploadRow: Codable, FetchableRecord, MutablePersistableRecord, Hashable {
    static let databaseTableName = "upload"

    var id: Int64?
    var path: String
    var fileSize: Int64?
    var fileMtimeNs: Int64?
    /// The inode's change time when it was queued (nil in rows from before it was kept).
    var fileCtimeNs: Int64?
    var uploadName: String
    var url: String
    var field: String
    var formFields: [FormField]
    /// Kept so the agent can resend the upload after a restart, and only until it ends.
    var headers: [RequestHeader]
    var allowAnyFile: Bool
    var settings: TransportSettings
    var origin: String
    var state: UploadState
    var attempts: Int
    var bytesSent: Int64
    var bytesExpected: Int64?
    var status: Int?
    var reason: String?
    var body: Data?
    var bodyBytesTotal: Int64?
    var failureKind: String?
    var failureMessage: String?
    var failureCode: Int32?
    var createdAt: Date
    var updatedAt: Date
    var startedAt: Date?
    var finishedAt: Date?
    /// The header values were removed when the upload ended (they are kept only while it may
    /// still be sent); such an upload cannot be retried from the journal.
    var headersCleared: Bool
    /// Where the last attempt went, as it may be shown (after a redirect, not `url`).
    var shownURL: String?
    /// While waiting to retry: why, and when the next attempt is due.
    var retryReason: String?
    var retryAt: Date?
    /// The answer's headers, as name/value pairs.
    var responseHeaders: [[String]]?
    /// Where the upload continues after an interruption, while the server keeps it.
    var resume: ResumePoint?
    /// Body bytes not sent again thanks to resuming.
    var bytesSaved: Int64
    /// The upload's `Idempotency-Key`, the same on every attempt and after a restart.
    var idempotencyKey: String?
    /// Why the answer's body did not arrive whole, when it did not.
    var answerCut: String?
    /// The digest algorithm by which the answer proved the upload arrived intact, when it did.
    var verified: String?
    /// The SHA-256 (hex) of the file's bytes as last sent.
    var contentSHA256: String?
    /// For a photo converted on the way, the digest naming its original and the settings.
    var sourceSHA256: String?
    /// For a photo converted on the way, the name it went under (`IMG_0001.jpg`).
    var sentName: String?

    /// The columns, by the names the table has, in the order of the fields above (and of
    /// `selection`, which reads them by position).
    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, path, fileSize, fileMtimeNs, fileCtimeNs, uploadName, url, field, formFields, headers, allowAnyFile, settings
        case origin, state, attempts, bytesSent, bytesExpected, status, reason, body, bodyBytesTotal, failureKind
        case failureMessage, failureCode, createdAt, updatedAt, startedAt, finishedAt, headersCleared, shownURL
        case retryReason, retryAt, responseHeaders, resume, bytesSaved, idempotencyKey, answerCut, verified, contentSHA256
        case sourceSHA256, sentName
    }

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let state = Column(CodingKeys.state)
        static let finishedAt = Column(CodingKeys.finishedAt)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        id = inserted.rowID
    }

    var uploadID: UploadID { UploadID(Int(id ?? 0)) }

    var request: UploadRequest {
        UploadRequest(
            source: .file(path: path), url: url, field: field, uploadName: uploadName,
            formFields: formFields, headers: headers,
            allowAnyFile: allowAnyFile,
            expectedFile: fileSize.flatMap { size in
                fileMtimeNs.map { FileFingerprint(size: size, modificationNanoseconds: $0, changeNanoseconds: fileCtimeNs) }
            },
            resume: resume,
            idempotencyKey: idempotencyKey
        )
    }

    var failure: UploadFailure? {
        failureKind.map { UploadFailure(UploadFailure.Kind(rawValue: $0) ?? .other, failureMessage ?? "", code: failureCode) }
    }

    /// The row as the record every view reads; `store` is the way back. The request columns
    /// (what is needed to send it again) are the row's alone.
    var record: UploadRecord {
        let phase = UploadPhase(
            state: state, attempts: attempts, retryReason: retryReason, retryDue: retryAt, fallbackDue: updatedAt,
            status: status, failure: failure)
        // The answer is kept when `bodyBytesTotal` is (the status column alone can be an
        // outcome's status whose answer was never recorded).
        var response: UploadResponse?
        if let status, let bodyBytesTotal {
            response = UploadResponse(
                status: status, reason: reason ?? "",
                headers: (responseHeaders ?? []).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil },
                body: body.map(Array.init) ?? [], bodyBytesTotal: bodyBytesTotal, cut: answerCut)
            response?.verified = verified
        }
        var record = UploadRecord(
            id: uploadID, name: uploadName, path: path, url: shownURL ?? RedactedURL.display(url), field: field,
            origin: origin, fileSize: fileSize, phase: phase, attempts: attempts, bytesSent: bytesSent,
            bytesExpected: bytesExpected, response: response, createdAt: createdAt, startedAt: startedAt,
            finishedAt: finishedAt)
        record.resume = resume
        record.bytesSaved = bytesSaved
        record.contentSHA256 = contentSHA256
        record.sourceSHA256 = sourceSHA256
        record.sentName = sentName
        record.fileModified = fileMtimeNs
        record.fileChanged = fileCtimeNs
        record.withoutLocation = settings.stripLocation
        return record
    }

    /// Writes what `record` says of the upload's progress into the row.
    mutating func store(_ record: UploadRecord) {
        state = record.state
        attempts = record.attempts
        shownURL = record.url
        bytesSent = record.bytesSent
        bytesExpected = record.bytesExpected
        if case .finished(.answered(let answered)) = record.phase, record.response == nil {
            status = answered
        } else {
            status = record.response?.status
        }
        reason = record.response?.reason
        body = record.response.map { Data($0.body) }
        bodyBytesTotal = record.response?.bodyBytesTotal
        answerCut = record.response?.cut
        verified = record.response?.verified
        contentSHA256 = record.contentSHA256
        sourceSHA256 = record.sourceSHA256
        sentName = record.sentName
        responseHeaders = record.response.map { $0.headers.map { [$0.0, $0.1] } }
        retryReason = record.phase.retry?.reason
        retryAt = record.phase.retry?.due
        let failure = record.failure
        failureKind = failure?.kind.rawValue
        failureMessage = failure?.message
        failureCode = failure?.code
        startedAt = record.startedAt
        finishedAt = record.finishedAt
        resume = record.resume
        bytesSaved = record.bytesSaved
    }
}

/// An upload to add to the journal, as a client asked for it.
public struct NewUpload: Sendable, Hashable {
    public var request: UploadRequest
    public var fingerprint: FileFingerprint
    public var settings: TransportSettings
    public var origin: String

    public init(request: UploadRequest, fingerprint: FileFingerprint, settings: TransportSettings, origin: String) {
        self.request = request
        self.fingerprint = fingerprint
        self.settings = settings
        self.origin = origin
    }
}

/// An upload the agent must (re)start: its request with the stored headers, how to send it,
/// and how many attempts it already made.
public struct PendingUpload: Sendable {
    public let request: UploadRequest
    public let settings: TransportSettings
    public let attempts: Int
    /// The upload as the journal has it: what its `queued` event says.
    public let record: UploadRecord

    public var id: UploadID { record.id }

    public init(request: UploadRequest, settings: TransportSettings, attempts: Int, record: UploadRecord) {
        self.request = request
        self.settings = settings
        self.attempts = attempts
        self.record = record
    }
}

extension UploadRow {
    /// The columns whose values differ from `old`'s, as they are stored (the same forms as the
    /// record's Codable encoding: JSON text for the nested values, dates as GRDB writes them).
    /// An event changes a few columns of forty: writing those alone spares encoding the whole
    /// row (its settings as JSON among them) on every event.
    func changes(from old: UploadRow?) throws -> [(column: String, value: DatabaseValue)] {
        // Labelled as returned: an unlabelled array was converted element by element on return.
        var out: [(column: String, value: DatabaseValue)] = []
        out.reserveCapacity(old == nil ? 40 : 12)
        let all = old == nil
        func put<T: DatabaseValueConvertible & Equatable>(_ column: CodingKeys, _ new: T?, _ previous: T?) {
            if all || new != previous { out.append((column.stringValue, new?.databaseValue ?? .null)) }
        }
        func json<T: Encodable & Equatable & Sendable>(_ column: CodingKeys, _ new: T?, _ previous: T?) throws {
            guard all || new != previous else { return }
            guard let new else { return out.append((column.stringValue, .null)) }
            out.append(
                (
                    column.stringValue,
                    try JSONColumns.text(new, column: column.stringValue) { value in
                        // An answer's headers, on every upload: written directly, not through an encoder.
                        if let pairs = value as? [[String]] { return JSONColumns.text(pairs) }
                        return String(decoding: try Self.databaseJSONEncoder(for: column.stringValue).encode(value), as: UTF8.self)
                    }
                ))
        }
        put(.path, path, old?.path)
        put(.fileSize, fileSize, old?.fileSize)
        put(.fileMtimeNs, fileMtimeNs, old?.fileMtimeNs)
        put(.fileCtimeNs, fileCtimeNs, old?.fileCtimeNs)
        put(.uploadName, uploadName, old?.uploadName)
        put(.url, url, old?.url)
        put(.field, field, old?.field)
        try json(.formFields, formFields, old?.formFields)
        try json(.headers, headers, old?.headers)
        put(.allowAnyFile, allowAnyFile, old?.allowAnyFile)
        try json(.settings, settings, old?.settings)
        put(.origin, origin, old?.origin)
        put(.state, state.rawValue, old?.state.rawValue)
        put(.attempts, attempts, old?.attempts)
        put(.bytesSent, bytesSent, old?.bytesSent)
        put(.bytesExpected, bytesExpected, old?.bytesExpected)
        put(.status, status, old?.status)
        put(.reason, reason, old?.reason)
        put(.body, body, old?.body)
        put(.bodyBytesTotal, bodyBytesTotal, old?.bodyBytesTotal)
        put(.failureKind, failureKind, old?.failureKind)
        put(.failureMessage, failureMessage, old?.failureMessage)
        put(.failureCode, failureCode, old?.failureCode)
        func date(_ column: CodingKeys, _ new: Date?, _ previous: Date?) {
            if all || new != previous { out.append((column.stringValue, new.map(JournalDates.text) ?? .null)) }
        }
        date(.createdAt, createdAt, old?.createdAt)
        date(.updatedAt, updatedAt, old?.updatedAt)
        date(.startedAt, startedAt, old?.startedAt)
        date(.finishedAt, finishedAt, old?.finishedAt)
        put(.headersCleared, headersCleared, old?.headersCleared)
        put(.shownURL, shownURL, old?.shownURL)
        put(.retryReason, retryReason, old?.retryReason)
        date(.retryAt, retryAt, old?.retryAt)
        try json(.responseHeaders, responseHeaders, old?.responseHeaders)
        try json(.resume, resume, old?.resume)
        put(.bytesSaved, bytesSaved, old?.bytesSaved)
        put(.idempotencyKey, idempotencyKey, old?.idempotencyKey)
        put(.answerCut, answerCut, old?.answerCut)
        put(.verified, verified, old?.verified)
        put(.contentSHA256, contentSHA256, old?.contentSHA256)
        put(.sourceSHA256, sourceSHA256, old?.sourceSHA256)
        put(.sentName, sentName, old?.sentName)
        return out
    }

    /// Inserts the row through one prepared statement (every column but the id, as `changes`
    /// gives them) and takes its new id: GRDB's Codable insert encoded the forty columns
    /// generically, a tenth of the agent's work per upload.
    mutating func insertPrepared(_ db: Database) throws {
        let values = try changes(from: nil)
        let sql = Self.statement(for: values.map(\.column), cache: Self.lastInsert) { columns -> String in
            let names: String = columns.map { "\"\($0)\"" }.joined(separator: ", ")
            let marks: String = columns.map { _ in "?" }.joined(separator: ", ")
            return "INSERT INTO upload (" + names + ") VALUES (" + marks + ")"
        }
        try StoredValues.execute(db.cachedStatement(sql: sql), values.map(\.value), db)
        id = db.lastInsertedRowID
    }

    /// The last statement made for a list of columns: a new row writes every column, and a
    /// batch's rows mostly change the same ones, so the text is built once for a run of rows
    /// instead of for each (building and then hashing it for the statement cache was a tenth
    /// of adding an upload).
    private static let lastInsert = Mutex<(columns: [String], sql: String)?>(nil)
    private static let lastUpdate = Mutex<(columns: [String], sql: String)?>(nil)

    private static func statement(
        for columns: [String], cache: borrowing Mutex<(columns: [String], sql: String)?>, make: ([String]) -> String
    ) -> String {
        if let hit = cache.withLock({ $0 }), hit.columns == columns { return hit.sql }
        let sql = make(columns)
        cache.withLock { $0 = (columns, sql) }
        return sql
    }

    /// Writes the columns that differ from `old` (the row as read), through a statement cached
    /// per set of columns.
    func updateChanges(from old: UploadRow, _ db: Database) throws {
        guard let id else { return }
        let changed = try changes(from: old)
        guard !changed.isEmpty else { return }
        let sql = Self.statement(for: changed.map(\.column), cache: Self.lastUpdate) { columns -> String in
            let sets: String = columns.map { "\"\($0)\" = ?" }.joined(separator: ", ")
            return "UPDATE upload SET " + sets + " WHERE id = ?"
        }
        var values = changed.map(\.value)
        values.append(id.databaseValue)
        try StoredValues.execute(db.cachedStatement(sql: sql), values, db)
    }
}
