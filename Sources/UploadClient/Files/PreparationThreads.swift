import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import UploadCore

/// Threads of their own for the work that reads a file's structure before an upload (opening,
/// checking, stripping the location, sniffing), each run with a time limit.
///
/// That work blocks: on a network file system that stopped answering (sshfs whose link died, a
/// hung NFS or FUSE mount) a `read` waits in the kernel for as long as the server is away, and
/// no signal ends it. Run on an event loop it would freeze every connection of that loop; run
/// here, the upload waiting for it is told after `limit` and goes on failing, while the thread
/// stays with the read (a thread is cheap next to a queue that stops). A thread stuck so is not
/// counted as free: the next preparation gets a new one, up to `maxThreads`; beyond that it
/// waits in line, within its own limit. Idle threads end after `idleLife`.
public final class PreparationThreads: @unchecked Sendable {
    public static let shared = PreparationThreads()

    /// How long a preparation may take before its upload is told it stalled: a photo's whole
    /// file is read at most (to strip its location), which takes seconds even from a slow disk.
    public static let defaultLimit: TimeAmount = .seconds(120)

    let maxThreads: Int
    let idleLife: TimeInterval
    private let condition = NSCondition()
    private var waiting: [@Sendable () -> Void] = []
    private var threads = 0
    private var idle = 0

    init(maxThreads: Int = 64, idleLife: TimeInterval = 30) {
        self.maxThreads = maxThreads
        self.idleLife = idleLife
    }

    /// Threads alive now (busy, stuck or idle).
    var threadCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return threads
    }

    /// Runs `work` on one of these threads and gives its result, or fails with
    /// `UploadFailure.Kind.preparationStalled` when it took longer than `limit` (what it then
    /// returns is dropped; a `FileSource` closes its descriptor when released). Cancelling the
    /// task gives up at once too.
    ///
    /// With `progress`, the limit is for each step: the clock starts again whenever the work
    /// counted one more (a batch of files, each read within the limit).
    public func run<T: Sendable>(
        limit: TimeAmount, clockOn eventLoop: EventLoop = MultiThreadedEventLoopGroup.singleton.any(), describing what: @autoclosure () -> String,
        progress: PreparationProgress? = nil,
        _ work: @escaping @Sendable () throws(UploadFailure) -> T
    ) async throws(UploadFailure) -> T {
        let description = what()
        let waiter = NIOLockedValueBox<CheckedContinuation<Result<T, UploadFailure>, Never>?>(nil)
        let timer = NIOLockedValueBox<Scheduled<Void>?>(nil)
        let finish: @Sendable (Result<T, UploadFailure>) -> Void = { result in
            let continuation = waiter.withLockedValue { box -> CheckedContinuation<Result<T, UploadFailure>, Never>? in
                defer { box = nil }
                return box
            }
            timer.withLockedValue { $0?.cancel() }
            continuation?.resume(returning: result)
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, UploadFailure>, Never>) in
                waiter.withLockedValue { $0 = continuation }
                let seconds = Double(limit.nanoseconds) / 1e9
                @Sendable func arm(at count: Int) {
                    let scheduled = eventLoop.scheduleTask(in: limit) {
                        if let now = progress?.count, now != count { return arm(at: now) }
                        finish(.failure(UploadFailure(.preparationStalled, Self.stalledMessage(description, seconds: seconds))))
                    }
                    timer.withLockedValue { $0 = scheduled }
                }
                arm(at: progress?.count ?? 0)
                submit {
                    do throws(UploadFailure) { finish(.success(try work())) } catch { finish(.failure(error)) }
                }
            }
        } onCancel: {
            finish(.failure(UploadFailure(.cancelled, "cancelled while preparing \(description)")))
        }
        return try result.get()
    }

    /// `check` of each item, in order, on one of these threads, each within `limit`: an item
    /// whose check does not end in time gets `stalled(item, why)` (its thread is left with it)
    /// and the items after it are checked on another. One thread hop for a whole batch.
    public func each<Item: Sendable, Result: Sendable>(
        _ items: [Item], limit: TimeAmount, path: @escaping @Sendable (Item) -> String,
        check: @escaping @Sendable (Item) -> Result, stalled: (Item, String) -> Result
    ) async -> [Result] {
        var results: [Result] = []
        results.reserveCapacity(items.count)
        while results.count < items.count {
            let rest = Array(items[results.count...])
            let checked = CheckedSoFar<Result>()
            let progress = PreparationProgress()
            do throws(UploadFailure) {
                try await run(limit: limit, describing: "", progress: progress) {
                    for item in rest {
                        guard checked.append(check(item)) else { return }
                        progress.step()
                    }
                }
                results += checked.stop()
            } catch {
                results += checked.stop()
                guard results.count < items.count else { break }
                let stuck = items[results.count]
                results.append(
                    stalled(
                        stuck,
                        error.kind == .preparationStalled
                            ? Self.stalledMessage(path(stuck), seconds: Double(limit.nanoseconds) / 1e9) : error.message))
            }
        }
        return results
    }

    /// What a preparation that took longer than `seconds` says.
    public static func stalledMessage(_ what: String, seconds: Double) -> String {
        "reading \(what) took longer than \(DurationText.describe(seconds)) and was given up "
            + "(a network file system that stopped answering, or a file made to hold a reader)"
    }

    private func submit(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        waiting.append(work)
        // Each waiting preparation has an idle thread or a new one: a thread that was idle may
        // be the one a stalled read holds next.
        if waiting.count > idle && threads < maxThreads {
            threads += 1
            let thread = Thread { [self] in serve() }
            thread.name = "uploadmon-prepare"
            thread.stackSize = 8 << 20  // as an event loop's: the parsers ran there
            thread.start()
        } else {
            condition.signal()
        }
        condition.unlock()
    }

    private func serve() {
        condition.lock()
        while true {
            while waiting.isEmpty {
                idle += 1
                let woken = condition.wait(until: Date(timeIntervalSinceNow: idleLife))
                idle -= 1
                if !woken && waiting.isEmpty {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let work = waiting.removeFirst()
            condition.unlock()
            work()
            condition.lock()
        }
    }
}

/// Steps of a long preparation done so far, for `PreparationThreads.run(progress:)`.
public final class PreparationProgress: Sendable {
    private let done = NIOLockedValueBox(0)
    public init() {}
    public var count: Int { done.withLockedValue { $0 } }
    public func step() { done.withLockedValue { $0 += 1 } }
}

/// The checks a batch's thread has made, until the caller stops taking them (the batch stalled
/// on an item: what the thread does after that is dropped).
final class CheckedSoFar<Result: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var checked: [Result] = []
    private var stopped = false

    /// Keeps one more; false once stopped.
    func append(_ result: Result) -> Bool {
        lock.withLock {
            guard !stopped else { return false }
            checked.append(result)
            return true
        }
    }

    /// What was checked; nothing more is kept.
    func stop() -> [Result] {
        lock.withLock {
            stopped = true
            return checked
        }
    }
}
