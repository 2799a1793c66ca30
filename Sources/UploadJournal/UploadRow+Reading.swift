import Foundation
import GRDB
import UploadCore

/// Reading an upload's row: one reading of the forty columns' stored values, fed by position
/// (the journal's own reads, which select `selection`) or by name (any other fetch of the
/// record). Column by column, not through Codable, which was most of what reading an upload
/// back cost; JSON columns through the journal's JSON decoder, the settings decoded once for a
/// run of rows that share them. Columns a journal from before they existed left empty read as
/// their defaults.
extension UploadRow {
    private static let columns = CodingKeys.allCases

    /// Every column, in the order of `CodingKeys`: the journal's own reads of uploads name them
    /// (`SELECT \(selection) FROM upload …`) and read them by position.
    static let selection = columns.map { "\"\($0.stringValue)\"" }.joined(separator: ", ")

    /// One upload by id, every column.
    static let selectByID = "SELECT \(selection) FROM upload WHERE id = ?"

    /// The rows of `statement` (which selects `selection`), read in place.
    static func fetchAll(columns statement: Statement, arguments: StatementArguments) throws -> [UploadRow] {
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        var rows: [UploadRow] = []
        while let row = try cursor.next() { rows.append(try UploadRow(columns: row)) }
        return rows
    }

    /// The row from any fetch, its columns looked up by name.
    init(row: Row) throws {
        try self.init { position in row[Self.columns[position].stringValue] ?? .null }
        #if DEBUG
            // Read column by column, the row must be what the record's own decoding reads.
            let decoded = try FetchableRecordDecoder().decode(UploadRow.self, from: row)
            precondition(decoded == self, "the row read by hand differs from its Codable reading: \(self) vs \(decoded)")
        #endif
    }

    /// The row from a read that selected `selection`, column by position: looking forty
    /// columns up by name (GRDB compares names without case) was a third of reading a row.
    init(columns row: Row) throws {
        try self.init { position in row[position] }
        #if DEBUG
            precondition(Array(row.columnNames) == Self.columns.map(\.stringValue), "a row read by position must select UploadRow.selection")
            let byName = try UploadRow(row: row)
            precondition(byName == self, "the row read by position differs from its reading by name: \(self) vs \(byName)")
        #endif
    }

    /// The row from its columns' stored values, `value(n)` being that of the nth of `CodingKeys`.
    private init(reading value: (Int) -> DatabaseValue) throws {
        var position = 0
        func next(_ column: CodingKeys) -> DatabaseValue {
            assert(Self.columns[position] == column, "\(column) read where \(Self.columns[position]) is")
            defer { position += 1 }
            return value(position)
        }
        func optional<T: DatabaseValueConvertible>(_ column: CodingKeys) -> T? {
            T.fromDatabaseValue(next(column))
        }
        func required<T: DatabaseValueConvertible>(_ column: CodingKeys) throws -> T {
            guard let value = optional(column) as T? else {
                throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "the journal's upload row has no \(column.stringValue)")
            }
            return value
        }
        func json<T: Decodable & Sendable>(_ column: CodingKeys, _ type: T.Type) throws -> T? {
            guard let text = optional(column) as String? else { return nil }
            return try JSONColumns.value(T.self, from: text, column: column.stringValue) {
                try Self.databaseJSONDecoder(for: column.stringValue).decode(T.self, from: Data($0.utf8))
            }
        }
        func date(_ column: CodingKeys) -> Date? {
            let stored = next(column)
            if case .string(let text) = stored.storage { return JournalDates.date(fromText: text) }
            return Date.fromDatabaseValue(stored)
        }
        func requiredDate(_ column: CodingKeys) throws -> Date {
            guard let value = date(column) else {
                throw DatabaseError(resultCode: .SQLITE_MISMATCH, message: "the journal's upload row has no \(column.stringValue)")
            }
            return value
        }
        // In the order of `CodingKeys`.
        id = optional(.id)
        path = try required(.path)
        fileSize = optional(.fileSize)
        fileMtimeNs = optional(.fileMtimeNs)
        fileCtimeNs = optional(.fileCtimeNs)
        uploadName = try required(.uploadName)
        url = try required(.url)
        field = try required(.field)
        formFields = try json(.formFields, [FormField].self) ?? []
        headers = try json(.headers, [RequestHeader].self) ?? []
        allowAnyFile = optional(.allowAnyFile) ?? false
        settings = try json(.settings, TransportSettings.self) ?? TransportSettings()
        origin = optional(.origin) ?? ""
        state = try required(.state)
        attempts = optional(.attempts) ?? 0
        bytesSent = optional(.bytesSent) ?? 0
        bytesExpected = optional(.bytesExpected)
        status = optional(.status)
        reason = optional(.reason)
        body = optional(.body)
        bodyBytesTotal = optional(.bodyBytesTotal)
        failureKind = optional(.failureKind)
        failureMessage = optional(.failureMessage)
        failureCode = optional(.failureCode)
        createdAt = try requiredDate(.createdAt)
        updatedAt = try requiredDate(.updatedAt)
        startedAt = date(.startedAt)
        finishedAt = date(.finishedAt)
        headersCleared = optional(.headersCleared) ?? false
        shownURL = optional(.shownURL)
        retryReason = optional(.retryReason)
        retryAt = date(.retryAt)
        responseHeaders = try json(.responseHeaders, [[String]].self)
        resume = try json(.resume, ResumePoint.self)
        bytesSaved = optional(.bytesSaved) ?? 0
        idempotencyKey = optional(.idempotencyKey)
        answerCut = optional(.answerCut)
        verified = optional(.verified)
        contentSHA256 = optional(.contentSHA256)
        sourceSHA256 = optional(.sourceSHA256)
        sentName = optional(.sentName)
    }
}
