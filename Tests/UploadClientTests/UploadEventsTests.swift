import UploadTesting
import Testing
@testable import UploadClient
import UploadCore

/// The queue's event sequence keeps the promises `AsyncStream` kept for it.
@Suite(.timeLimit(.minutes(1))) struct UploadEventsTests {
    func queued(_ n: Int) -> UploadEvent { .queued(UploadID(n), name: "f\(n)", totalBytes: Int64(n)) }

    @Test func eventsYieldedBeforeTheReaderComeInOrderThenTheEnd() async {
        let events = UploadEvents()
        for n in 1...2_500 { events.yield(queued(n)) }
        events.finish()
        events.yield(queued(0))
        var seen: [UploadEvent] = []
        for await event in events { seen.append(event) }
        #expect(seen == (1...2_500).map(queued))
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == nil, "still ended")
    }

    @Test func aWaitingReaderGetsEachEventFromManyProducersOnce() async {
        let events = UploadEvents()
        let reader = Task {
            var seen: [UploadEvent] = []
            for await event in events { seen.append(event) }
            return seen
        }
        await withTaskGroup(of: Void.self) { group in
            for producer in 0..<4 {
                group.addTask {
                    for n in 0..<1_000 {
                        events.yield(queued(producer * 1_000 + n))
                        if n % 100 == 0 { await Task.yield() }
                    }
                }
            }
        }
        events.finish()
        let seen = await reader.value
        #expect(seen.count == 4_000)
        #expect(Set(seen.map { if case .queued(let record) = $0 { record.id.rawValue } else { -1 } }) == Set(0..<4_000))
        // Each producer's own events stay in its order.
        for producer in 0..<4 {
            let mine = seen.compactMap { event -> Int? in
                guard case .queued(let record) = event, record.id.rawValue / 1_000 == producer else { return nil }
                return record.id.rawValue
            }
            #expect(mine == mine.sorted())
        }
    }

    @Test func aCancelledReaderGetsTheEndAndLaterEventsAreDropped() async {
        let events = UploadEvents()
        let started = AsyncStream.makeStream(of: Void.self)
        let reader = Task {
            var iterator = events.makeAsyncIterator()
            started.continuation.yield()
            return await iterator.next()
        }
        for await _ in started.stream { break }
        reader.cancel()
        #expect(await reader.value == nil)
        events.yield(queued(1))
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test func aReaderTakesWhatIsWaitingInBatchesInOrder() async {
        let events = UploadEvents()
        for n in 1...1_000 { events.yield(queued(n)) }
        events.finish()
        var batches: [[UploadEvent]] = []
        while let batch = await events.next(atMost: 256) { batches.append(batch) }
        #expect(batches.map(\.count) == [256, 256, 256, 232])
        #expect(batches.flatMap { $0 } == (1...1_000).map(queued))
    }

    /// What a reader gathering a batch adds without waiting: what is there, up to the bound,
    /// in order; nothing when nothing waits, nor at the end.
    @Test func theEventsWaitingAreTakenWithoutWaiting() async {
        let events = UploadEvents()
        #expect(events.waiting(atMost: 10).isEmpty)
        for n in 1...5 { events.yield(queued(n)) }
        #expect(events.waiting(atMost: 3) == (1...3).map(queued))
        #expect(events.waiting(atMost: 0).isEmpty)
        #expect(events.waiting(atMost: 10) == (4...5).map(queued))
        #expect(events.waiting(atMost: 10).isEmpty)
        events.yield(queued(6))
        events.finish()
        #expect(events.waiting(atMost: 10) == [queued(6)])
        #expect(events.waiting(atMost: 10).isEmpty)
        #expect(await events.next(atMost: 10) == nil)
    }

    @Test func aWaitingBatchReaderGetsTheFirstEventAndWhatCameWithIt() async {
        let events = UploadEvents()
        let reader = Task { await events.next(atMost: 10) }
        try? await Task.sleep(nanoseconds: 20_000_000)
        events.yield(queued(1))
        let batch = await reader.value
        #expect(batch?.first == queued(1))
        events.finish()
        #expect(await events.next(atMost: 10) == nil)
    }

    /// A reader that stays behind must not keep every event it has already read.
    @Test func eventsAlreadyReadAreDroppedWhileABacklogRemains() async {
        let events = UploadEvents()
        for n in 0..<4_000 { events.yield(queued(n)) }
        var iterator = events.makeAsyncIterator()
        for _ in 0..<3_000 { _ = await iterator.next() }
        #expect(events.retained <= 1_000 + 2 * 1_024, "\(events.retained) kept for 1,000 unread")
        for n in 4_000..<4_010 { events.yield(queued(n)) }
        var rest: [UploadEvent] = []
        events.finish()
        while let event = await iterator.next() { rest.append(event) }
        #expect(rest == (3_000..<4_010).map(queued))
        #expect(events.retained == 0)
    }
}
