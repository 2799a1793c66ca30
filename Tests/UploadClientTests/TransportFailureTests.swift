import Foundation
import Glibc
import NIOCore
import Testing
import UploadClient
import UploadCore
import UploadTesting

/// Reads a request head and a Content-Length body from a raw connection.
func readRequest(_ connection: RawConnection) -> CapturedRequest {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        if let end = data.firstRange(of: Array("\r\n\r\n".utf8)) {
            let head = String(decoding: data[..<end.lowerBound], as: UTF8.self)
            var request = CapturedRequest(head: head, body: Array(data[end.upperBound...]))
            let length = request.contentLength ?? 0
            while request.body.count < length {
                let n = Glibc.read(connection.fd, &buffer, buffer.count)
                if n <= 0 { break }
                request.body.append(contentsOf: buffer[0..<n])
            }
            return request
        }
        let n = Glibc.read(connection.fd, &buffer, buffer.count)
        if n <= 0 { return CapturedRequest(head: String(decoding: data, as: UTF8.self), body: []) }
        data.append(contentsOf: buffer[0..<n])
    }
}

/// A raw server that reads each request, answers with `status` (plus `headers` and `body`) and closes.
func answeringServer(
    _ status: String, headers: [String] = [], body: String = "", captures: Captures? = nil
) throws -> RawServer {
    try RawServer { connection in
        let request = readRequest(connection)
        captures?.add(request)
        let head = (["HTTP/1.1 \(status)"] + headers + ["Content-Length: \(body.utf8.count)", "Connection: close"]).joined(separator: "\r\n")
        connection.write(head + "\r\n\r\n" + body)
        connection.close()
    }
}

/// A raw server that reads each request whole and never answers; it closes after `seconds`.
func silentServer(closingAfter seconds: Double) throws -> RawServer {
    try RawServer { connection in
        _ = readRequest(connection)
        Thread.sleep(forTimeInterval: seconds)
        connection.close()
    }
}

