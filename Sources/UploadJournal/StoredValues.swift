import GRDB
import GRDBSQLite

/// Runs the journal's hottest writes (a new upload's row, the columns an event changed, the
/// sent-content ledger) with their values bound as they are stored, straight to SQLite.
/// GRDB's arguments take each value as `any DatabaseValueConvertible` and check them against
/// the statement on every execution: that was a twelfth of what the agent's journal spent per
/// upload. Only for statements that change rows inside the journal's own transaction and
/// return none; a failure is thrown as GRDB throws it.
enum StoredValues {
    static func execute(_ statement: Statement, _ values: [DatabaseValue], _ db: Database) throws {
        let handle = statement.sqliteStatement
        precondition(Int(sqlite3_bind_parameter_count(handle)) == values.count, "\(values.count) values for \(statement.sql)")
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            // GRDB's own binding of a stored value (text and blobs copied by SQLite).
            let code = value.bind(to: handle, at: Int32(offset + 1))
            guard code == SQLITE_OK else {
                let error = failure(code, statement, db)
                sqlite3_clear_bindings(handle)
                throw error
            }
        }
        let code = sqlite3_step(handle)
        // The message before the reset; then reset at once (a statement left mid-way keeps its
        // hold on the database) and let go of the values.
        let error = code == SQLITE_DONE ? nil : failure(code, statement, db)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        if let error { throw error }
    }

    private static func failure(_ code: Int32, _ statement: Statement, _ db: Database) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
    }
}
