import Foundation
import UploadClient
import UploadCore

/// A transport whose attempts finish only when the test says so, recording what ran. Tests
/// wait for attempts to start through continuations, never by polling.
final class FakeTransport: UploadTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var waiters: [String: [CheckedContinuation<AttemptResult, Never>]] = [:]
    /// Tests waiting for an attempt of a name to be in flight.
    private var watchers: [(name: String?, continuation: CheckedContinuation<Void, Never>)] = []
    private(set) var started: [String] = []
    private var running = 0
    private(set) var maxRunning = 0
    /// When false, cancelling an attempt does not end it: like a transport that already has
    /// its result when the cancel comes.
    let endsOnCancel: Bool

    init(endsOnCancel: Bool = true) {
        self.endsOnCancel = endsOnCancel
    }

    func perform(_ request: UploadRequest, observer: AttemptObserver) async -> AttemptResult {
        observer.started(request.url, 10)
        let name = request.uploadName
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                    started.append(name)
                    running += 1
                    maxRunning = max(maxRunning, running)
                    waiters[name, default: []].append(continuation)
                    let (match, rest) = (watchers.filter { $0.name == nil || $0.name == name }, watchers.filter { $0.name != nil && $0.name != name })
                    watchers = rest
                    return match.map(\.continuation)
                }
                for watcher in ready { watcher.resume() }
            }
        } onCancel: {
            if endsOnCancel { self.complete(name, with: .failed(UploadFailure(.cancelled, "cancelled"))) }
        }
        lock.withLock { running -= 1 }
        return result
    }

    var startedNames: [String] { lock.withLock { started } }
    var highestConcurrency: Int { lock.withLock { maxRunning } }

    /// Ends the oldest attempt of `name`; returns false when none is in flight.
    @discardableResult
    func complete(_ name: String, with outcome: UploadOutcome, response: UploadResponse? = nil) -> Bool {
        let continuation = lock.withLock { () -> CheckedContinuation<AttemptResult, Never>? in
            guard var list = waiters[name], !list.isEmpty else { return nil }
            let first = list.removeFirst()
            waiters[name] = list
            return first
        }
        continuation?.resume(returning: AttemptResult(outcome: outcome, response: response, bytesSent: 0))
        return continuation != nil
    }

    /// Returns once an attempt of `name` (of any name when nil) is in flight.
    func inFlight(_ name: String? = nil) async {
        await withCheckedContinuation { continuation in
            let now = lock.withLock { () -> Bool in
                let busy = name.map { !(waiters[$0] ?? []).isEmpty } ?? waiters.values.contains { !$0.isEmpty }
                if !busy { watchers.append((name, continuation)) }
                return busy
            }
            if now { continuation.resume() }
        }
    }

    /// Waits until `name` has an attempt in flight, then ends it.
    func finish(_ name: String, with outcome: UploadOutcome, response: UploadResponse? = nil) async {
        while true {
            await inFlight(name)
            if complete(name, with: outcome, response: response) { return }
        }
    }
}