final class Captures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [CapturedRequest] = []
    func add(_ r: CapturedRequest) {
        lock.lock()
        items.append(r)
        lock.unlock()
    }
    var all: [CapturedRequest] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct TransportFailureTests {
    let folder = TestFiles.makeTemporaryDirectory("failures")

    @Test(arguments: [0, 1, 262_143, 262_144, 262_145, 3_000_000])
    func contentLengthMatchesTheBytesOnTheWire(size: Int) async throws {
        let captures = Captures()
        let server = try answeringServer("201 Created", body: "{}", captures: captures)
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/len-\(size).jpg", size: Int64(size))
        var request = try UploadRequest.forPath(
            path, url: server.url, formFields: [FormField(name: "k", value: "v")],
            headers: [RequestHeader(name: "X-Secret", value: "s3cret")], allowAnyFile: true)
        request.field = "photo"
        let run = try await UploadRun.run([request])
        #expect(run.outcome() == .answered(status: 201))
        // (A file of a MiB or more is preceded by one OPTIONS: does the server resume uploads?)
        let captured = try #require(captures.all.first { $0.head.hasPrefix("POST") })
        #expect(captured.contentLength == captured.body.count)
        #expect(Int64(captured.body.count) == run.expectedLength())
        #expect(run.progressTotals().last == Int64(captured.body.count))
        #expect(captured.header("X-Secret") == "s3cret")
        let boundary = try #require(captured.header("Content-Type")?.components(separatedBy: "boundary=").last)
        let layout = MultipartLayout(
            boundary: Boundary(boundary), fields: [FormField(name: "k", value: "v")], fileField: "photo",
            fileName: "len-\(size).jpg", contentType: size >= 3 ? .jpeg : .jpeg, fileSize: Int64(size))
        let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(captured.body == layout.head + file + layout.tail)
    }

    @Test func serverErrorIsAnAnswer() async throws {
        let server = try answeringServer("500 Internal Server Error", body: "oops")
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/e.jpg", size: 5000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)])
        #expect(run.outcome() == .answered(status: 500))
        #expect(run.response()?.bodyText == "oops")
        #expect(run.outcome()?.isSuccess == false)
    }

    @Test func connectionResetMidBodyIsALostConnection() async throws {
        let server = try RawServer { connection in
            connection.read(atLeast: 1 << 20)
            connection.reset()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/r.jpg", size: 64 << 20)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)])
        #expect(run.failure()?.kind == .connectionLost)
    }

    @Test func refusedConnectionCannotConnect() async throws {
        let server = try RawServer { $0.close() }
        let port = server.port
        server.stop()
        let path = try TestFiles.writeImage(at: folder + "/c.jpg", size: 100)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: "http://127.0.0.1:\(port)/photo")])
        let failure = try #require(run.failure())
        #expect(failure.kind == .cannotConnect)
        #expect(failure.code == ECONNREFUSED)
        #expect(run.progressTotals().isEmpty)
    }

    @Test func stalledServerTimesOutOnTheStallClock() async throws {
        let server = try RawServer { $0.hold(seconds: 8) }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/s.jpg", size: 128 << 20)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: server.url)],
            timeouts: UploadTimeouts(connect: .seconds(2), stall: .seconds(1), answer: .seconds(30)))
        // The server closes after 8 s, which would be a lost connection: only the stall clock says this.
        #expect(run.failure()?.kind == .stalled)
        #expect(run.failure()?.message == "the upload stalled: nothing could be sent for 1.0 s")
    }

    /// A body held to `--limit-rate` waits for its rate between writes (here 4 s for the second
    /// 4 KiB at 1 KiB/s): no stall, though the stall limit is 1 s; only a write the server does
    /// not take would be.
    @Test func aPacedBodyWaitingForItsRateIsNotStalled() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: folder + "/paced.jpg", size: 6_000)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: receiver.url)],
            timeouts: UploadTimeouts(connect: .seconds(2), stall: .seconds(1), answer: .seconds(30)),
            rateLimit: 1024)
        #expect(run.outcome()?.isSuccess == true, "\(String(describing: run.outcome()))")
        #expect(receiver.storedNames() == ["paced.jpg"])
        await receiver.cleanUp()
    }

    /// The same stall on AsyncHTTPClient's path (a paced body goes there): its watchdog asks
    /// the body's `StallClock` when the deadline comes.
    @Test func aPacedBodyTheServerStopsTakingIsStalled() async throws {
        let server = try RawServer { $0.hold(seconds: 8) }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/paced-stall.jpg", size: 128 << 20)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: server.url)],
            timeouts: UploadTimeouts(connect: .seconds(2), stall: .seconds(1), answer: .seconds(30)),
            rateLimit: 16 << 20)
        #expect(run.failure()?.kind == .stalled, "\(String(describing: run.failure()))")
        #expect(run.failure()?.message == "the upload stalled: nothing could be sent for 1.0 s")
    }

    @Test func silentServerTimesOutOnTheAnswerClock() async throws {
        let server = try silentServer(closingAfter: 6)
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/n.jpg", size: 10_000)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: server.url)],
            timeouts: UploadTimeouts(connect: .seconds(2), stall: .seconds(5), answer: .seconds(1)))
        // The server closes after 6 s, which would be a lost connection: only the answer clock says this.
        #expect(run.failure()?.kind == .noAnswer)
        #expect(run.failure()?.message == "no answer within 1.0 s after the upload was sent")
        #expect(run.progressTotals().last == run.expectedLength())
    }

    /// The answer clock covers the whole answer: a server that trickles it a byte at a time
    /// (each byte restarting AsyncHTTPClient's read timeout) cannot hold an upload. Its head
    /// arrived, so the upload ends with that status and the part of the body that came; a head
    /// that never completes is no answer.
    @Test(arguments: [true, false])
    func anAnswerTrickledByteByByteEndsAtTheAnswerClock(headFirst: Bool) async throws {
        let server = try RawServer { connection in
            _ = readRequest(connection)
            let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n".utf8)
            var rest = head + [UInt8](repeating: 120, count: 1000)
            if headFirst {
                connection.send(head)
                rest.removeFirst(head.count)
            }
            // A byte every 0.2 s: over three minutes for the whole answer, if nothing ends it
            // sooner; the server stops when the client has gone.
            for byte in rest {
                guard connection.send([byte]) else { break }
                Thread.sleep(forTimeInterval: 0.2)
            }
            connection.close()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/trickle-\(headFirst).jpg", size: 10_000)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: server.url)],
            timeouts: UploadTimeouts(connect: .seconds(5), stall: .seconds(5), answer: .seconds(2)))
        if headFirst {
            #expect(run.outcome() == .answered(status: 200))
            let response = try #require(run.response())
            #expect(response.bodyBytesTotal < 1000, "the whole answer arrived: the clock did not end it")
        } else {
            // Bytes of a head that never completes: whichever clock says it first, no answer.
            let failure = try #require(run.failure())
            #expect(failure.kind == .noAnswer)
            #expect(failure.message.hasSuffix("within 2.0 s after the upload was sent"), "\(failure.message)")
        }
    }

    @Test func cancellingWhileWaitingForTheAnswerSaysTheServerMayHaveTheFile() async throws {
        let server = try silentServer(closingAfter: 3)
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/waiting.jpg", size: 50_000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)]) { event, queue in
            if case .progress(let id, _, let total, let expected) = event, total == expected {
                Task {
                    try await Task.sleep(for: .milliseconds(300))
                    await queue.cancel(id)
                }
            }
        }
        #expect(run.failure() == UploadFailure(.cancelled, "cancelled while waiting for the answer (the server may have stored the file)"))
    }

    @Test func fileShrinkingDuringUploadFailsWithoutLyingAboutLength() async throws {
        let captures = Captures()
        let server = try RawServer { connection in
            connection.read(atLeast: 1 << 20)
            Thread.sleep(forTimeInterval: 0.5)
            captures.add(CapturedRequest(head: "", body: connection.readAll(idle: 1)))
            connection.close()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/shrink.jpg", size: 64 << 20)
        let truncated = CancelOnce()
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)]) { event, _ in
            if case .progress = event, truncated.first() { truncate(path, 2 << 20) }
        }
        let failure = try #require(run.failure())
        #expect(failure.kind == .fileError)
        #expect(failure.message.contains("shrank"))
    }

    enum EarlyAnswer: CaseIterable { case thenClose, thenKeepReading, cutShortThenClose }

    /// A server that says 200 after a few bytes of a 20 MB body has not got the file: a failure
    /// that says so, with the answer still shown, and not retried; whether it then closes the
    /// connection, goes on reading, or even closes before its own answer is complete (the request
    /// then fails, but the answer's head is what happened).
    @Test(arguments: EarlyAnswer.allCases)
    func aSuccessBeforeTheBodyWasSentIsAFailure(server behaviour: EarlyAnswer) async throws {
        let server = try RawServer { connection in
            connection.read(atLeast: 1)
            let declared = behaviour == .cutShortThenClose ? 40 : 20
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(declared)\r\n\r\n{\"filename\":\"x.jpg\"}")
            if behaviour == .thenKeepReading { _ = connection.readAll(idle: 3) }
            connection.close()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/early.jpg", size: 20_000_000)
        // (Without resuming: this server answers the first request it gets, whatever it is, and
        // the question whether it resumes uploads would be that request.)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], retryPolicy: RetryPolicy(maxRetries: 3), resume: false)
        let failure = try #require(run.failure())
        #expect(failure.kind == .answeredEarly, "\(failure)")
        #expect(failure.message.hasPrefix("answered 200 after "), "\(failure.message)")
        #expect(failure.message.hasSuffix("of 20.0 MB: the file did not arrive whole"), "\(failure.message)")
        #expect(run.response()?.status == 200)
        #expect(!run.events.contains { if case .retryScheduled = $0 { true } else { false } })
    }

    /// An early refusal followed by a closed connection (what `uploadmon serve` does with a body
    /// it will not take) is the refusal, not a lost connection.
    @Test func anEarlyRefusalThenACloseIsTheAnswer() async throws {
        let receiver = try await ReceiverHarness.start(maxSize: 1_000_000)
        let path = try TestFiles.writeImage(at: folder + "/big-refused.jpg", size: 30_000_000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: receiver.url)])
        #expect(run.outcome() == .answered(status: 413), "\(String(describing: run.outcome()))")
        #expect(run.response()?.bodyText.contains("the limit is 1000000") == true)
        await receiver.cleanUp()
    }

    /// A 200 whose body trickles past the answer timeout ends on time, and says its answer was
    /// cut: the status stands (the file arrived), the body is marked incomplete. On both ways a
    /// request goes (direct for small bodies, AsyncHTTPClient for large), and for a server that
    /// closes before the declared end.
    @Test(arguments: [10_000, 2_000_000] as [Int64])
    func anAnswerCutOffByTheTimeoutOrAClosedConnectionSaysSo(size: Int64) async throws {
        let trickle = try RawServer { connection in
            _ = readRequest(connection)
            connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"fi")
            Thread.sleep(forTimeInterval: 3)
            connection.close()
        }
        defer { trickle.stop() }
        let path = try TestFiles.writeImage(at: folder + "/cut-\(size).jpg", size: size)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: trickle.url)],
            timeouts: UploadTimeouts(connect: .seconds(5), stall: .seconds(5), answer: .seconds(1)), resume: false)
        #expect(run.outcome() == .answered(status: 200))
        #expect(run.response()?.cut == "answer cut off: 4 B of 100 kB arrived within the 1s answer timeout", "\(String(describing: run.response()?.cut))")
        #expect(run.record().response?.cut != nil, "the record keeps it")

        let closing = try RawServer { connection in
            _ = readRequest(connection)
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{\"fi")
            connection.close()
        }
        defer { closing.stop() }
        let closed = try await UploadRun.run([try UploadRequest.forPath(path, url: closing.url)], resume: false)
        #expect(closed.outcome() == .answered(status: 200))
        #expect(
            closed.response()?.cut == "answer cut off: the server closed the connection after 4 B of 100 kB", "\(String(describing: closed.response()?.cut))")

        // A whole answer is not cut.
        let whole = try answeringServer("200 OK", body: #"{"filename":"x.jpg"}"#)
        defer { whole.stop() }
        let fine = try await UploadRun.run([try UploadRequest.forPath(path, url: whole.url)], resume: false)
        #expect(fine.response()?.cut == nil)
    }

    @Test func anAnswerIsWeighedAgainstTheBytesSent() {
        #expect(UploadOutcome.answer(200, bytesSent: 100, expected: 100) == .answered(status: 200))
        #expect(UploadOutcome.answer(200, bytesSent: 0, expected: nil) == .answered(status: 200))
        #expect(UploadOutcome.answer(413, bytesSent: 140, expected: 20_000_847) == .answered(status: 413))
        #expect(
            UploadOutcome.answer(200, bytesSent: 140, expected: 20_000_847)
                == .failed(UploadFailure(.answeredEarly, "answered 200 after 140 B of 20.0 MB: the file did not arrive whole")))
    }

    @Test func missingFileIsAFileError() async throws {
        let request = UploadRequest(source: .file(path: folder + "/nope.jpg"), url: "http://127.0.0.1:9/photo", uploadName: "nope.jpg")
        #expect(throws: UploadInputError.self) { try UploadPreflight.check(request) }
        let run = try await UploadRun.run([request])
        #expect(run.failure()?.kind == .fileError)
        #expect(run.failure()?.code == ENOENT)
    }

    @Test func temporaryRedirectResendsTheBody() async throws {
        let receiver = try await ReceiverHarness.start()
        let server = try answeringServer("307 Temporary Redirect", headers: ["Location: \(receiver.url)"])
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/redirect.jpg", size: 300_000)
        // Another port is another origin: without --location the upload ends, nothing sent there.
        let refused = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)])
        #expect(refused.failure()?.message.contains("wanted the file at \(receiver.url)") == true, "\(String(describing: refused.failure()))")
        #expect(receiver.storedNames().isEmpty)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], location: true)
        #expect(run.outcome() == .answered(status: 200))
        #expect(run.events.contains(.redirected(UploadID(1), to: receiver.url)))
        #expect(TestFiles.sameContents(path, receiver.directory + "/redirect.jpg"))
        await receiver.cleanUp()
    }

    @Test func foundRedirectIsReportedNotFollowed() async throws {
        let server = try answeringServer("302 Found", headers: ["Location: /elsewhere"])
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/found.jpg", size: 1000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)])
        #expect(run.outcome() == .answered(status: 302))
    }

    @Test func serviceUnavailableIsRetriedWithTheSameID() async throws {
        let receiver = try await ReceiverHarness.start()
        let attempts = Captures()
        let server = try RawServer { connection in
            let request = readRequest(connection)
            attempts.add(request)
            if attempts.all.count == 1 {
                connection.write("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            } else {
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
            }
            connection.close()
        }
        defer { server.stop() }
        let path = try TestFiles.writeImage(at: folder + "/retry.jpg", size: 1000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: server.url)], retryPolicy: RetryPolicy(maxRetries: 2))
        #expect(run.outcome() == .answered(status: 200))
        #expect(attempts.all.count == 2)
        #expect(run.events.contains { if case .retryScheduled(UploadID(1), 2, 0, _) = $0 { true } else { false } })
        await receiver.cleanUp()
    }
}
