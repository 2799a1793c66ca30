import Foundation
import Glibc
import NIOConcurrencyHelpers
import UploadCore

/// The receiver's resumable uploads: on disk in a private folder of the upload directory, so
/// they survive a restart; in memory, who is using each one. The bytes received so far are
/// split where the file part's own bytes begin: `<token>.part` holds the multipart stream up
/// to there, `<token>.body` from there on, and `<token>.json` the record. Once the upload is
/// complete the body file, cut to the file part's length, is the stored file: its bytes are
/// written once, not once raw and again extracted. The folder is never served and a partial
/// upload never shows up as a stored file.
///
/// One request at a time works on an upload (a `Lease`). A newer request for the same upload
/// interrupts the one holding it (the client has given up on that one, though its connection
/// may not have told us yet) and waits until it has let go, so the offset it reads or appends
/// at is never stale, as the draft's concurrency rules ask.
final class ResumableStore: Sendable {
    static let folderName = ".uploadmon-resumable"

    let folder: String
    /// How long an upload may take from its creation; after that it is removed, complete or not.
    let maxAge: Duration
    /// How long an unfinished upload is kept when no request touches it (nil: until `maxAge`).
    let idleAge: Duration?
    /// How long a newer request lets the one holding an upload end by itself (`acquire`).
    let takeoverGrace: Duration
    /// How many unfinished uploads each client and all of them may hold.
    let quota: ResumableQuota

    private struct Entry {
        var record: ResumableRecord
        /// Bytes received and kept (the part file's size; the length once complete).
        var offset: Int64
        var holder: Holder?
        /// Requests waiting for the holder to let go, by number (one that stops waiting takes
        /// itself out).
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
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

    private struct State {
        var entries: [String: Entry] = [:]
        var nextID: UInt64 = 1
    }
    private let state = NIOLockedValueBox(State())

    /// Opens the store of `directory`, reading what an earlier receiver left: uploads older
    /// than `maxAge` and files without their partner are removed.
    init(directory: String, maxAge: Duration, idleAge: Duration? = nil, quota: ResumableQuota = .standard, takeoverGrace: Duration = .milliseconds(500),
         now: Date) {
        self.takeoverGrace = takeoverGrace
        folder = directory + "/" + Self.folderName
        self.maxAge = maxAge
        self.idleAge = idleAge.map { min($0, maxAge) }
        self.quota = quota
        load(now: now)
    }

    /// Seconds an upload whose age ends at `expiresAt` is sure to live from `now` if the client
    /// goes on at once: its `Upload-Limit: max-age` (the idle age, or less near its end).
    func remainingAge(expiresAt: Date, now: Date) -> Int64 {
        min(Int64(max(0, expiresAt.timeIntervalSince(now).rounded(.down))), advertisedAge)
    }

    /// Seconds a new upload is sure to live while the client goes on: its `Upload-Limit: max-age`.
    var advertisedAge: Int64 { Int64((idleAge ?? maxAge).seconds) }

    // MARK: creating and finding

    enum CreateError: Error {
        /// The quota refuses (every upload that could make room is in use); why, in words.
        case full(String)
        case io(String)
    }

