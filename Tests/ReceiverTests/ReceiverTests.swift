import Foundation
import Glibc
import Receiver
import Testing
import UploadCore
import UploadTesting

/// Runs curl against the receiver: the tool people will point at it first.
func curl(_ arguments: [String]) async throws -> (status: Int, body: String) {
    let run = try await curlMeasured(arguments)
    return (run.status, run.body)
}

/// curl's answer and how many bytes of the request body it sent (`size_upload`).
func curlMeasured(_ arguments: [String]) async throws -> (status: Int, body: String, uploaded: Int) {
    try await offPool { try curlBlocking(arguments) }
}

func curlBlocking(_ arguments: [String]) throws -> (status: Int, body: String, uploaded: Int) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["-s", "-o", "-", "-w", "\n%{http_code} %{size_upload}", "--max-time", "30"] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    let figures = (text.split(separator: "\n").last ?? "").split(separator: " ")
    let status = figures.first.flatMap { Int($0) } ?? 0
    let uploaded = figures.count > 1 ? Int(figures[1]) ?? -1 : -1
    let body = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().joined(separator: "\n")
    return (status, body, uploaded)
}

func json(_ body: String) -> [String: String] {
    (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: String]) ?? [:]
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct ReceiverTests {
    @Test func curlFormUploadIsStoredByteIdentical() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/cat.jpg", size: 3_000_000)
        let (status, body) = try await curl(["-F", "photo=@\(path)", receiver.url])
        #expect(status == 200)
        #expect(json(body) == ["filename": "cat.jpg"])
        #expect(TestFiles.sameContents(path, receiver.directory + "/cat.jpg"))
        let (again, body2) = try await curl(["-F", "photo=@\(path)", receiver.url])
        #expect(again == 200 && json(body2) == ["filename": "cat-1.jpg"])
        #expect(receiver.logLines.count == 2)
        #expect(receiver.logLines[0].description.contains("POST /photo 200"))
        #expect(receiver.logLines[0].description.contains("cat.jpg"))
        await receiver.cleanUp()
    }

    /// A right-to-left override would make `\u{202E}gnp.exe` look like `exe.png` in every listing.
    @Test func bidiControlsNeverReachAStoredName() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/x.png", size: 1000)
        let (status, body) = try await curl(["-F", "photo=@\(path);filename=\u{202E}gnp.exe\u{2066}", receiver.url])
        #expect(status == 200)
        #expect(json(body) == ["filename": "gnp.exe"])
        #expect(receiver.storedNames() == ["gnp.exe"])
        await receiver.cleanUp()
    }

    @Test func curlWithTextFieldsAndCustomFieldName() async throws {
        let receiver = try await ReceiverHarness.start(path: "/upload", field: "file")
        let path = try TestFiles.writeImage(at: receiver.root + "/a.jpg", size: 1000)
        let (status, body) = try await curl(["-F", "key=value", "-F", "file=@\(path);filename=renamed.jpg", "http://127.0.0.1:\(receiver.port)/upload"])
        #expect(status == 200 && json(body) == ["filename": "renamed.jpg"])
        await receiver.cleanUp()
    }

    @Test func errorsAreJSONWithTheRightStatus() async throws {
        let receiver = try await ReceiverHarness.start(maxSize: 10_000)
        let path = try TestFiles.writeImage(at: receiver.root + "/a.jpg", size: 1000)
        let big = try TestFiles.writeImage(at: receiver.root + "/big.jpg", size: 50_000)

        let notFound = try await curl(["-F", "photo=@\(path)", "http://127.0.0.1:\(receiver.port)/other"])
        #expect(notFound.status == 404 && json(notFound.body)["error"]?.contains("/other") == true)

        let wrongMethod = try await curl(["http://127.0.0.1:\(receiver.port)/photo"])
        #expect(wrongMethod.status == 405 && json(wrongMethod.body)["error"] != nil)

        let notMultipart = try await curl(["-H", "Content-Type: application/json", "--data", "{}", receiver.url])
        #expect(notMultipart.status == 415 && json(notMultipart.body)["error"]?.contains("multipart/form-data") == true)

        let missingField = try await curl(["-F", "other=@\(path)", receiver.url])
        #expect(missingField.status == 400 && json(missingField.body)["error"]?.contains("photo") == true)

        let textInField = try await curl(["-F", "photo=just text", receiver.url])
        #expect(textInField.status == 400)

        let noBoundary = try await curl(["-H", "Content-Type: multipart/form-data", "--data-binary", "x", receiver.url])
        #expect(noBoundary.status == 400)

        let tooLarge = try await curl(["-F", "photo=@\(big)", receiver.url])
        #expect(tooLarge.status == 413 && json(tooLarge.body)["error"] != nil)

        let tooLargeChunked = try await curl(["-H", "Transfer-Encoding: chunked", "-F", "photo=@\(big)", receiver.url])
        #expect(tooLargeChunked.status == 413)

        let garbage = try await curl(["-H", "Content-Type: multipart/form-data; boundary=abc", "--data-binary", "--abcXX\r\nnonsense", receiver.url])
        #expect(garbage.status == 400)

        #expect(receiver.storedNames().isEmpty)
        #expect(receiver.logLines.map(\.status) == [404, 405, 415, 400, 400, 400, 413, 413, 400])
        await receiver.cleanUp()
    }

    @Test func imagesOnlyRefusesOtherContent() async throws {
        let receiver = try await ReceiverHarness.start(imagesOnly: true)
        let text = receiver.root + "/notes.jpg"
        try Data("These are notes, not a photo".utf8).write(to: URL(fileURLWithPath: text))
        let image = try TestFiles.writeImage(at: receiver.root + "/real.jpg", size: 5000)
        let refused = try await curl(["-F", "photo=@\(text)", receiver.url])
        #expect(refused.status == 415 && json(refused.body)["error"]?.contains("not an image") == true)
        let accepted = try await curl(["-F", "photo=@\(image)", receiver.url])
        #expect(accepted.status == 200)
        #expect(receiver.storedNames() == ["real.jpg"])
        await receiver.cleanUp()
    }

    @Test func abortedUploadLeavesNoFile() async throws {
        let receiver = try await ReceiverHarness.start()
        let connection = try RawConnection.connect(to: receiver.port)
        let partial =
            "POST /photo HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B0undary\r\nContent-Length: 100000\r\n\r\n"
            + "--B0undary\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"partial.jpg\"\r\n\r\n"
            + String(repeating: "x", count: 5000)
        connection.send(Array(partial.utf8))
        // A file open while the part streams in (without a name where the system allows), then
        // nothing once the client is gone.
        #expect(try await eventually { TestFiles.openFiles(in: receiver.directory) == 1 })
        connection.close()
        #expect(try await eventually { TestFiles.openFiles(in: receiver.directory) == 0 })
        #expect(receiver.storedNames().isEmpty)
        await receiver.cleanUp()
    }

    @Test func partialFilesAKilledReceiverLeftAreRemovedAtStartButNotFreshOnes() throws {
        let directory = TestFiles.makeTemporaryDirectory("leftovers")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let old = directory + "/.uploadmon-partial-OLD"
        let fresh = directory + "/.uploadmon-partial-FRESH"
        let kept = directory + "/photo.jpg"
        for path in [old, fresh, kept] { _ = FileManager.default.createFile(atPath: path, contents: Data([1])) }
        var times = [timespec(tv_sec: time(nil) - 7200, tv_nsec: 0), timespec(tv_sec: time(nil) - 7200, tv_nsec: 0)]
        utimensat(AT_FDCWD, old, &times, 0)
        utimensat(AT_FDCWD, kept, &times, 0)
        #expect(try ReceiverServer.removeLeftovers(in: directory, now: Date()) == [".uploadmon-partial-OLD"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [".uploadmon-partial-FRESH", "photo.jpg"])
    }
}
