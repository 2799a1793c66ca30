import Foundation
import UploadCore

/// The receiver's resumable uploads as a value: where each stands (its record and the bytes
/// kept), which request holds it and which ones wait for it, when it was last active, and what
/// follows from that — taking it for a request, letting go, expiry, the quota's view. The
/// store keeps this under a lock beside the files and the waiting requests' continuations; it
/// decides nothing itself, so every rule here is tested input by input.
struct ResumableLeases {
    struct Entry {
        var record: ResumableRecord
        /// Bytes received and kept (the part file's size; the length once complete).
        var offset: Int64
        var holder: Holder?
        /// Requests waiting for the holder to let go, by number, in the order they came.
        var waiters: [UInt64] = []
        /// Whether any request has used it (a creation request may only take a fresh one).
        var touched = false
        /// When a request last took or let go of it (or the store opened, for one read from disk).
        var lastActive: Date

        /// Whether it is gone at `now`: past its age, or unfinished and untouched for `idleAge`.
        func expired(at now: Date, idleAge: Duration?) -> Bool {
            if record.expiresAt <= now { return true }
            guard let idleAge, !record.complete, holder == nil else { return false }
            return now.timeIntervalSince(lastActive) >= idleAge.seconds
        }
    }

    struct Holder: Sendable {
        let id: UInt64
        /// Ends the holder's request (its connection); nil for short requests not worth ending.
        let interrupt: (@Sendable () -> Void)?
    }

    /// What a request can learn without waiting.
    struct Snapshot: Equatable {
        var record: ResumableRecord
        var offset: Int64
        var busy: Bool
    }

    enum Take {
        /// The request holds it now: the record and offset it works from.
        case taken(ResumableRecord, offset: Int64)
        /// No such upload (gone, expired, or used already when a fresh one was asked for).
        case absent
        /// Another request holds it; `interrupt` ends that one.
        case held(interrupt: (@Sendable () -> Void)?)
    }

    /// How long an unfinished upload is kept when no request touches it (nil: until its age).
    let idleAge: Duration?
    private(set) var entries: [String: Entry] = [:]
    private var nextID: UInt64 = 1

    init(idleAge: Duration?) {
        self.idleAge = idleAge
    }

    var count: Int { entries.count }

    func waiting(_ token: String) -> Int { entries[token]?.waiters.count ?? 0 }

    /// A new upload, or one read from disk.
    mutating func add(_ record: ResumableRecord, offset: Int64, touched: Bool, now: Date) {
        entries[record.token] = Entry(record: record, offset: offset, touched: touched, lastActive: now)
    }

    func snapshot(_ token: String, now: Date) -> Snapshot? {
        guard let entry = entries[token], !entry.expired(at: now, idleAge: idleAge) else { return nil }
        return Snapshot(record: entry.record, offset: entry.offset, busy: entry.holder != nil)
    }

    /// Takes the upload for a request whose end is `interrupt`; `fresh`: only one no request
    /// has used (a creation's own).
    mutating func take(_ token: String, fresh: Bool, interrupt: (@Sendable () -> Void)?, now: Date) -> Take {
        guard var entry = entries[token], !entry.expired(at: now, idleAge: idleAge), !(fresh && entry.touched) else { return .absent }
        if let holder = entry.holder { return .held(interrupt: holder.interrupt) }
        entry.holder = Holder(id: newID(), interrupt: interrupt)
        entry.touched = true
        entry.lastActive = max(entry.lastActive, now)
        entries[token] = entry
        return .taken(entry.record, offset: entry.offset)
    }

    /// A number for a request about to wait.
    mutating func newID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Waiter `id` waits for the holder of `token` to let go; false when none holds it (or it
    /// is gone): then there is nothing to wait for.
    mutating func wait(_ token: String, id: UInt64) -> Bool {
        guard entries[token]?.holder != nil else { return false }
        entries[token]?.waiters.append(id)
        return true
    }

    /// Waiter `id` stops waiting (its grace ran out); whether it was still waiting.
    mutating func stopWaiting(_ token: String, id: UInt64) -> Bool {
        guard let index = entries[token]?.waiters.firstIndex(of: id) else { return false }
        entries[token]?.waiters.remove(at: index)
        return true
    }

    /// The holder lets go, with what it kept (nil: unchanged); the waiters to wake.
    mutating func letGo(_ token: String, offset: Int64?, record: ResumableRecord?, now: Date) -> [UInt64] {
        guard var entry = entries[token] else { return [] }
        if let offset { entry.offset = offset }
        if let record { entry.record = record }
        entry.holder = nil
        entry.lastActive = max(entry.lastActive, now)
        let waiters = entry.waiters
        entry.waiters = []
        entries[token] = entry
        return waiters
    }

    /// The upload goes (removed, or evicted for another); the waiters to wake.
    mutating func remove(_ token: String) -> [UInt64] {
        entries.removeValue(forKey: token)?.waiters ?? []
    }

    /// Removes the uploads past their age or idle too long that no request holds; their tokens.
    mutating func sweep(now: Date) -> [String] {
        let tokens = entries.filter { $0.value.holder == nil && $0.value.expired(at: now, idleAge: idleAge) }.map(\.key)
        for token in tokens { entries[token] = nil }
        return tokens
    }

    /// The unfinished uploads as the quota weighs them.
    func holdings(now: Date) -> [ResumableQuota.Holding] {
        entries.compactMap { token, entry in
            guard !entry.record.complete, !entry.expired(at: now, idleAge: idleAge) else { return nil }
            return .init(token: token, client: entry.record.client ?? ResumableQuota.unknownClient, lastActive: entry.lastActive, inUse: entry.holder != nil)
        }
    }
}
