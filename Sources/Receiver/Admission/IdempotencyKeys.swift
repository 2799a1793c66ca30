import Foundation
import HTTPTypes
import NIOCore
import NIOConcurrencyHelpers
import UploadCore

/// `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header) for ordinary uploads: a
/// request that repeats a key whose upload was stored, with the same file (its file part compared
/// byte for byte with the stored file as it arrives), gets that upload's answer again (marked
/// `Idempotent-Replayed: true`) and nothing is stored twice; one that repeats a key still in
/// progress gets 409; one that reuses a key for another body (another length, or another file of
/// the same length) gets 422. A key whose upload was refused, or whose stored file is gone, is
/// free again: what arrives is received as a new upload. A key is one client's (one address, as the resumable
/// quota names clients): another client's use of the same key is another upload, so no client
/// can learn what another stored. Keys are kept in memory for `maxAge` (at most `capacity` of
/// them, the oldest going first).
final class IdempotencyKeys: Sendable {
    static let capacity = 10_000

    struct Answer: Sendable, Equatable {
        var status: Int
        var body: String
    }

    enum Lookup: Equatable {
        /// Not seen (or forgotten): the request goes ahead, and the key is now in progress.
        case new
        /// The key's upload was stored as `stored` (a name in the upload folder) and answered
        /// `answer`; a body that holds the same file gets it again (the body must be read to know).
        case completed(Answer, stored: String)
        case inProgress
        case otherBody
    }

    private struct Entry {
        var length: Int64?
        var answer: Answer?
        /// The stored file's name, when the upload was stored.
        var stored: String?
        var at: Date
        /// Which of the key's places in `Keys.order` is current (a key moves to the back when its
        /// upload ends).
        var stamp: UInt64
    }

    /// The keys, and their order of last change: oldest at the front. Finding the oldest or the
    /// expired ones is then a look at the front, not a scan of every key (which, once `capacity`
    /// keys were held, made every new upload walk and copy all of them: a receiver that had
    /// taken 10,000 uploads from `send` answered three times slower).
    private struct Keys {
        var entries: [String: Entry] = [:]
        /// (key, stamp) in the order they were set; a pair whose stamp is no longer the key's
        /// (moved or removed since) is skipped when it reaches the front.
        var order = CircularBuffer<(key: String, stamp: UInt64)>()
        var nextStamp: UInt64 = 0

        mutating func set(_ key: String, length: Int64?, answer: Answer?, stored: String? = nil, at: Date) {
            nextStamp += 1
            entries[key] = Entry(length: length, answer: answer, stored: stored, at: at, stamp: nextStamp)
            order.append((key, nextStamp))
            // Pairs left behind by keys that moved or went: never more than the live ones.
            if order.count > 2 * Swift.max(entries.count, 64) {
                order = CircularBuffer(order.filter { entries[$0.key]?.stamp == $0.stamp })
            }
        }

        /// The oldest key still held, after dropping stale pairs from the front.
        mutating func oldest() -> (key: String, entry: Entry)? {
            while let first = order.first {
                if let entry = entries[first.key], entry.stamp == first.stamp { return (first.key, entry) }
                order.removeFirst()
            }
            return nil
        }

        /// Forgets expired keys, then the oldest ones, until there is room for one more.
        mutating func makeRoom(capacity: Int, now: Date, maxAge: Duration) {
            while let (key, entry) = oldest(),
                entries.count >= capacity || now.timeIntervalSince(entry.at) >= maxAge.seconds
            {
                entries[key] = nil
                order.removeFirst()
            }
        }
    }

    let maxAge: Duration
    let capacity: Int
    private let state = NIOLockedValueBox(Keys())

    init(maxAge: Duration, capacity: Int = IdempotencyKeys.capacity) {
        self.maxAge = maxAge
        self.capacity = capacity
    }

