import Foundation
import HTTPTypes
import NIOCore
import NIOConcurrencyHelpers
import UploadCore

/// `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header) for ordinary uploads: a
/// request that repeats a key whose upload completed gets that upload's answer again (marked
/// `Idempotent-Replayed: true`) and nothing is stored twice; one that repeats a key still in
/// progress gets 409; one that reuses a key for another body (another length) gets 422.
/// Keys are kept in memory for `maxAge` (at most `capacity` of them, the oldest going first).
final class IdempotencyKeys: Sendable {
    static let capacity = 10_000

    struct Answer: Sendable, Equatable {
        var status: Int
        var body: String
    }

    enum Lookup: Equatable {
        /// Not seen (or forgotten): the request goes ahead, and the key is now in progress.
        case new
        case replay(Answer)
        case inProgress
        case otherBody
    }

    private struct Entry {
        var length: Int64?
        var answer: Answer?
        var at: Date
    }

    let maxAge: Duration
    private let state = NIOLockedValueBox<[String: Entry]>([:])

    init(maxAge: Duration) {
        self.maxAge = maxAge
    }

    /// The key as the client sent it: an sf-string (`"…"`) of 1 to 255 visible ASCII characters.
    static func parse(_ value: String?) -> Result<String, Refusal>? {
        guard let value else { return nil }
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.count >= 3, trimmed.hasPrefix("\""), trimmed.hasSuffix("\"") else {
            return .failure(Refusal(.badRequest, "Idempotency-Key must be a quoted string, like \"8e03978e-40d5-43e8-bc93-6894a57f9324\""))
        }
        let key = String(trimmed.dropFirst().dropLast())
        guard key.utf8.count <= 255, key.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) else {
            return .failure(Refusal(.badRequest, "Idempotency-Key must be 1 to 255 visible ASCII characters without quotes or backslashes"))
        }
        return .success(key)
    }

    /// What a request carrying `key` for a body of `length` bytes would get, changing nothing.
    func peek(_ key: String, length: Int64?, now: Date = Date()) -> Lookup {
        state.withLockedValue { entries in Self.lookup(entries[key], length: length, now: now, maxAge: maxAge) }
    }

    private static func lookup(_ entry: Entry?, length: Int64?, now: Date, maxAge: Duration) -> Lookup {
        guard let entry, now.timeIntervalSince(entry.at) < maxAge.seconds else { return .new }
        if entry.length != length { return .otherBody }
        return entry.answer.map { .replay($0) } ?? .inProgress
    }

    /// What to do with a request carrying `key` for a body of `length` bytes; `.new` marks it in progress.
    func begin(_ key: String, length: Int64?, now: Date = Date()) -> Lookup {
        state.withLockedValue { entries in
            let found = Self.lookup(entries[key], length: length, now: now, maxAge: maxAge)
            guard found == .new else { return found }
            if entries.count >= Self.capacity {
                let expired = entries.filter { now.timeIntervalSince($0.value.at) >= maxAge.seconds }.map(\.key)
                for old in expired { entries[old] = nil }
                if entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value.at < $1.value.at })?.key {
                    entries[oldest] = nil
                }
            }
            entries[key] = Entry(length: length, answer: nil, at: now)
            return .new
        }
    }

    /// The upload under `key` ended with `answer` (kept), or without one (nil: the key is free
    /// again, so a retry of an interrupted upload goes ahead).
    func end(_ key: String, answer: Answer?, now: Date = Date()) {
        state.withLockedValue { entries in
            if let answer {
                entries[key]?.answer = answer
                entries[key]?.at = now
            } else {
                entries[key] = nil
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

    static let field = HTTPField.Name("Idempotency-Key")!
    static let replayedField = HTTPField.Name("Idempotent-Replayed")!

    /// The answer `lookup` calls for, when it is not `.new`.
    static func refusal(for lookup: Lookup) -> Refusal? {
        switch lookup {
        case .new, .replay: nil
        case .inProgress: Refusal(.conflict, "an upload with this Idempotency-Key is still in progress").adding(["Retry-After": "1"])
        case .otherBody: Refusal(.unprocessableContent, "this Idempotency-Key was used for another upload (another length)")
        }
    }
}
