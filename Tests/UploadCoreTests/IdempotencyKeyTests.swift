import Foundation
import Testing
import UploadCore

/// Each queued upload's `Idempotency-Key` is a random version 4 UUID in lower case, as `UUID()`
/// made it, and no two are the same.
@Suite struct IdempotencyKeyTests {
    @Test func keysAreVersion4UUIDsInLowerCase() throws {
        for _ in 0..<1000 {
            let key = UploadRequest.newIdempotencyKey()
            #expect(key.count == 36)
            #expect(key == key.lowercased())
            let uuid = try #require(UUID(uuidString: key), "\(key)")
            #expect(uuid.uuidString.lowercased() == key)
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4, "\(key)")
            #expect(bytes[8] >> 6 == 0b10, "\(key)")
        }
    }

    @Test func tenThousandKeysAreDistinctAndUseEveryRandomDigit() {
        let keys = (0..<10_000).map { _ in UploadRequest.newIdempotencyKey() }
        #expect(Set(keys).count == keys.count)
        // Every random position takes many values (a generator stuck on a word would not).
        let first = Set(keys.map { $0.prefix(8) })
        let last = Set(keys.map { $0.suffix(12) })
        #expect(first.count > 9_900 && last.count > 9_900)
    }
}
