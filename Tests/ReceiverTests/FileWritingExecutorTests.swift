import Foundation
import Receiver
import Testing
import UploadTesting

@Suite struct FileWritingExecutorTests {
    @Test func workPreferringTheExecutorRunsOnItsThreads() async throws {
        let executor = FileWritingExecutor(threads: 2)
        let before = executor.isCurrent
        let (first, afterSuspending) = await withTaskExecutorPreference(executor) {
            let first = executor.isCurrent
            try? await Task.sleep(for: .milliseconds(10))
            return (first, executor.isCurrent)
        }
        #expect(!before)
        #expect(first)
        #expect(afterSuspending)
    }

    /// As many blocking writers as the cooperative pool has threads: were they on the pool, a
    /// plain task would wait for them; on the executor's threads it runs at once.
    @Test func blockingWorkOnTheExecutorLeavesTheCooperativePoolFree() async throws {
        let writers = ProcessInfo.processInfo.activeProcessorCount
        let executor = FileWritingExecutor(threads: writers)
        let blocked = Countdown(writers)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<writers {
                group.addTask(executorPreference: executor) {
                    blocked.arrive()
                    usleep(1_500_000)
                }
            }
            await blocked.wait()
            let ranAt = await Task.detached { ContinuousClock.now }.value
            // Measured from the moment the last writer began blocking.
            #expect(ranAt - blocked.lastArrival < .milliseconds(750))
        }
    }
}

/// Lets a test wait until `count` blocking jobs have begun.
final class Countdown: @unchecked Sendable {
    private let condition = NSCondition()
    private var remaining: Int
    private var last = ContinuousClock.now

    init(_ count: Int) { remaining = count }

    var lastArrival: ContinuousClock.Instant { condition.withLock { last } }

    func arrive() {
        condition.lock()
        remaining -= 1
        last = .now
        condition.broadcast()
        condition.unlock()
    }

    func wait() async {
        while (condition.withLock { remaining > 0 }) {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
