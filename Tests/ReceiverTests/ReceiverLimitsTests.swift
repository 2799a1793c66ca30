import Foundation
import Glibc
@testable import Receiver
import Synchronization
import Testing
import UploadTesting

/// Set once by the test, read by a thread it started.
private final class StopFlag: Sendable {
    private let flag = Atomic(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

/// Timeouts, the connection cap and the stop, with short limits set the way `serve`'s flags set them.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ReceiverLimitsTests {
    static let short = ReceiverConfiguration.Limits(
        headerTimeout: .milliseconds(600), idleTimeout: .milliseconds(800), bodyStallTimeout: .milliseconds(700),
        maxConnections: 100, shutdownGrace: .milliseconds(300)
    )

    /// A head and the first bytes of a file part whose body then never continues.
    func stalledUpload(to port: Int) throws -> RawConnection {
        let connection = try RawConnection.connect(to: port)
        var upload = RawUpload(expect: nil, declaredLength: 1_000_000)
        upload.content = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + [UInt8](repeating: 1, count: 5000)
        connection.send(upload.head + upload.body.prefix(5200))
        return connection
    }

    @Test func aConnectionThatSendsNothingIsClosedQuietly() async throws {
        let receiver = try await ReceiverHarness.start(limits: Self.short)
        let connection = try RawConnection.connect(to: receiver.port)
        defer { connection.close() }
        let (text, closed) = try await offPool { connection.readUntilClosed(timeout: 20) }
        #expect(closed)
        #expect(text.isEmpty)
        #expect(receiver.logLines.isEmpty)
        await receiver.cleanUp()
    }

    @Test func aHeadTrickledByteByByteIsAnswered408AtTheHeaderTimeout() async throws {
        let receiver = try await ReceiverHarness.start(limits: Self.short)
        let connection = try RawConnection.connect(to: receiver.port)
        defer { connection.close() }
        let head = Array("POST /photo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ".utf8) + [UInt8](repeating: 97, count: 400)
        // One byte every 50 ms would keep an idle timer alive for 20 s; the head's own clock does not move.
        // The first byte goes at once (a connection that sends nothing in time is closed quietly, which
        // is another test), the rest from a thread of its own so a busy task pool cannot delay it.
        #expect(connection.send([head[0]]))
        let stop = StopFlag()
        let trickled = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            defer { trickled.signal() }
            for byte in head.dropFirst() where !stop.isSet {
                guard connection.send([byte]) else { return }
                usleep(50_000)
            }
        }
        let (text, closed) = try await offPool { connection.readUntilClosed(timeout: 30) }
        stop.set()
        try await offPool { trickled.wait() }  // before the socket closes and its number is reused
        #expect(text.hasPrefix("HTTP/1.1 408 "), "\(text)")
        #expect(text.contains("the request head did not arrive within 0.6 s"))
        #expect(closed)
        #expect(receiver.logLines.map(\.status) == [408])
        await receiver.cleanUp()
    }

    @Test func aKeptAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        let receiver = try await ReceiverHarness.start(limits: Self.short)
        let connection = try RawConnection.connect(to: receiver.port)
        defer { connection.close() }
        let upload = RawUpload(expect: nil)
        connection.send(upload.head + upload.body)
        let (text, closed) = try await offPool { connection.readUntilClosed(timeout: 30) }
        #expect(text.hasPrefix("HTTP/1.1 200 OK"), "\(text)")
        #expect(!text.lowercased().contains("connection: close"))
        #expect(closed)
        #expect(receiver.storedNames() == ["raw.png"])
        await receiver.cleanUp()
    }

    @Test func aBodyThatStopsIsAbandonedAndItsPartialFileRemoved() async throws {
        let receiver = try await ReceiverHarness.start(limits: Self.short)
        let connection = try stalledUpload(to: receiver.port)
        defer { connection.close() }
        let (_, closed) = try await offPool { connection.readUntilClosed(timeout: 30) }
        #expect(closed)
        #expect(try await eventually { receiver.logLines.count == 1 })
        let line = receiver.logLines.first
        #expect(line?.status == 408)
        #expect(line?.error == "no body data from the client for 0.7 s; the upload was abandoned")
        #expect(receiver.storedNames().isEmpty)
        await receiver.cleanUp()
    }

    @Test func connectionsOverTheCapAreAnswered503AtOnce() async throws {
        var limits = Self.short
        limits.headerTimeout = .seconds(60)
        limits.maxConnections = 2
        let receiver = try await ReceiverHarness.start(limits: limits)
        let first = try RawConnection.connect(to: receiver.port)
        let second = try RawConnection.connect(to: receiver.port)
        defer { second.close() }
        // Both are open (the receiver has read their first bytes) before the third arrives.
        first.send(Array("P".utf8))
        second.send(Array("P".utf8))
        #expect(try await eventually { receiver.openConnections == 2 })
        let third = try RawConnection.connect(to: receiver.port)
        let (text, closed) = try await offPool { third.readUntilClosed(timeout: 20) }
        third.close()
        #expect(text.hasPrefix("HTTP/1.1 503 "), "\(text)")
        #expect(text.contains("Retry-After: 1"))
        #expect(text.contains("limit of 2 open connections"))
        #expect(closed)
        // A place frees up when one closes.
        first.close()
        var answer = ""
        for _ in 0..<100 where !answer.hasPrefix("HTTP/1.1 200") {
            let next = try RawConnection.connect(to: receiver.port)
            let upload = RawUpload(expect: nil)
            next.send(upload.head + upload.body)
            answer = try await offPool { next.read(until: "}", timeout: 20) }
            next.close()
            if !answer.hasPrefix("HTTP/1.1 200") { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        await receiver.cleanUp()
    }

    @Test func stoppingCutsAStalledUploadAfterTheGracePeriodAndRefusesNewConnections() async throws {
        var limits = Self.short
        limits.bodyStallTimeout = .seconds(600)
        let receiver = try await ReceiverHarness.start(limits: limits)
        let connection = try stalledUpload(to: receiver.port)
        defer { connection.close() }
        #expect(try await eventually { TestFiles.openFiles(in: receiver.directory) == 1 })
        // Without the cut this waits for the client, which never sends the rest.
        await receiver.stop()
        #expect(TestFiles.openFiles(in: receiver.directory) == 0)
        #expect(receiver.logLines.map(\.status) == [503])
        #expect(receiver.logLines.first?.error == "the receiver is stopping; the upload was abandoned")
        #expect(receiver.storedNames().isEmpty)
        #expect(throws: (any Error).self) { try RawConnection.connect(to: receiver.port) }
        await receiver.cleanUp()
    }

    @Test func theCapStaysBelowWhatTheDescriptorLimitAllows() {
        #expect(ConnectionBudget.cap(requested: 1024, descriptors: 1024) == 480)
        #expect(ConnectionBudget.cap(requested: 1024, descriptors: 1_048_576) == 1024)
        #expect(ConnectionBudget.cap(requested: 1024, descriptors: 10) == 1)
    }
}
