import Foundation
import NIOCore

/// Where the receiver's blocking file writes run: a few threads of its own, so a slow disk
/// stalls uploads but never the cooperative pool that every other task of the process (other
/// requests, the server's answers, the monitor) runs on. On a 2-core machine that pool has two
/// threads; two uploads writing to a slow disk would otherwise hold both.
///
/// Used as a task executor preference around a request body's loop: the loop and the
/// `write(2)` calls it makes run here; jobs run one at a time per thread, first come first served.
/// The threads live as long as the process (they hold the executor): make one and keep it.
public final class FileWritingExecutor: TaskExecutor, @unchecked Sendable {
    public static let shared = FileWritingExecutor(threads: max(4, ProcessInfo.processInfo.activeProcessorCount))

    /// Guards `jobs`; workers wait on it.
    private let condition = NSCondition()
    private var jobs = CircularBuffer<UnownedJob>(initialCapacity: 64)

    public init(threads: Int) {
        precondition(threads > 0, "an executor needs at least one thread")
        for index in 0..<threads {
            let thread = Thread { [self] in
                Thread.current.threadDictionary[Self.marker] = ObjectIdentifier(self).hashValue
                work()
            }
            thread.name = "uploadmon-file-io-\(index)"
            thread.start()
        }
    }

    /// Whether the calling thread is one of this executor's.
    public var isCurrent: Bool {
        Thread.current.threadDictionary[Self.marker] as? Int == ObjectIdentifier(self).hashValue
    }

    private static let marker = "uploadmon.FileWritingExecutor"

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
