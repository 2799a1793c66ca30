import Foundation
import Testing
import UploadTesting

/// One upload's request, byte by byte, for tests that watch what the receiver does between head and body.
struct RawUpload: CustomTestStringConvertible {
    var method = "POST"
    var path = "/photo"
    var contentType = "multipart/form-data; boundary=B0undary"
    var expect: String? = "100-continue"
    var declaredLength: Int?
    var content: [UInt8] = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + [UInt8](repeating: 7, count: 100_000)

    var body: [UInt8] {
        Array("--B0undary\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"raw.png\"\r\nContent-Type: image/png\r\n\r\n".utf8)
            + content + Array("\r\n--B0undary--\r\n".utf8)
    }

    var testDescription: String { "\(method) \(path) \(contentType) length \(declaredLength ?? body.count) expect \(expect ?? "-")" }

    var head: [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: \(contentType)\r\nContent-Length: \(declaredLength ?? body.count)\r\n"
        if let expect { text += "Expect: \(expect)\r\n" }
        return Array((text + "\r\n").utf8)
    }
}

/// `Expect: 100-continue` and refusals from the head alone, over raw sockets and with curl.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ExpectContinueTests {
    @Test func continueArrivesBeforeTheBodyIsSentAndTheUploadCompletes() async throws {
        let receiver = try await ReceiverHarness.start()
        let upload = RawUpload()
        let connection = try RawConnection.connect(to: receiver.port)
        defer { connection.close() }
        #expect(connection.send(upload.head))
        // Without the interim answer this read gives up after 10 s with nothing.
        let interim = try await offPool { connection.read(until: "\r\n\r\n", timeout: 10) }
        #expect(interim == "HTTP/1.1 100 Continue\r\n\r\n")
        #expect(connection.send(upload.body))
        let answer = try await offPool { connection.read(until: "}", timeout: 10) }
        #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(answer)")
        #expect(answer.hasSuffix(#"{"filename":"raw.png"}"#))
        #expect(FileManager.default.contents(atPath: receiver.directory + "/raw.png") == Data(upload.content))
        await receiver.cleanUp()
    }

    @Test(arguments: [
        ("404", RawUpload(path: "/elsewhere")),
        ("405", RawUpload(method: "PUT")),
        ("415", RawUpload(contentType: "application/octet-stream")),
        ("400", RawUpload(contentType: "multipart/form-data")),
        ("413", RawUpload(declaredLength: 2_000_000)),
        ("413", RawUpload(expect: nil, declaredLength: 2_000_000)),
        ("417", RawUpload(expect: "something-else")),
    ])
    func aRefusedHeadIsAnsweredAtOnceAndTheConnectionEndsWithoutTheBody(status: String, upload: RawUpload) async throws {
        let receiver = try await ReceiverHarness.start(maxSize: 1_000_000)
        let connection = try RawConnection.connect(to: receiver.port)
        defer { connection.close() }
        #expect(connection.send(upload.head))
        // Only the head was sent: the answer and the end of the connection come without the body.
        let (answer, closed) = try await offPool { connection.readUntilClosed(timeout: 10) }
        #expect(answer.hasPrefix("HTTP/1.1 \(status) "), "\(answer)")
        #expect(!answer.contains("100 Continue"))
        #expect(answer.lowercased().contains("connection: close"))
        #expect(closed)
        #expect(receiver.logLines.map(\.status) == [Int(status)!])
        #expect(receiver.logLines.first?.bytes == 0)
        #expect(receiver.storedNames().isEmpty)
        await receiver.cleanUp()
    }

    @Test func curlWithItsDefaultExpectSendsAtOnce() async throws {
        let receiver = try await ReceiverHarness.start()
        // curl asks for 100 Continue for bodies over 1 MiB; told to wait 60 s for it, it would
        // run into --max-time if the receiver never answered.
        let path = try TestFiles.writeImage(at: receiver.root + "/big.png", size: 6_000_000)
        let run = try await curlMeasured(["--expect100-timeout", "60", "--max-time", "20", "-F", "photo=@\(path)", receiver.url])
        #expect(run.status == 200, "\(run.body)")
        #expect(json(run.body) == ["filename": "big.png"])
        #expect(TestFiles.sameContents(path, receiver.directory + "/big.png"))
        await receiver.cleanUp()
    }

    @Test func curlIsRefusedBeforeItSendsTheBody() async throws {
        let receiver = try await ReceiverHarness.start(maxSize: 1_000_000)
        let path = try TestFiles.writeImage(at: receiver.root + "/big.png", size: 8_000_000)
        let cases: [(arguments: [String], status: Int)] = [
            (["-F", "photo=@\(path)", receiver.url], 413),
            (["-F", "photo=@\(path)", "http://127.0.0.1:\(receiver.port)/nowhere"], 404),
            (["-X", "PUT", "-F", "photo=@\(path)", receiver.url], 405),
            (["-H", "Content-Type: application/octet-stream", "--data-binary", "@\(path)", receiver.url], 415),
        ]
        for (arguments, status) in cases {
            let run = try await curlMeasured(["--expect100-timeout", "60", "--max-time", "20"] + arguments)
            #expect(run.status == status, "\(arguments): \(run.body)")
            #expect(json(run.body)["error"] != nil)
            // (Almost) none of the 8 MB left curl.
            #expect((0..<65_536).contains(run.uploaded), "\(arguments): curl sent \(run.uploaded) bytes")
        }
        #expect(receiver.storedNames().isEmpty)
        await receiver.cleanUp()
    }
}
