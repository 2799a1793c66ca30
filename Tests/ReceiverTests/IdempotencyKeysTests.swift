import Foundation
import Testing
@testable import Receiver

/// The receiver's memory of Idempotency-Keys, driven directly with a clock of our own.
struct IdempotencyKeysTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let done = IdempotencyKeys.Answer(status: 200, body: #"{"filename":"a.jpg"}"#)

    @Test func aKeyIsNewThenInProgressThenReplayed() {
        let keys = IdempotencyKeys(maxAge: .seconds(60))
        #expect(keys.begin("a", length: 10, now: start) == .new)
        #expect(keys.begin("a", length: 10, now: start) == .inProgress)
        #expect(keys.begin("a", length: 11, now: start) == .otherBody)
        keys.end("a", answer: done, now: start)
        #expect(keys.begin("a", length: 10, now: start + 1) == .replay(done))
        #expect(keys.peek("a", length: 10, now: start + 1) == .replay(done))
    }

    @Test func anUploadCutShortFreesItsKey() {
        let keys = IdempotencyKeys(maxAge: .seconds(60))
        #expect(keys.begin("a", length: 10, now: start) == .new)
        keys.end("a", answer: nil, now: start)
        #expect(keys.begin("a", length: 10, now: start) == .new)
    }

    @Test func aKeyIsForgottenAfterMaxAgeCountedFromItsAnswer() {
        let keys = IdempotencyKeys(maxAge: .seconds(60))
        _ = keys.begin("a", length: 10, now: start)
        keys.end("a", answer: done, now: start + 50)
        #expect(keys.peek("a", length: 10, now: start + 109) == .replay(done))
        #expect(keys.peek("a", length: 10, now: start + 111) == .new)
    }

    @Test func atCapacityTheOldestChangeGoesFirst() {
        let keys = IdempotencyKeys(maxAge: .seconds(3600), capacity: 3)
        _ = keys.begin("a", length: 1, now: start)
        _ = keys.begin("b", length: 1, now: start + 1)
        _ = keys.begin("c", length: 1, now: start + 2)
        // a's upload ends last: it is now the newest, so b is the one to go.
        keys.end("a", answer: done, now: start + 3)
        #expect(keys.begin("d", length: 1, now: start + 4) == .new)
        #expect(keys.count == 3)
        #expect(keys.peek("b", length: 1, now: start + 4) == .new, "b was the oldest")
        #expect(keys.peek("a", length: 1, now: start + 4) == .replay(done))
        #expect(keys.peek("c", length: 1, now: start + 4) == .inProgress)
        #expect(keys.peek("d", length: 1, now: start + 4) == .inProgress)
    }

    @Test func expiredKeysMakeRoomBeforeAnyLiveOne() {
        let keys = IdempotencyKeys(maxAge: .seconds(10), capacity: 4)
        _ = keys.begin("old1", length: 1, now: start)
        _ = keys.begin("old2", length: 1, now: start + 1)
        _ = keys.begin("live", length: 1, now: start + 20)
        #expect(keys.begin("new", length: 1, now: start + 21) == .new)
        #expect(keys.count == 2, "both expired keys went, the live one stayed")
        #expect(keys.peek("live", length: 1, now: start + 21) == .inProgress)
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
                if keys.begin(key, length: Int64(round), now: now) == .otherBody {
                    keys.end(key, answer: nil, now: now)
                    #expect(keys.begin(key, length: Int64(round), now: now) == .new)
                }
                keys.end(key, answer: i % 3 == 0 ? nil : done, now: now)
            }
        }
        #expect(keys.count <= 100)
        #expect(keys.peek("k1", length: 49, now: now) == .replay(done))
        #expect(keys.peek("k3", length: 49, now: now) == .new)
    }

    @Test func manyMoreKeysThanCapacityKeepTheNewest() {
        let keys = IdempotencyKeys(maxAge: .seconds(3600), capacity: 1000)
        for i in 0..<25_000 {
            _ = keys.begin("key-\(i)", length: 1, now: start + Double(i) / 1000)
            keys.end("key-\(i)", answer: done, now: start + Double(i) / 1000)
        }
        #expect(keys.count == 1000)
        #expect(keys.peek("key-23999", length: 1, now: start + 25) == .new)
        #expect(keys.peek("key-24000", length: 1, now: start + 25) == .replay(done))
        #expect(keys.peek("key-24999", length: 1, now: start + 25) == .replay(done))
    }
}
