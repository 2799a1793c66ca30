import NIOConcurrencyHelpers
import NIOCore

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

/// One task executor per loop of a group, handed out in turn.
final class EventLoopTaskExecutors: Sendable {
    private let executors: [EventLoopTaskExecutor]
    private let turn = NIOLockedValueBox(0)

    init(_ group: EventLoopGroup) {
        executors = group.makeIterator().map(EventLoopTaskExecutor.init)
    }

    func next() -> EventLoopTaskExecutor? {
        guard !executors.isEmpty else { return nil }
        return turn.withLockedValue { turn in
            defer { turn = (turn + 1) % executors.count }
            return executors[turn]
        }
    }
}
