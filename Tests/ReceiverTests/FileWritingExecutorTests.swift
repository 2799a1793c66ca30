import Foundation
import Receiver
import Testing
import UploadTesting

@Suite(.timeLimit(.minutes(5))) struct FileWritingExecutorTests {
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
    /// plain task would wait for them; on the executor's threads it runs while they block. The
    /// writers block until that task has run (a minute at most, so a broken executor fails the
    /// test rather than hanging it), not for a fixed time: other tests keeping the pool busy for
    /// a while must not make it fail.
    @Test func blockingWorkOnTheExecutorLeavesTheCooperativePoolFree() async throws {
        let writers = ProcessInfo.processInfo.activeProcessorCount
        let executor = FileWritingExecutor(threads: writers)
        let blocked = Countdown(writers)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<writers {
                group.addTask(executorPreference: executor) {
                    blocked.arrive()
                    blocked.waitForRelease(seconds: 60)
                    blocked.leave()
                }
            }
            await blocked.wait()
            // Had the writers taken the pool's threads, this task could run only once one of them left.
            let writersStillBlocked = await Task.detached { () -> Int in
                let count = blocked.stillBlocked
                blocked.release()
                return count
            }.value
            #expect(writersStillBlocked == writers)
        }
    }
}

/// Lets a test wait until `count` blocking jobs have begun.
final class Countdown: @unchecked Sendable {
    private let condition = NSCondition()
    private var remaining: Int
    private var blocked = 0

    init(_ count: Int) { remaining = count }

    /// Jobs that began and have not left yet.
    var stillBlocked: Int { condition.withLock { blocked } }

    func arrive() {
        condition.lock()
        remaining -= 1
        blocked += 1
        condition.broadcast()
        condition.unlock()
    }

    func leave() {
        condition.withLock { blocked -= 1 }
    }

    private var released = false

    /// Blocks the calling thread until `release()`, or `seconds` at most.
    func waitForRelease(seconds: Double) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        while !released, condition.wait(until: deadline) {}
        condition.unlock()
    }

    func release() {
        condition.lock()
        released = true
        condition.broadcast()
        condition.unlock()
    }

    func wait() async {
        while (condition.withLock { remaining > 0 }) {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
