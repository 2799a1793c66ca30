import UploadTesting
import Testing
import UploadClient
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
}
