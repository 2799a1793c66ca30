import Foundation
import NIOCore
import NIOPosix
import Testing
@testable import UploadClient
import UploadCore

/// The threads preparations run on: a stalled one is given up at its limit without holding
/// the next, and a thread held so is not handed more work.
@Suite struct PreparationThreadsTests {
    /// What `work` on `threads` within `limit` gave: its value or its failure.
    static func outcome(
        _ threads: PreparationThreads, limit: TimeAmount, _ name: String,
        _ work: @escaping @Sendable () throws(UploadFailure) -> Int
    ) async -> Result<Int, UploadFailure> {
        do throws(UploadFailure) {
            return .success(try await threads.run(limit: limit, clockOn: MultiThreadedEventLoopGroup.singleton.any(), describing: name, work))
        } catch {
            return .failure(error)
        }
    }

    @Test func aStalledPreparationIsGivenUpAndTheNextRunsBesideIt() async throws {
        let threads = PreparationThreads(maxThreads: 4, idleLife: 30)
        let gate = DispatchSemaphore(value: 0)
        for name in ["a.jpg", "b.jpg"] {
            let held = await Self.outcome(threads, limit: .milliseconds(200), name) {
                gate.wait()
                return 1
            }
            guard case .failure(let failure) = held else {
                Issue.record("a held preparation came back: \(held)")
                return
            }
            #expect(failure.kind == .preparationStalled)
            #expect(failure.message.hasPrefix("reading \(name) took longer than 0.2s"), "\(failure.message)")
        }
        // Two threads are held; the next work gets a third and comes back with its result.
        let answer = await Self.outcome(threads, limit: .seconds(60), "c.jpg") { 42 }
        #expect(try answer.get() == 42)
        #expect(threads.threadCount == 3)
        // A failure of the work is its own.
        let failed = await Self.outcome(threads, limit: .seconds(60), "d.jpg") { () throws(UploadFailure) -> Int in throw UploadFailure(.fileError, "gone") }
        #expect(failed == .failure(UploadFailure(.fileError, "gone")))
        gate.signal()
        gate.signal()

        // At the limit: every thread held, the work waits in line and is given up at its own limit.
        let full = PreparationThreads(maxThreads: 1, idleLife: 30)
        let held = DispatchSemaphore(value: 0)
        let first = await Self.outcome(full, limit: .milliseconds(100), "e.jpg") {
            held.wait()
            return 0
        }
        #expect((try? first.get()) == nil)
        let waiting = await Self.outcome(full, limit: .milliseconds(100), "f.jpg") { 0 }
        guard case .failure(let failure) = waiting else {
            Issue.record("ran on a held thread: \(waiting)")
            return
        }
        #expect(failure.kind == .preparationStalled)
        held.signal()
    }
}
