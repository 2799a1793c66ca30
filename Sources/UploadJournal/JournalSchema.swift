import GRDB

/// The journal's schema, one migration per change; a journal written by an older version is
/// brought up to date when it is opened, and never touched by a version that does not know it.
enum JournalSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: uploads and events") { db in
            try db.create(table: "upload") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("path", .text).notNull()
                t.column("fileSize", .integer)
                t.column("fileMtimeNs", .integer)
                t.column("uploadName", .text).notNull()
                t.column("url", .text).notNull()
                t.column("field", .text).notNull()
                t.column("formFields", .text).notNull()
                t.column("headers", .text).notNull()
                t.column("allowAnyFile", .boolean).notNull()
                t.column("settings", .text).notNull()
                t.column("origin", .text).notNull()
                t.column("state", .text).notNull()
                t.column("attempts", .integer).notNull()
                t.column("bytesSent", .integer).notNull()
                t.column("bytesExpected", .integer)
                t.column("status", .integer)
                t.column("reason", .text)
                t.column("body", .blob)
                t.column("bodyBytesTotal", .integer)
                t.column("failureKind", .text)
                t.column("failureMessage", .text)
                t.column("failureCode", .integer)
                t.column("createdAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
                t.column("startedAt", .datetime)
                t.column("finishedAt", .datetime)
            }
            try db.create(index: "upload_by_state", on: "upload", columns: ["state"])
            // AUTOINCREMENT: sequence numbers are never reused, even after pruning, so a client's
            // "last seen" stays meaningful forever.
            try db.create(table: "event") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("uploadID", .integer)
                t.column("kind", .text).notNull()
                t.column("event", .text).notNull()
                t.column("at", .datetime).notNull()
            }
            try db.create(index: "event_by_upload", on: "event", columns: ["uploadID"])
        }
        migrator.registerMigration("v2: scheduled jobs") { db in
            // One row per scheduled job; `key` names what it is about (a watched folder), so
            // registering the same folder twice updates the job instead of adding a second one.
            try db.create(table: "job") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("kind", .text).notNull()
                t.column("key", .text).notNull().unique()
                t.column("spec", .text).notNull()
                t.column("intervalSeconds", .double).notNull()
                t.column("earliestBeginAt", .datetime).notNull()
                t.column("lastRunAt", .datetime)
                t.column("lastResult", .text)
                t.column("lastFailed", .boolean).notNull().defaults(to: false)
                t.column("runs", .integer).notNull().defaults(to: 0)
                t.column("createdAt", .datetime).notNull()
            }
            // What a watch job has seen in its folder: a file waiting for its size to settle
            // (`pending`), queued as an upload (`queued`), or passed over with a reason (`skipped`).
            try db.create(table: "watch_file") { t in
                t.column("jobID", .integer).notNull().references("job", onDelete: .cascade)
                t.column("name", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("mtimeNs", .integer).notNull()
                t.column("state", .text).notNull()
                t.column("uploadID", .integer)
                t.column("note", .text)
                t.column("firstSeenAt", .datetime).notNull()
                t.column("updatedAt", .datetime).notNull()
                t.primaryKey(["jobID", "name"])
            }
        }
        migrator.registerMigration("v3: readable schedules") { db in
            // Before intervals had a range, `watch --every 3000000d` stored a next run past year
            // 9999: text no date reads back from, so every later read of the jobs failed. Such
            // jobs run at the next chance, with their interval brought into its range.
            try db.execute(
                sql: """
                    UPDATE job SET earliestBeginAt = strftime('%Y-%m-%d %H:%M:%f', 'now')
                        WHERE typeof(earliestBeginAt) != 'text' OR length(earliestBeginAt) != 23;
                    UPDATE job SET intervalSeconds = 31536000
                        WHERE intervalSeconds > 31536000 OR intervalSeconds != intervalSeconds;
                    UPDATE job SET intervalSeconds = 60 WHERE kind = 'maintenance' AND intervalSeconds < 60;
                    UPDATE job SET intervalSeconds = 1 WHERE intervalSeconds < 1;
                    """)
        }
        migrator.registerMigration("v4: header values only while needed") { db in
            // Header values (tokens, cookies) are kept only while an upload may still be sent;
            // those of uploads already finished go now.
            try db.alter(table: "upload") { t in
                t.add(column: "headersCleared", .boolean).notNull().defaults(to: false)
            }
            try db.execute(
                sql: """
                    UPDATE upload SET headers = '[]', headersCleared = 1
                        WHERE state IN ('succeeded', 'failed') AND headers != '[]'
                    """)
        }
        migrator.registerMigration("v5: one upload record") { db in
            // The row holds all of an upload's record: where the last attempt went after a
            // redirect, why and until when it waits to retry, and the answer's headers.
            try db.alter(table: "upload") { t in
                t.add(column: "shownURL", .text)
                t.add(column: "retryReason", .text)
                t.add(column: "retryAt", .datetime)
                t.add(column: "responseHeaders", .text)
            }
        }
        migrator.registerMigration("v6: parked files") { db in
            // A file of a watched folder that fails the same way look after look is parked
            // until it changes: how many times it failed, and its permissions to see a change.
            try db.alter(table: "watch_file") { t in
                t.add(column: "failures", .integer).notNull().defaults(to: 0)
                t.add(column: "access", .text)
            }
        }
        migrator.registerMigration("v7: resumable uploads") { db in
            // Where an interrupted upload continues on a server that resumes, how many bytes
            // resuming saved, and the key that makes a repeat of an ordinary upload harmless.
            try db.alter(table: "upload") { t in
                t.add(column: "resume", .text)
                t.add(column: "bytesSaved", .integer).notNull().defaults(to: 0)
                // Sent as Idempotency-Key on every attempt of an ordinary upload.
                t.add(column: "idempotencyKey", .text)
            }
        }
        migrator.registerMigration("v8: cut answers") { db in
            // Why an answer's body stopped before its end (the answer timeout, a closed
            // connection): the upload's status stands, its answer is incomplete.
            try db.alter(table: "upload") { t in
                t.add(column: "answerCut", .text)
            }
        }
        migrator.registerMigration("v9: verified answers") { db in
            // The digest algorithm by which the answer proved the upload arrived intact (RFC 9530).
            try db.alter(table: "upload") { t in
                t.add(column: "verified", .text)
            }
        }
        migrator.registerMigration("v10: sent content") { db in
            // The SHA-256 of the file's bytes as sent: "already sent" by content, not by name.
            try db.alter(table: "upload") { t in
                t.add(column: "contentSHA256", .text)
            }
            try db.create(index: "upload_content", on: "upload", columns: ["contentSHA256"])
            // What was sent where, by content; outlives the pruning of finished uploads.
            try db.create(table: "sentContent") { t in
                t.column("endpoint", .text).notNull()
                t.column("sha256", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("name", .text).notNull()
                t.column("sentAt", .datetime).notNull()
                t.primaryKey(["endpoint", "sha256"])
            }
            // Files hashed for "already sent" (the monitor's browser), so a folder of 10,000
            // photos is read once, not at every look: by path, size, modification time and
            // whether the location is stripped (the bytes as sent differ).
            try db.create(table: "contentCache") { t in
                t.column("path", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("mtimeNs", .integer).notNull()
                t.column("stripped", .boolean).notNull()
                t.column("sha256", .text).notNull()
                t.primaryKey(["path", "stripped"])
            }
        }
        migrator.registerMigration("v11: inode change times") { db in
            // A file edited with its modification time put back (`touch -r`, `cp -p`) keeps
            // size and mtime; its inode's change time moves, and no tool sets it back. Rows
            // without one prove nothing (their file is hashed again).
            try db.alter(table: "upload") { t in
                t.add(column: "fileCtimeNs", .integer)
            }
            try db.alter(table: "contentCache") { t in
                t.add(column: "ctimeNs", .integer)
            }
        }
        migrator.registerMigration("v12: sent, to be hashed") { db in
            // What a `send` sent, by path and the file's stamps before it was opened, until its
            // content is hashed for "already sent" (hashing every byte while sending cost more
            // than sending it on a fast link). Hashed only while size, modification and change
            // time are as they were: then the bytes are the ones sent.
            try db.create(table: "sentPending") { t in
                t.column("endpoint", .text).notNull()
                t.column("path", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("mtimeNs", .integer).notNull()
                t.column("ctimeNs", .integer).notNull()
                t.column("stripped", .boolean).notNull()
                t.column("name", .text).notNull()
                t.column("sentAt", .datetime).notNull()
                t.primaryKey(["endpoint", "path", "stripped"])
            }
        }
        migrator.registerMigration("v13: no index by content on uploads") { db in
            // Nothing looks uploads up by their content (`sentContent` answers "already sent"),
            // and each upload's digest is a random key: keeping the index wrote a page of it
            // to the log for every upload, a tenth of what an agent's journal wrote.
            try db.execute(sql: "DROP INDEX IF EXISTS upload_content")
        }
        migrator.registerMigration("v14: sent content, recent") { db in
            // The agent's successes one by one, in the order they came (sequential pages),
            // moved into `sentContent` in bulk: its key is a digest, and a row at a time wrote
            // a page of the write-ahead log per upload.
            try db.create(table: "sentRecent") { t in
                t.primaryKey("id", .integer)
                t.column("endpoint", .text).notNull()
                t.column("sha256", .text).notNull()
                t.column("size", .integer).notNull()
                t.column("name", .text).notNull()
                t.column("sentAt", .datetime).notNull()
            }
        }
        migrator.registerMigration("v15: converted photos' identity") { db in
            // A photo converted on the way is known by its original and the settings
            // (`ContentIdentity.converted`), not by the bytes sent.
            try db.alter(table: "upload") { t in
                t.add(column: "sourceSHA256", .text)
            }
        }
        migrator.registerMigration("v16: converted photos' names") { db in
            // The name a converted photo went under (IMG_0001.jpg), for "already sent … as".
            try db.alter(table: "upload") { t in
                t.add(column: "sentName", .text)
            }
        }
        return migrator
    }
}
