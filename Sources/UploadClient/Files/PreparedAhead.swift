import NIOConcurrencyHelpers
import UploadCore

/// Files made ready ahead of their uploads' turn (photos converted while the uploads before them
/// went), each until its attempt takes it. Bounded: at most `limit` at a time, done or not, so
/// what is held is a few converted photos whatever the queue's length; one whose upload never
/// came for it (cancelled, retried elsewhere) is let go once newer ones are asked for.
final class PreparedAhead: Sendable {
    struct Entry: Sendable {
        let expected: FileFingerprint?
        let task: Task<Result<HTTPUploadTransport.OpenedFile, UploadFailure>, Never>
        /// When it was asked for, in the order of asking.
        let order: Int
    }

    private let state = NIOLockedValueBox<(entries: [String: Entry], asked: Int)>(([:], 0))

    /// Starts `work` for `path` unless it is held already, or `limit` are (the oldest held that
    /// is done is let go for it first, as its upload did not come).
    func start(
        _ path: String, expected: FileFingerprint?, limit: Int,
        _ work: @escaping @Sendable () async -> Result<HTTPUploadTransport.OpenedFile, UploadFailure>
    ) {
        state.withLockedValue { state in
            guard state.entries[path] == nil else { return }
            if state.entries.count >= limit {
                // Ahead by more than `limit` means one was left behind: the oldest goes.
                guard let oldest = state.entries.min(by: { $0.value.order < $1.value.order }), state.asked - oldest.value.order > 4 * limit else { return }
                state.entries[oldest.key] = nil
            }
            state.asked += 1
            state.entries[path] = Entry(expected: expected, task: Task.detached { await work() }, order: state.asked)
        }
    }

    /// The file made ready for `path`, taken (nil when none was, or it was for other stamps).
    func take(_ path: String, expected: FileFingerprint?) -> Task<Result<HTTPUploadTransport.OpenedFile, UploadFailure>, Never>? {
        state.withLockedValue { state in
            guard let entry = state.entries.removeValue(forKey: path), entry.expected == expected else { return nil }
            return entry.task
        }
    }

    /// How many are held (done or not).
    var count: Int { state.withLockedValue { $0.entries.count } }

    /// What `task` makes ready, waited for until the waiting task is cancelled: then nil at
    /// once (the work goes on by itself, its result dropped), as a cancelled upload must not
    /// wait for a conversion it will not send.
    static func value(of task: Task<Result<HTTPUploadTransport.OpenedFile, UploadFailure>, Never>) async -> Result<
        HTTPUploadTransport.OpenedFile, UploadFailure
    >? {
        typealias Waiting = CheckedContinuation<Result<HTTPUploadTransport.OpenedFile, UploadFailure>?, Never>
        let wait = NIOLockedValueBox<(continuation: Waiting?, over: Bool)>((nil, false))
        /// The waiting continuation, once: whoever comes first (the work or the cancel) ends the wait.
        @Sendable func end() -> Waiting? {
            wait.withLockedValue { wait in
                defer { (wait.continuation, wait.over) = (nil, true) }
                return wait.over ? nil : wait.continuation
            }
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiting) in
                let over = wait.withLockedValue { wait in
                    if !wait.over { wait.continuation = continuation }
                    return wait.over
                }
                guard !over else { return continuation.resume(returning: nil) }
                Task {
                    let result = await task.value
                    end()?.resume(returning: result)
                }
            }
        } onCancel: {
            end()?.resume(returning: nil)
        }
    }
}
