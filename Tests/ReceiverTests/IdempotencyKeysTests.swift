import Foundation
import Testing
@testable import Receiver

/// The receiver's memory of Idempotency-Keys, driven directly with a clock of our own.
struct IdempotencyKeysTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let done = IdempotencyKeys.Answer(status: 200, body: #"{"filename":"a.jpg"}"#)

    @Test func aKeyIsNewThenInProgressThenReplayed() {
        let keys = IdempotencyKeys(maxAge: .seconds(60))
        #expect(keys.begin("a", client: "c", length: 10, now: start) == .new)
        #expect(keys.begin("a", client: "c", length: 10, now: start) == .inProgress)
        #expect(keys.begin("a", client: "c", length: 11, now: start) == .otherBody)
        keys.end("a", client: "c", answer: done, stored: "a.jpg", now: start)
        #expect(keys.begin("a", client: "c", length: 10, now: start + 1) == .completed(done, stored: "a.jpg"))
        #expect(keys.peek("a", client: "c", length: 10, now: start + 1) == .completed(done, stored: "a.jpg"))
    }

    /// A key is one client's: another client using it starts its own upload and can never get
    /// (learn) the first one's answer. The stored file's name is kept with the answer.
    @Test func keysAreScopedToTheirClientAndKeepTheFilesFingerprint() {
        let keys = IdempotencyKeys(maxAge: .seconds(60))
        #expect(keys.begin("a", client: "192.0.2.1", length: 10, now: start) == .new)
        keys.end("a", client: "192.0.2.1", answer: done, stored: "a.jpg", now: start)
        #expect(keys.peek("a", client: "192.0.2.1", length: 10, now: start) == .completed(done, stored: "a.jpg"))
        #expect(keys.peek("a", client: "198.51.100.7", length: 10, now: start) == .new)
        #expect(keys.begin("a", client: "198.51.100.7", length: 10, now: start) == .new)
        #expect(keys.count == 2)
    }

    /// A refused upload stored nothing to compare a repeat with: its key is free again.
    @Test func aRefusedUploadFreesItsKey() {
        let keys = IdempotencyKeys(maxAge: .seconds(60))
        #expect(keys.begin("a", client: "c", length: 10, now: start) == .new)
        keys.end("a", client: "c", answer: .init(status: 415, body: "{}"), now: start)
        #expect(keys.begin("a", client: "c", length: 20, now: start) == .new)
    }

    @Test func anUploadCutShortFreesItsKey() {
        let keys = IdempotencyKeys(maxAge: .seconds(60))
        #expect(keys.begin("a", client: "c", length: 10, now: start) == .new)
        keys.end("a", client: "c", answer: nil, now: start)
        #expect(keys.begin("a", client: "c", length: 10, now: start) == .new)
    }

    @Test func aKeyIsForgottenAfterMaxAgeCountedFromItsAnswer() {
        let keys = IdempotencyKeys(maxAge: .seconds(60))
        _ = keys.begin("a", client: "c", length: 10, now: start)
        keys.end("a", client: "c", answer: done, stored: "a.jpg", now: start + 50)
        #expect(keys.peek("a", client: "c", length: 10, now: start + 109) == .completed(done, stored: "a.jpg"))
        #expect(keys.peek("a", client: "c", length: 10, now: start + 111) == .new)
    }

    @Test func atCapacityTheOldestChangeGoesFirst() {
        let keys = IdempotencyKeys(maxAge: .seconds(3600), capacity: 3)
        _ = keys.begin("a", client: "c", length: 1, now: start)
        _ = keys.begin("b", client: "c", length: 1, now: start + 1)
        _ = keys.begin("c", client: "c", length: 1, now: start + 2)
        // a's upload ends last: it is now the newest, so b is the one to go.
        keys.end("a", client: "c", answer: done, stored: "a.jpg", now: start + 3)
        #expect(keys.begin("d", client: "c", length: 1, now: start + 4) == .new)
        #expect(keys.count == 3)
        #expect(keys.peek("b", client: "c", length: 1, now: start + 4) == .new, "b was the oldest")
        #expect(keys.peek("a", client: "c", length: 1, now: start + 4) == .completed(done, stored: "a.jpg"))
        #expect(keys.peek("c", client: "c", length: 1, now: start + 4) == .inProgress)
        #expect(keys.peek("d", client: "c", length: 1, now: start + 4) == .inProgress)
    }

    @Test func expiredKeysMakeRoomBeforeAnyLiveOne() {
        let keys = IdempotencyKeys(maxAge: .seconds(10), capacity: 4)
        _ = keys.begin("old1", client: "c", length: 1, now: start)
        _ = keys.begin("old2", client: "c", length: 1, now: start + 1)
        _ = keys.begin("live", client: "c", length: 1, now: start + 20)
        #expect(keys.begin("new", client: "c", length: 1, now: start + 21) == .new)
        #expect(keys.count == 2, "both expired keys went, the live one stayed")
        #expect(keys.peek("live", client: "c", length: 1, now: start + 21) == .inProgress)
    }

    @Test func keysThatMoveOrGoLeaveNoGrowingTrail() {
        // Every key begins, ends and is replaced many times over: what is held stays at capacity
        // and the answers stay right.
        let keys = IdempotencyKeys(maxAge: .seconds(3600), capacity: 100)
        var now = start
        for round in 0..<50 {
            for i in 0..<100 {
                let key = "k\(i)"
                now += 0.001
                if keys.begin(key, client: "c", length: Int64(round), now: now) == .otherBody {
                    keys.end(key, client: "c", answer: nil, now: now)
                    #expect(keys.begin(key, client: "c", length: Int64(round), now: now) == .new)
                }
                keys.end(key, client: "c", answer: i % 3 == 0 ? nil : done, stored: "a.jpg", now: now)
            }
        }
        #expect(keys.count <= 100)
        #expect(keys.peek("k1", client: "c", length: 49, now: now) == .completed(done, stored: "a.jpg"))
        #expect(keys.peek("k3", client: "c", length: 49, now: now) == .new)
    }

    @Test func manyMoreKeysThanCapacityKeepTheNewest() {
        let keys = IdempotencyKeys(maxAge: .seconds(3600), capacity: 1000)
        for i in 0..<25_000 {
            _ = keys.begin("key-\(i)", client: "c", length: 1, now: start + Double(i) / 1000)
            keys.end("key-\(i)", client: "c", answer: done, stored: "a.jpg", now: start + Double(i) / 1000)
        }
        #expect(keys.count == 1000)
        #expect(keys.peek("key-23999", client: "c", length: 1, now: start + 25) == .new)
        #expect(keys.peek("key-24000", client: "c", length: 1, now: start + 25) == .completed(done, stored: "a.jpg"))
        #expect(keys.peek("key-24999", client: "c", length: 1, now: start + 25) == .completed(done, stored: "a.jpg"))
    }
}