    /// Creates an empty upload for `client`: its part file and its record. When the quota asks
    /// for room, the upload it names goes first. Blocking file calls.
    func create(boundary: String, length: Int64?, client: String = "unknown", now: Date) throws(CreateError) -> ResumableRecord {
        // Decided and made room in one hold of the lock: the upload given up is one no request uses.
        let decision = state.withLockedValue { state -> (ResumableQuota.Decision, [CheckedContinuation<Void, Never>]) in
            let unfinished = state.entries.compactMap { token, entry -> ResumableQuota.Holding? in
                guard !entry.record.complete, !entry.expired(at: now, idleAge: idleAge) else { return nil }
                return .init(token: token, client: entry.record.client ?? "unknown", lastActive: entry.lastActive, inUse: entry.holder != nil)
            }
            let decision = quota.decide(for: client, unfinished: unfinished)
            guard case .evict(let evicting) = decision else { return (decision, []) }
            let waiters = state.entries[evicting].map { Array($0.waiters.values) } ?? []
            state.entries[evicting] = nil
            return (decision, waiters)
        }
        switch decision.0 {
        case .admit: break
        case .evict(let evicting):
            removeFiles(evicting)
            for waiter in decision.1 { waiter.resume() }
        case .refuse(let reason): throw .full(reason)
        }
        var token = ""
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<16 { token += String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
        var fd: Int32 = -1
        // Twice: the folder goes when its last upload does, maybe between the two calls.
        for _ in 0..<2 where fd < 0 {
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw .io("cannot create \(folder): \(String(cString: strerror(errno)))")
            }
            fd = open(partPath(token), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { throw .io("cannot create a file in \(folder): \(String(cString: strerror(errno)))") }
        close(fd)
        let record = ResumableRecord(
            token: token, createdAt: now, expiresAt: now.addingTimeInterval(maxAge.seconds), boundary: boundary, length: length,
            client: client
        )
        do {
            try save(record)
        } catch {
            unlink(partPath(token))
            throw .io(String(describing: error))
        }
        state.withLockedValue { $0.entries[token] = Entry(record: record, offset: 0, lastActive: now) }
        return record
    }

    /// What a request can learn without waiting: nil when there is no such upload.
    struct Snapshot: Equatable {
        var record: ResumableRecord
        var offset: Int64
        var busy: Bool
    }

    /// How many requests wait for the upload's holder to let go.
    func waiting(_ token: String) -> Int { state.withLockedValue { $0.entries[token]?.waiters.count ?? 0 } }

    func peek(_ token: String, now: Date) -> Snapshot? {
        state.withLockedValue { state in
            guard let entry = state.entries[token], !entry.expired(at: now, idleAge: idleAge) else { return nil }
            return Snapshot(record: entry.record, offset: entry.offset, busy: entry.holder != nil)
        }
    }

    /// Takes the upload for one request, ending (`interrupt`) the request that holds it and
    /// waiting until it lets go. nil when there is no such upload (or, with `fresh`, when
    /// another request has used it already). `interrupt` is how a newer request ends this one.
    ///
    /// The holder is first given `takeoverGrace` to end by itself: a client whose connection was
    /// cut asks where the upload stands at once, while its old request is still reading what
    /// reached the socket before the cut; ending that request then would throw those bytes
    /// away and the client would send them again. A request that does not end by itself (a
    /// connection gone silent) is ended after the grace.
    func acquire(_ token: String, fresh: Bool = false, interrupt: (@Sendable () -> Void)?, now: Date) async -> Lease? {
        var graceOver = false
        while true {
            var previous: (@Sendable () -> Void)?
            enum Taking { case taken(ResumableRecord, Int64), absent, held }
            // Taken and read in one hold of the lock: the entry cannot change in between.
            let taking: Taking = state.withLockedValue { state in
                guard var entry = state.entries[token], !entry.expired(at: now, idleAge: idleAge), !(fresh && entry.touched) else { return .absent }
                guard let holder = entry.holder else {
                    let id = state.nextID
                    state.nextID += 1
                    entry.holder = Holder(id: id, interrupt: interrupt)
                    entry.touched = true
                    entry.lastActive = max(entry.lastActive, now)
                    state.entries[token] = entry
                    return .taken(entry.record, entry.offset)
                }
                previous = holder.interrupt
                return .held
            }
            switch taking {
            case .taken(let record, let offset):
                return Lease(store: self, record: record, offset: offset)
            case .absent:
                return nil
            case .held:
                if graceOver { previous?() }
                await waitForRelease(token, upTo: graceOver ? nil : takeoverGrace)
                graceOver = true
            }
        }
    }

    /// Waits until the holder of `token` lets go (or the upload goes), or `limit` passes.
    private func waitForRelease(_ token: String, upTo limit: Duration?) async {
        let id = state.withLockedValue { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLockedValue { state -> Bool in
                guard var entry = state.entries[token], entry.holder != nil else { return true }
                entry.waiters[id] = waiter
                state.entries[token] = entry
                return false
            }
            if now {
                waiter.resume()
            } else if let limit {
                // Registered first, so the clock cannot miss it.
                Task { [state] in
                    try? await Task.sleep(for: limit)
                    let waiter = state.withLockedValue { $0.entries[token]?.waiters.removeValue(forKey: id) }
                    waiter?.resume()
                }
            }
        }
    }

    /// Removes uploads past their age, or idle too long, that no request holds. Returns how many.
    @discardableResult
    func sweep(now: Date) -> Int {
        let expired = state.withLockedValue { state -> [String] in
            let tokens = state.entries.filter { $0.value.holder == nil && $0.value.expired(at: now, idleAge: idleAge) }.map(\.key)
            for token in tokens { state.entries[token] = nil }
            return tokens
        }
        for token in expired { removeFiles(token) }
        return expired.count
    }

    /// How many uploads are kept (complete ones included, until their age).
    var count: Int { state.withLockedValue { $0.entries.count } }

    // MARK: a request's hold on one upload

    // MARK: inside

    func letGo(_ token: String, offset: Int64?, record: ResumableRecord?) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            guard var entry = state.entries[token] else { return [] }
            if let offset { entry.offset = offset }
            if let record { entry.record = record }
            entry.holder = nil
            entry.lastActive = max(entry.lastActive, Date())
            let waiters = Array(entry.waiters.values)
            entry.waiters = [:]
            state.entries[token] = entry
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func forget(_ token: String) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            let waiters = state.entries[token].map { Array($0.waiters.values) } ?? []
            state.entries[token] = nil
            return waiters
        }
        removeFiles(token)
        for waiter in waiters { waiter.resume() }
    }

