import Foundation
import UploadClient
import UploadCore

/// A transport whose attempts finish only when the test says so, recording what ran and when.
final class FakeTransport: UploadTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var waiters: [String: [CheckedContinuation<AttemptResult, Never>]] = [:]
    private(set) var started: [String] = []
    private var running = 0
    private(set) var maxRunning = 0

    func perform(_ request: UploadRequest, observer: AttemptObserver) async -> AttemptResult {
        observer.started(request.url, 10)
        let name = request.uploadName
        lock.withLock {
            started.append(name)
            running += 1
            maxRunning = max(maxRunning, running)
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                lock.withLock { waiters[name, default: []].append(continuation) }
            }
        } onCancel: {
            self.complete(name, with: .failed(UploadFailure(.cancelled, "cancelled")))
        }
        lock.withLock { running -= 1 }
        return result
    }

    var startedNames: [String] { lock.lock(); defer { lock.unlock() }; return started }
    var highestConcurrency: Int { lock.lock(); defer { lock.unlock() }; return maxRunning }

    /// Ends the oldest attempt of `name`; returns false when none is waiting yet.
    @discardableResult
    func complete(_ name: String, with outcome: UploadOutcome, response: UploadResponse? = nil) -> Bool {
        lock.lock()
        guard var list = waiters[name], !list.isEmpty else { lock.unlock(); return false }
        let continuation = list.removeFirst()
        waiters[name] = list
        lock.unlock()
        continuation.resume(returning: AttemptResult(outcome: outcome, response: response, bytesSent: 0))
        return true
    }

    /// Waits until `name` has an attempt in flight, then ends it.
    func finish(_ name: String, with outcome: UploadOutcome, response: UploadResponse? = nil) async {
        while !complete(name, with: outcome, response: response) {
            try? await Task.sleep(for: .milliseconds(2))
        }
    }
}
