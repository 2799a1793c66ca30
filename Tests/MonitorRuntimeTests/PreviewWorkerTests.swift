import Dispatch
import Foundation
import ImagePreview
import Monitor
@testable import MonitorRuntime
import NIOConcurrencyHelpers
import Testing

/// A preview whose file never answers (a network file system gone) holds neither the pane nor
/// the previews after it.
@Suite(.timeLimit(.minutes(1))) struct PreviewWorkerTests {
    final class Delivered: Sendable {
        private let box = NIOLockedValueBox<[(String, String)]>([])
        func add(_ path: String, _ what: String) { box.withLockedValue { $0.append((path, what)) } }
        func of(_ path: String) -> [String] { box.withLockedValue { $0.filter { $0.0 == path }.map(\.1) } }

        /// Waits (up to `seconds`) until `path` got something.
        func wait(for path: String, seconds: Double = 20) async throws -> [String] {
            for _ in 0..<Int(seconds * 50) {
                if !of(path).isEmpty { return of(path) }
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            return of(path)
        }
    }

    /// A worker whose decode of a file named stuck… waits on the semaphore (a read that never
    /// returns) and of any other answers at once; what it delivers, recorded.
    static func worker(limit: Double) -> (PreviewWorker, Delivered, DispatchSemaphore) {
        let held = DispatchSemaphore(value: 0)
        let delivered = Delivered()
        let decode: PreviewWorker.Decode = { request, _, _ in
            if request.path.contains("stuck") { held.wait() }
            return .failure(.cannotPreview("decoded \(request.path)", nil))
        }
        let worker = PreviewWorker(limit: limit, decode: decode) { request, result in
            if case .failure(let problem) = result { delivered.add(request.path, problem.description) }
        }
        return (worker, delivered, held)
    }

    static func request(_ path: String) -> PreviewRequest { PreviewRequest(path: path, size: 1, columns: 40, rows: 10) }

    @Test func aDecodeThatNeverReturnsIsGivenUpAndTheNextIsDecodedBesideIt() async throws {
        let (worker, delivered, held) = Self.worker(limit: 0.3)
        defer { for _ in 0..<4 { held.signal() } }
        // The cursor rests on it: after the limit the pane says why.
        worker.request(Self.request("/mnt/stuck-1.jpg"))
        let said = try await delivered.wait(for: "/mnt/stuck-1.jpg")
        #expect(said == ["cannot preview: reading it took longer than 0.3s (a network file system that stopped answering?)"], "\(said)")
        // The next file is decoded on a new lane.
        worker.request(Self.request("/photos/a.jpg"))
        #expect(try await delivered.wait(for: "/photos/a.jpg") == ["cannot preview: decoded /photos/a.jpg"])
    }

    @Test func movingOnFromAStuckDecodeDoesNotWaitForItsLimit() async throws {
        // A limit far away: what moves the next preview on is the cancelled decode not stopping.
        let (worker, delivered, held) = Self.worker(limit: 600)
        defer { for _ in 0..<4 { held.signal() } }
        worker.request(Self.request("/mnt/stuck-2.jpg"))
        try await Task.sleep(nanoseconds: 100_000_000)
        worker.request(Self.request("/photos/b.jpg"))
        #expect(try await delivered.wait(for: "/photos/b.jpg") == ["cannot preview: decoded /photos/b.jpg"])
        #expect(delivered.of("/mnt/stuck-2.jpg").isEmpty, "the cursor left it: nothing is said of it")
        // And the worker goes on as usual after.
        worker.request(Self.request("/photos/c.jpg"))
        #expect(try await delivered.wait(for: "/photos/c.jpg") == ["cannot preview: decoded /photos/c.jpg"])
    }
}
