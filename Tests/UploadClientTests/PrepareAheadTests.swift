import Foundation
import PreviewModel
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// Photos to convert are converted ahead of their turn, while the uploads before them wait on
/// the network, and each attempt takes its own: a batch takes the longer of converting and
/// sending, not both (`bench/convert-send` measures that; this checks the mechanism).
@Suite(.serialized, .timeLimit(.minutes(2))) struct PrepareAheadTests {
    final class Gate: @unchecked Sendable {
        let opened = DispatchSemaphore(value: 0)
        let lock = NSLock()
        var types: [String] = []
        func saw(_ request: String) {
            lock.lock()
            defer { lock.unlock() }
            types.append(request.contains("Content-Type: image/jpeg") ? "jpeg" : "other")
        }
        var seen: [String] {
            lock.lock()
            defer { lock.unlock() }
            return types
        }
    }

    @Test func theNextPhotosAreConvertedWhileTheFirstIsHeldAndEachAttemptTakesItsOwn() async throws {
        let root = TestFiles.makeTemporaryDirectory("prepare-ahead")
        defer { try? FileManager.default.removeItem(atPath: root) }
        var paths: [String] = []
        for i in 0..<4 {
            let path = root + "/shot\(i).png"
            try PictureWriter.png(RGBImage(width: 400, height: 300, rgb: [UInt8](repeating: UInt8(40 * i), count: 400 * 300 * 3)), to: path)
            paths.append(path)
        }
        let gate = Gate()
        let server = try RawServer { connection in
            gate.saw(connection.read(until: "--\r\n", timeout: 10))
            gate.opened.wait()
            connection.write("HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            connection.close()
        }
        defer { server.stop() }
        var settings = TransportSettings()
        settings.conversion = PhotoConversion(format: .jpeg, maxDimension: 200)
        let transport = try HTTPUploadTransport(settings: settings)
        let queue = UploadQueue(transport: transport, concurrency: 1)
        for path in paths {
            await queue.enqueue(UploadRequest(source: .file(path: path), url: server.url, uploadName: (path as NSString).lastPathComponent), totalBytes: nil)
        }
        await queue.finishWhenDrained()
        let collector = Task {
            var events: [UploadEvent] = []
            for await event in queue.events { events.append(event) }
            return events
        }
        // The first is held by the server; the next ones are made ready meanwhile.
        #expect(try await eventually { gate.seen.count == 1 }, "the first upload reaches the server")
        let ahead = min(HTTPUploadTransport.aheadLimit, 3)
        #expect(try await eventually { transport.ahead.count == ahead }, "the next \(ahead) photos are made ready ahead")
        for _ in paths { gate.opened.signal() }
        let events = await collector.value
        #expect(events.count { if case .finished(_, .answered(201)) = $0 { true } else { false } } == 4, "\(events)")
        #expect(gate.seen == ["jpeg", "jpeg", "jpeg", "jpeg"])
        // Every photo made ready was taken by its own attempt.
        #expect(transport.ahead.count == 0)
        try await transport.shutdown()
    }

    /// An attempt cancelled while its photo is still being converted ahead stops waiting at
    /// once; the conversion's result, when it comes, is dropped. A finished one is handed over.
    @Test func aCancelledAttemptDoesNotWaitForItsConversion() async throws {
        let slow = Task<Result<HTTPUploadTransport.OpenedFile, UploadFailure>, Never>.detached {
            try? await Task.sleep(for: .seconds(600))
            return .failure(UploadFailure(.other, "late"))
        }
        defer { slow.cancel() }
        let waiter = Task { await PreparedAhead.value(of: slow) }
        try await Task.sleep(for: .milliseconds(50))
        waiter.cancel()
        let got = await waiter.value
        #expect(got == nil, "no result: the wait ended with the cancel")
        let cancelledFirst = Task { () async -> Bool in
            withUnsafeCurrentTask { $0?.cancel() }
            return await PreparedAhead.value(of: slow) == nil
        }
        #expect(await cancelledFirst.value, "cancelled before it waits: no wait at all")
        let quick = Task<Result<HTTPUploadTransport.OpenedFile, UploadFailure>, Never>.detached { .failure(UploadFailure(.other, "quick")) }
        guard case .failure(let failure)? = await PreparedAhead.value(of: quick) else {
            Issue.record("the finished work is handed over")
            return
        }
        #expect(failure.message == "quick")
    }
}