    func partPath(_ token: String) -> String { folder + "/" + token + ".part" }
    func bodyPath(_ token: String) -> String { folder + "/" + token + ".body" }
    private func recordPath(_ token: String) -> String { folder + "/" + token + ".json" }

    private func removeFiles(_ token: String) {
        unlink(partPath(token))
        unlink(bodyPath(token))
        unlink(recordPath(token))
        // The folder goes with its last upload (it fails, harmlessly, while others remain).
        rmdir(folder)
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// Replaces the record file whole (written aside, then renamed over it).
    func save(_ record: ResumableRecord) throws {
        let data = try Self.encoder.encode(record)
        let path = recordPath(record.token)
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw UploadStore.StoreError.io("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == data.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw UploadStore.StoreError.io("cannot write \(path)")
        }
    }

    private func load(now: Date) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var entries: [String: Entry] = [:]
        for name in names where name.hasSuffix(".json") {
            let token = String(name.dropLast(5))
            guard let data = FileManager.default.contents(atPath: recordPath(token)),
                  let record = try? decoder.decode(ResumableRecord.self, from: data), record.token == token,
                  record.isPlausible, record.expiresAt > now else {
                removeFiles(token)
                continue
            }
            if record.complete {
                unlink(partPath(token))
                unlink(bodyPath(token))
                entries[token] = Entry(record: record, offset: record.length ?? 0, touched: true, lastActive: now)
                continue
            }
            var st = stat()
            guard stat(partPath(token), &st) == 0 else {
                removeFiles(token)
                continue
            }
            var body = stat()
            let bodySize = stat(bodyPath(token), &body) == 0 ? Int64(body.st_size) : 0
            // The idle clock starts over: the time the receiver was down is not the client's.
            entries[token] = Entry(record: record, offset: Int64(st.st_size) + bodySize, touched: true, lastActive: now)
        }
        // Bytes without a record, and records being replaced when a receiver was killed.
        for name in names where !name.hasSuffix(".json") {
            let token = name.hasSuffix(".part") || name.hasSuffix(".body") ? String(name.dropLast(5)) : ""
            if entries[token] == nil { unlink(folder + "/" + name) }
        }
        state.withLockedValue { $0.entries = entries }
    }
}
