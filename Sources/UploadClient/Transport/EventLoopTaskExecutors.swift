import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// An event loop as a Swift Concurrency task executor: a task that prefers it runs its jobs on
/// the loop's thread, where the futures of the channels on that loop complete, so each await
/// on them resumes without waking another thread.
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: EventLoop

    init(_ loop: EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// One task executor per loop of a group, handed to attempts: the loop with the fewest running,
/// and among those the loop the caller is on. An attempt that ends frees a place on its loop,
/// and the queue starts the next one right there (no other thread woken), while attempts still
/// spread over all loops.
final class EventLoopTaskExecutors: Sendable {
    private let executors: [EventLoopTaskExecutor]
    /// Attempts running per executor.
    private let running: NIOLockedValueBox<[Int]>

    init(_ group: EventLoopGroup) {
        executors = group.makeIterator().map(EventLoopTaskExecutor.init)
        running = NIOLockedValueBox([Int](repeating: 0, count: executors.count))
    }

    func acquire() -> EventLoopTaskExecutor? {
        guard !executors.isEmpty else { return nil }
        let here = MultiThreadedEventLoopGroup.currentEventLoop
        let index = running.withLockedValue { running -> Int in
            let fewest = running.min() ?? 0
            let chosen =
                executors.indices.first { running[$0] == fewest && executors[$0].loop === here }
                ?? executors.indices.first { running[$0] == fewest }!
            running[chosen] += 1
            return chosen
        }
        return executors[index]
    }

    func release(_ executor: (any TaskExecutor)?) {
        guard let executor = executor as? EventLoopTaskExecutor,
            let index = executors.firstIndex(where: { $0 === executor })
        else { return }
        running.withLockedValue { $0[index] = max(0, $0[index] - 1) }
    }

    /// Attempts running per loop (for tests).
    var runningCounts: [Int] { running.withLockedValue { $0 } }
}