    /// The key as the client sent it: an sf-string (`"…"`) of 1 to 255 visible ASCII characters.
    static func parse(_ value: String?) -> Result<String, Refusal>? {
        guard let value else { return nil }
        let trimmed = value.trimmingSpaces()
        guard trimmed.count >= 3, trimmed.hasPrefix("\""), trimmed.hasSuffix("\"") else {
            return .failure(Refusal(.badRequest, "Idempotency-Key must be a quoted string, like \"8e03978e-40d5-43e8-bc93-6894a57f9324\""))
        }
        let key = String(trimmed.dropFirst().dropLast())
        guard key.utf8.count <= 255, key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) else {
            return .failure(Refusal(.badRequest, "Idempotency-Key must be 1 to 255 visible ASCII characters without quotes or backslashes"))
        }
        return .success(key)
    }

    /// The key as this store holds it: the client's own.
    private static func scoped(_ key: String, _ client: String) -> String { client + " " + key }

    /// What a request of `client` carrying `key` for a body of `length` bytes would get, changing nothing.
    func peek(_ key: String, client: String, length: Int64?, now: Date) -> Lookup {
        state.withLockedValue { keys in Self.lookup(keys.entries[Self.scoped(key, client)], length: length, now: now, maxAge: maxAge) }
    }

    private static func lookup(_ entry: Entry?, length: Int64?, now: Date, maxAge: Duration) -> Lookup {
        guard let entry, now.timeIntervalSince(entry.at) < maxAge.seconds else { return .new }
        // A refused upload stored nothing to compare with: the key is free for what comes now.
        if entry.answer != nil, entry.stored == nil { return .new }
        if entry.length != length { return .otherBody }
        guard let answer = entry.answer, let stored = entry.stored else { return .inProgress }
        return .completed(answer, stored: stored)
    }

    /// How many keys are held (expired ones included until room is made).
    var count: Int { state.withLockedValue { $0.entries.count } }

    /// What to do with a request of `client` carrying `key` for a body of `length` bytes;
    /// `.new` marks it in progress.
    func begin(_ key: String, client: String, length: Int64?, now: Date) -> Lookup {
        let key = Self.scoped(key, client)
        return state.withLockedValue { keys in
            let found = Self.lookup(keys.entries[key], length: length, now: now, maxAge: maxAge)
            guard found == .new else { return found }
            keys.makeRoom(capacity: capacity, now: now, maxAge: maxAge)
            keys.set(key, length: length, answer: nil, at: now)
            return .new
        }
    }

    /// The upload of `client` under `key` ended with `answer`, its file stored as `stored` (both
    /// kept), or without an answer (nil: the key is free again, so a retry of an interrupted
    /// upload goes ahead).
    func end(_ key: String, client: String, answer: Answer?, stored: String? = nil, now: Date) {
        let key = Self.scoped(key, client)
        state.withLockedValue { keys in
            if let answer {
                guard let entry = keys.entries[key] else { return }
                keys.set(key, length: entry.length, answer: answer, stored: stored, at: now)
            } else {
                keys.entries[key] = nil
            }
        }
    }

    /// A completed upload's answer again, marked as such; the connection ends after it (the
    /// body, if the client sends it, is not worth reading).
    static func replay(_ answer: Answer) -> (head: HTTPResponse, body: ByteBuffer) {
        var head = HTTPResponse(status: .init(code: answer.status))
        let body = ByteBuffer(string: answer.body)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.contentLength] = String(body.readableBytes)
        head.headerFields[replayedField] = "true"
        head.headerFields[.connection] = "close"
        return (head, body)
    }

    static func otherBody(_ what: String) -> Refusal {
        Refusal(.unprocessableContent, "this Idempotency-Key was used for another upload (\(what))")
    }

    static let field = HTTPField.Name("Idempotency-Key")!
    static let replayedField = HTTPField.Name("Idempotent-Replayed")!

    /// The answer `lookup` calls for, when it is not `.new`.
    static func refusal(for lookup: Lookup) -> Refusal? {
        switch lookup {
        case .new, .completed: nil
        case .inProgress: Refusal(.conflict, "an upload with this Idempotency-Key is still in progress").adding(["Retry-After": "1"])
        case .otherBody: otherBody("another length")
        }
    }
}
