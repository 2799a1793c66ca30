import Foundation
import NIOConcurrencyHelpers
import Testing
@testable import UploadAgent
import UploadClient
import UploadCore
import UploadJournal
import UploadTesting

/// One file that stops the agent while it is prepared (a crafted photo that crashes a parser)
/// must not stop every later start: the agent keeps which uploads it is preparing where the
/// next agent finds them, and an upload that stopped it twice is left out with the reason.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PreparationWatchTests {
    @Test func theFileSaysWhatIsBeingPreparedAndCountsStops() throws {
        let path = TestFiles.makeTemporaryDirectory("preparing") + "/preparing"
        let watch = try PreparationWatch(path: path)
        #expect(watch.stoppedDuring.isEmpty)
        watch.begin(UploadID(7))
        watch.begin(UploadID(9))
        watch.end(UploadID(9))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "7 0\n")
        // An agent that stopped here: the next one counts upload 7's first stop.
        let next = try PreparationWatch(path: path)
        #expect(next.stoppedDuring == [UploadID(7): 1])
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "", "what the last agent left is taken once")
        next.begin(UploadID(7))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "7 1\n")
        #expect(try PreparationWatch(path: path).stoppedDuring == [UploadID(7): 2])
        // What cannot be read is skipped, never trusted.
        #expect(PreparationWatch.parse(Array("x 1\n-3 0\n5\n8 99999999999999999999\n4 2\n".utf8)) == [UploadID(4): 3])
    }

    /// The watch is told from the attempt's start to its first request, and after an attempt
    /// that ends before one.
    @Test func anAttemptIsWatchedUntilItsFirstRequest() async throws {
        let path = TestFiles.makeTemporaryDirectory("preparing-attempt") + "/preparing"
        let watch = try PreparationWatch(path: path)
        let seen = NIOLockedValueBox<[String]>([])
        struct Inner: UploadTransport {
            let path: String
            let seen: NIOLockedValueBox<[String]>
            let starts: Bool
            func perform(_ request: UploadRequest, observer: AttemptObserver) async -> AttemptResult {
                let during = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "?"
                seen.withLockedValue { $0.append(during) }
                if starts {
                    observer.started("http://h/x", 1)
                    seen.withLockedValue { $0.append((try? String(contentsOfFile: path, encoding: .utf8)) ?? "?") }
                }
                return AttemptResult(outcome: .failed(UploadFailure(.fileError, "x")), response: nil, bytesSent: 0)
            }
        }
        let request = try UploadRequest.forPath("/x.jpg", url: "http://h/x")
        for starts in [true, false] {
            let watched = PreparationWatchedTransport(inner: Inner(path: path, seen: seen, starts: starts), id: UploadID(3), watch: watch)
            _ = await watched.perform(request, observer: AttemptObserver())
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "")
        }
        #expect(seen.withLockedValue { $0 } == ["3 0\n", "", "3 0\n"])
    }

    /// The journal as an agent left it that died twice preparing `bad.jpg`: the next start
    /// fails that upload with the reason and sends the other.
    @Test func anUploadThatStoppedTheAgentTwiceIsLeftOutAndTheQueueGoesOn() async throws {
        let receiver = try await ReceiverHarness.start()
        let root = receiver.root
        let paths = StatePaths(stateDirectory: root + "/state", runtimeDirectory: root + "/run")
        try paths.prepare()
        var ids: [UploadID] = []
        do {
            let journal = try Journal(path: paths.journal)
            for name in ["bad.jpg", "good.jpg", "again.jpg"] {
                let file = try TestFiles.writeImage(at: root + "/" + name, size: 2_000)
                let fingerprint = try #require(FileFingerprint.of(path: file))
                let id = try journal.add(
                    [
                        NewUpload(
                            request: try UploadRequest.forPath(file, url: receiver.url), fingerprint: fingerprint,
                            settings: TransportSettings(), origin: "test")
                    ], at: Date())[0].id
                try journal.record(.started(id, attempt: 1, url: receiver.url, totalBytes: fingerprint.size), at: Date())
                ids.append(id)
            }
        }
        // bad.jpg stopped an agent before, and this one; again.jpg stopped only this one.
        try "\(ids[0].rawValue) 1\n\(ids[2].rawValue) 0\n".write(toFile: paths.preparing, atomically: false, encoding: .utf8)
        let running = try await RunningAgent.start(root: root)
        try await running.waitFinished(ids)
        let bad = try #require(try running.journal.snapshot(ids[0]))
        #expect(bad.state == .failed)
        guard case .failed(let failure)? = bad.outcome else {
            Issue.record("\(String(describing: bad.outcome))")
            return
        }
        #expect(failure.message.contains("stopped 2 times while preparing this file"), "\(failure.message)")
        #expect(try running.journal.snapshot(ids[1])?.state == .succeeded)
        #expect(try running.journal.snapshot(ids[2])?.state == .succeeded, "one stop is tried once more")
        #expect(Set(receiver.storedNames()) == ["good.jpg", "again.jpg"])
        #expect(try String(contentsOfFile: paths.preparing, encoding: .utf8) == "")
        await running.stop()
        await receiver.cleanUp()
    }
}

/// What a monitor attaching after a large batch is given: every failure (not only those among
/// the recent uploads) and the totals of what finished while it was away, counted over the
/// whole log.
@Suite(.serialized, .timeLimit(.minutes(2))) struct LargeSnapshotTests {
    @Test func theSnapshotCarriesEveryFailureAndTheAwayTotals() async throws {
        let root = TestFiles.makeTemporaryDirectory("large-snapshot")
        let paths = StatePaths(stateDirectory: root + "/state", runtimeDirectory: root + "/run")
        try paths.prepare()
        let journal = try Journal(path: paths.journal)
        let file = try TestFiles.writeImage(at: root + "/a.jpg", size: 100)
        let fingerprint = try #require(FileFingerprint.of(path: file))
        let request = try UploadRequest.forPath(file, url: "http://127.0.0.1:9/photo")
        let added = try journal.add(
            (0..<1_500).map { _ in NewUpload(request: request, fingerprint: fingerprint, settings: TransportSettings(), origin: "t") },
            at: Date())
        let cursor = try journal.lastSequence()
        let failures: Set<Int> = [1, 2, 600, 1_400]
        for record in added {
            let failed = failures.contains(record.id.rawValue)
            _ = try journal.record(.finished(record.id, failed ? .failed(UploadFailure(.connectionLost, "reset")) : .answered(status: 200)), at: Date())
        }
        let agent = try Agent(configuration: AgentConfiguration(paths: paths, idleExitSeconds: 0), journal: journal)
        let snapshot = try await agent.makeSnapshot(after: cursor)
        #expect(snapshot.uploads.count == 1_000 && snapshot.uploads.first?.id == UploadID(501))
        #expect(snapshot.earlierFailures?.map(\.id.rawValue) == [1, 2])
        #expect(snapshot.awaySucceeded == 1_496 && snapshot.awayFailed == 4)
        let fresh = try await agent.makeSnapshot(after: nil)
        #expect(fresh.awaySucceeded == nil)
        await agent.shutdown()
    }
}
