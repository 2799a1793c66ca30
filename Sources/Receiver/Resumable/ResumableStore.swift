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

    /// The uploads as a value, and the continuations of the requests waiting for one.
    private struct State {
        var leases: ResumableLeases
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]

        /// Takes the continuations of `ids` out, to be resumed outside the lock.
        mutating func wake(_ ids: [UInt64]) -> [CheckedContinuation<Void, Never>] {
            ids.compactMap { waiters.removeValue(forKey: $0) }
        }
    }

    private let state: NIOLockedValueBox<State>
    /// The receiver's clock: what its endpoints, gate and leases read the time from.
    let clock: HouseClock

    /// Opens the store of `directory`, reading what an earlier receiver left: uploads older
    /// than `maxAge` and files without their partner are removed.
    init(
        directory: String, maxAge: Duration, idleAge: Duration? = nil, quota: ResumableQuota = .standard, takeoverGrace: Duration = .milliseconds(500),
        clock: HouseClock
    ) {
        self.clock = clock
        self.takeoverGrace = takeoverGrace
        folder = directory + "/" + Self.folderName
        self.maxAge = maxAge
        self.idleAge = idleAge.map { min($0, maxAge) }
        self.quota = quota
        state = NIOLockedValueBox(State(leases: ResumableLeases(idleAge: idleAge.map { min($0, maxAge) })))
        load(now: clock.wall())
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
    func create(boundary: String, length: Int64?, client: String = ResumableQuota.unknownClient, now: Date) throws(CreateError) -> ResumableRecord {
        // Decided and made room in one hold of the lock: the upload given up is one no request uses.
        let decision = state.withLockedValue { state -> (ResumableQuota.Decision, [CheckedContinuation<Void, Never>]) in
            let decision = quota.decide(for: client, unfinished: state.leases.holdings(now: now))
            guard case .evict(let evicting) = decision else { return (decision, []) }
            return (decision, state.wake(state.leases.remove(evicting)))
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
        state.withLockedValue { $0.leases.add(record, offset: 0, touched: false, now: now) }
        return record
    }

    /// What a request can learn without waiting: nil when there is no such upload.
    typealias Snapshot = ResumableLeases.Snapshot

    /// How many requests wait for the upload's holder to let go.
    func waiting(_ token: String) -> Int { state.withLockedValue { $0.leases.waiting(token) } }

    func peek(_ token: String, now: Date) -> Snapshot? {
        state.withLockedValue { $0.leases.snapshot(token, now: now) }
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
            // Taken and read in one hold of the lock: the entry cannot change in between.
            switch state.withLockedValue({ $0.leases.take(token, fresh: fresh, interrupt: interrupt, now: now) }) {
            case .taken(let record, let offset):
                return Lease(store: self, record: record, offset: offset)
            case .absent:
                return nil
            case .held(let previous):
                if graceOver { previous?() }
                await waitForRelease(token, upTo: graceOver ? nil : takeoverGrace)
                graceOver = true
            }
        }
    }

    /// Waits until the holder of `token` lets go (or the upload goes), or `limit` passes.
    private func waitForRelease(_ token: String, upTo limit: Duration?) async {
        let id = state.withLockedValue { $0.leases.newID() }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLockedValue { state -> Bool in
                guard state.leases.wait(token, id: id) else { return true }
                state.waiters[id] = waiter
                return false
            }
            if now {
                waiter.resume()
            } else if let limit {
                // Registered first, so the clock cannot miss it.
                Task { [state] in
                    try? await Task.sleep(for: limit)
                    let waiter = state.withLockedValue { state in
                        state.leases.stopWaiting(token, id: id) ? state.waiters.removeValue(forKey: id) : nil
                    }
                    waiter?.resume()
                }
            }
        }
    }

    /// Removes uploads past their age, or idle too long, that no request holds. Returns how many.
    @discardableResult
    func sweep(now: Date) -> Int {
        let expired = state.withLockedValue { $0.leases.sweep(now: now) }
        for token in expired { removeFiles(token) }
        return expired.count
    }

    /// How many uploads are kept (complete ones included, until their age).
    var count: Int { state.withLockedValue { $0.leases.count } }

    // MARK: a request's hold on one upload

    // MARK: inside

    func letGo(_ token: String, offset: Int64?, record: ResumableRecord?, now: Date) {
        let waiters = state.withLockedValue { $0.wake($0.leases.letGo(token, offset: offset, record: record, now: now)) }
        for waiter in waiters { waiter.resume() }
    }

    func forget(_ token: String) {
        let waiters = state.withLockedValue { $0.wake($0.leases.remove(token)) }
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

    /// Replaces the record file whole (written aside, then renamed over it).
    func save(_ record: ResumableRecord) throws {
        let data = try JSONWriter.data(record)
        do {
            try FileReplacement.write(data, to: recordPath(record.token), mode: 0o600)
        } catch {
            throw UploadStore.StoreError.io(error.description)
        }
    }

    private func load(now: Date) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var leases = ResumableLeases(idleAge: idleAge)
        for name in names where name.hasSuffix(".json") {
            let token = String(name.dropLast(5))
            guard let data = FileManager.default.contents(atPath: recordPath(token)),
                let record = try? decoder.decode(ResumableRecord.self, from: data), record.token == token,
                record.isPlausible, record.expiresAt > now
            else {
                removeFiles(token)
                continue
            }
            if record.complete {
                unlink(partPath(token))
                unlink(bodyPath(token))
                leases.add(record, offset: record.length ?? 0, touched: true, now: now)
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
            leases.add(record, offset: Int64(st.st_size) + bodySize, touched: true, now: now)
        }
        // Bytes without a record, and records being replaced when a receiver was killed.
        for name in names where !name.hasSuffix(".json") {
            let token = name.hasSuffix(".part") || name.hasSuffix(".body") ? String(name.dropLast(5)) : ""
            if leases.entries[token] == nil { unlink(folder + "/" + name) }
        }
        state.withLockedValue { $0.leases = leases }
    }
}
