import NIOCore
import NIOPosix
import Testing
@testable import UploadClient

/// Attempts go to the loop with the fewest running, preferring the caller's own loop, so the
/// next upload starts where the last one ended without waking another thread.
@Suite struct EventLoopTaskExecutorsTests {
    @Test func attemptsSpreadOverTheLoopsAndAFreedPlaceIsTakenWhereItWasFreed() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let executors = EventLoopTaskExecutors(group)
        // From outside the group: one each, then two each.
        let first = try #require(executors.acquire())
        let second = try #require(executors.acquire())
        #expect(first !== second)
        _ = executors.acquire()
        _ = executors.acquire()
        #expect(executors.runningCounts == [2, 2])
        // An attempt on `second`'s loop ends; on that loop, the next one goes there too.
        executors.release(second)
        let next = try await second.loop.submit { executors.acquire() }.get()
        #expect(next === second)
        #expect(executors.runningCounts == [2, 2])
        // On a tie the caller's loop wins, whichever it is.
        executors.release(first)
        executors.release(second)
        let onFirst = try await first.loop.submit { executors.acquire() }.get()
        #expect(onFirst === first)
        // Releasing something that is not ours, or nothing, changes nothing.
        executors.release(nil)
        #expect(executors.runningCounts == [2, 1])
        try await group.shutdownGracefully()
    }

    @Test func anAttemptsTaskRunsOnTheLoopItWasGiven() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let executors = EventLoopTaskExecutors(group)
        for _ in 0..<4 {
            let executor = try #require(executors.acquire())
            let ranOn = await Task(executorPreference: executor) {
                await Task.yield()
                return executor.loop.inEventLoop
            }.value
            #expect(ranOn)
        }
        try await group.shutdownGracefully()
    }
}
