import Foundation
import GRDB
import Testing
@testable import UploadJournal

/// The journal's writes that bind stored values straight to SQLite store what GRDB's own
/// arguments store, fail as GRDB fails, and leave the statement ready for the next values.
@Suite struct StoredValuesTests {
    static func table() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, a, b TEXT NOT NULL UNIQUE)")
        }
        return queue
    }

    @Test func everyKindOfValueIsStoredAsGRDBStoresIt() throws {
        let queue = try Self.table()
        let values: [DatabaseValue] = [
            .null, 0.databaseValue, Int64.min.databaseValue, 2.5.databaseValue, "".databaseValue, "é🙂\u{0}x".databaseValue,
            Data().databaseValue, Data([0, 1, 255]).databaseValue,
        ]
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO t (a, b) VALUES (?, ?)")
            for (index, value) in values.enumerated() {
                try StoredValues.execute(insert, [value, "mine \(index)".databaseValue], db)
                try db.execute(sql: "INSERT INTO t (a, b) VALUES (?, ?)", arguments: [value, "grdb \(index)"])
            }
            for index in values.indices {
                let mine = try DatabaseValue.fetchOne(db, sql: "SELECT a FROM t WHERE b = ?", arguments: ["mine \(index)"])
                let grdb = try DatabaseValue.fetchOne(db, sql: "SELECT a FROM t WHERE b = ?", arguments: ["grdb \(index)"])
                #expect(mine == grdb, "value \(index): \(String(describing: mine)) vs \(String(describing: grdb))")
                let types = try String.fetchAll(db, sql: "SELECT typeof(a) FROM t WHERE b IN (?, ?)", arguments: ["mine \(index)", "grdb \(index)"])
                #expect(Set(types).count == 1, "value \(index) stored as \(types)")
            }
        }
    }

    @Test func aFailureIsGRDBsErrorAndTheStatementServesAgain() throws {
        let queue = try Self.table()
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO t (a, b) VALUES (?, ?)")
            try StoredValues.execute(insert, [1.databaseValue, "same".databaseValue], db)
            do {
                try StoredValues.execute(insert, [2.databaseValue, "same".databaseValue], db)
                Issue.record("a second row with the same unique value was inserted")
            } catch let error as DatabaseError {
                #expect(error.resultCode == .SQLITE_CONSTRAINT)
                #expect(error.message?.contains("UNIQUE") == true, "\(error)")
                #expect(error.sql == "INSERT INTO t (a, b) VALUES (?, ?)")
            }
            #expect(throws: DatabaseError.self) { try StoredValues.execute(insert, [3.databaseValue, .null], db) }
            // The statement was reset: it takes new values, and the failed ones left nothing.
            try StoredValues.execute(insert, [4.databaseValue, "other".databaseValue], db)
            #expect(try Int.fetchAll(db, sql: "SELECT a FROM t ORDER BY id") == [1, 4])
            // GRDB's own execution of the same cached statement is not disturbed either.
            try insert.execute(arguments: [5, "grdb"])
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") == 3)
        }
    }
}
