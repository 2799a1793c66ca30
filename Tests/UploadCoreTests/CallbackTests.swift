import NIOConcurrencyHelpers
import Testing
import UploadCore
import UploadTesting

/// A handler read and called for every event is called through the same stack at the ten
/// thousandth event as at the first, and a replacement swaps it instead of wrapping it.
@Suite struct CallbackTests {
    @Test func theTenThousandthCallIsAsShallowAsTheFirst() {
        let depths = NIOLockedValueBox<[Int]>([])
        let callback = Callback<Int> { _ in
            let depth = StackDepth.here()
            depths.withLockedValue { $0.append(depth) }
        }
        for n in 0..<10_000 { #expect(callback(n)) }
        let seen = depths.withLockedValue { $0 }
        #expect(seen.count == 10_000)
        #expect(Set(seen).count == 1, "depths went from \(seen.first ?? 0) to \(seen.last ?? 0)")
    }

    @Test func aReplacedHandlerIsSwappedNotNested() {
        let calls = NIOLockedValueBox<[String]>([])
        let depths = NIOLockedValueBox<[Int]>([])
        let callback = Callback<Void>()
        #expect(!callback(()))
        for round in 0..<5_000 {
            let name = "handler \(round)"
            callback.set { _ in
                calls.withLockedValue { $0.append(name) }
                let depth = StackDepth.here()
                depths.withLockedValue { $0.append(depth) }
            }
            callback(())
        }
        #expect(calls.withLockedValue { $0 }.last == "handler 4999")
        #expect(calls.withLockedValue { $0 }.count == 5_000, "only the newest handler runs")
        #expect(Set(depths.withLockedValue { $0 }).count == 1)
        callback.set(nil)
        #expect(!callback(()))
    }
}
