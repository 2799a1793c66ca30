import Foundation

/// Runs blocking work (waiting for a subprocess, sleeping) on a thread of its own, so it never
/// occupies Swift concurrency's cooperative pool, which has one thread per core: on a 2-core
/// machine two blocked tests would otherwise starve the in-process receiver they are waiting for.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try work() })
        }
    }
}
