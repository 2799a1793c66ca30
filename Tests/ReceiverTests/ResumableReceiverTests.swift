import Foundation
import Testing
import UploadCore
import UploadTesting

/// One curl exchange with every header block it saw (interim ones first) and the body.
struct Exchange: CustomStringConvertible {
    var blocks: [(status: Int, fields: [String: String])]
    var body: String

    var status: Int { blocks.last?.status ?? 0 }
    var fields: [String: String] { blocks.last?.fields ?? [:] }
    var interim: [(status: Int, fields: [String: String])] { Array(blocks.dropLast()) }
    subscript(_ name: String) -> String? { fields[name.lowercased()] }
    var description: String { "\(blocks.map { "\($0.status) \($0.fields)" }) \(body)" }
}

func exchange(_ arguments: [String]) async throws -> Exchange {
    try await offPool {
        let directory = TestFiles.makeTemporaryDirectory("curl")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "--max-time", "30", "-D", directory + "/head", "-o", directory + "/body"] + arguments
        try process.run()
        process.waitUntilExit()
        let head = (try? String(contentsOfFile: directory + "/head", encoding: .utf8)) ?? ""
        var blocks: [(Int, [String: String])] = []
        for block in head.components(separatedBy: "\r\n\r\n") where block.hasPrefix("HTTP/") {
            let lines = block.components(separatedBy: "\r\n")
            let status = Int(lines[0].split(separator: " ")[1]) ?? 0
            var fields: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            blocks.append((status, fields))
        }
        let body = (try? String(contentsOfFile: directory + "/body", encoding: .utf8)) ?? ""
        return Exchange(blocks: blocks, body: body)
    }
}

/// A multipart body as a client sends it, with the file part `content` in the field `photo`.
struct FormBody {
    static let boundary = "ResumableBoundary42"
    let bytes: [UInt8]
    let content: [UInt8]

    init(name: String = "big.png", size: Int) {
        var generator = SystemRandomNumberGenerator()
        content = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes =
            Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"\(name)\"\r\nContent-Type: image/png\r\n\r\n".utf8)
            + content + Array("\r\n--\(Self.boundary)--\r\n".utf8)
    }

    /// Writes bytes `range` to a file for curl's `--data-binary @file`.
    func write(_ range: Range<Int>, to path: String) -> String {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes[range]))
        return path
    }
}

/// The receiver's resumable uploads over real connections, driven by curl and raw sockets
/// (independent clients): what only a connection shows — the `104` before the body, a stalled
/// request ended by a newer one. The rest is tested in process (`ResumableEndpointTests`).
@Suite(.serialized, .timeLimit(.minutes(5))) struct ResumableReceiverTests {
    let multipart = "Content-Type: multipart/form-data; boundary=\(FormBody.boundary)"
    let partial = "Content-Type: application/partial-upload"

    @Test func curlCreatesAppendsIsToldTheOffsetAndCompletes() async throws {
        let receiver = try await ReceiverHarness.start()
        let form = FormBody(size: 700_000)
        let created = try await exchange([
            "-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "-H", "Upload-Length: \(form.bytes.count)",
            "-H", "Upload-Draft-Interop-Version: 8", "--data-binary", "", receiver.url,
        ])
        #expect(created.status == 201, "\(created)")
        // Announced before the answer, with the same Location, as the draft asks.
        #expect(created.interim.map(\.status) == [104])
        let location = try #require(created["Location"])
        #expect(created.interim.first?.fields["location"] == location)
        #expect(created.interim.first?.fields["upload-draft-interop-version"] == "8")
        #expect(location.hasPrefix("http://127.0.0.1:\(receiver.port)/resumable/"))
        #expect(created["Upload-Offset"] == "0")
        #expect(created["Upload-Complete"] == "?0")
        #expect(created["Upload-Limit"]?.hasPrefix("max-size=1073741824, max-age=") == true)

        let first = form.write(0..<300_000, to: receiver.root + "/first")
        let appended = try await exchange([
            "-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?0",
            "--data-binary", "@" + first, location,
        ])
        #expect(appended.status == 204, "\(appended)")
        #expect(appended["Upload-Offset"] == "300000")

        let rest = form.write(300_000..<form.bytes.count, to: receiver.root + "/rest")
        let conflict = try await exchange([
            "-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 299999", "-H", "Upload-Complete: ?1",
            "--data-binary", "@" + rest, location,
        ])
        #expect(conflict.status == 409)
        #expect(conflict["Upload-Offset"] == "300000")
        #expect(conflict["Content-Type"] == "application/problem+json")
        #expect(conflict.body.contains("mismatching-upload-offset"))
        #expect(conflict.body.contains(#""expected-offset":300000"#) && conflict.body.contains(#""provided-offset":299999"#))

        let offset = try await exchange(["-I", location])
        #expect(offset.status == 204)
        #expect(offset["Upload-Offset"] == "300000")
        #expect(offset["Upload-Complete"] == "?0")
        #expect(offset["Upload-Length"] == String(form.bytes.count))
        #expect(offset["Cache-Control"] == "no-store")
        #expect(!receiver.storedNames().contains("big.png"), "a partial upload is not a stored file")

        let completed = try await exchange([
            "-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 300000", "-H", "Upload-Complete: ?1",
            "--data-binary", "@" + rest, location,
        ])
        #expect(completed.status == 200, "\(completed)")
        #expect(json(completed.body) == ["filename": "big.png"])
        #expect(completed["Upload-Complete"] == "?1")
        #expect(FileManager.default.contents(atPath: receiver.directory + "/big.png") == Data(form.content))

        // Afterwards: complete, and the answer can be had again; nothing more can be appended.
        let after = try await exchange(["-I", location])
        #expect(after["Upload-Complete"] == "?1")
        #expect(after["Upload-Offset"] == String(form.bytes.count))
        let again = try await exchange([location])
        #expect(again.status == 200 && json(again.body) == ["filename": "big.png"])
        let late = try await exchange([
            "-X", "PATCH", "-H", partial, "-H", "Upload-Offset: \(form.bytes.count)", "-H", "Upload-Complete: ?1",
            "--data-binary", "", location,
        ])
        #expect(late.status == 400)
        #expect(late.body.contains("completed-upload"))
        #expect(receiver.storedNames().filter { !$0.hasPrefix(".") } == ["big.png"])
        await receiver.cleanUp()
    }

    /// What URLSession (interop 6) does: the whole upload in one POST with `Upload-Complete: ?1`,
    /// told the resource in a `104` before the body, then the endpoint's own answer; cut, it
    /// would continue with HEAD and PATCH, here in version 6 too.
    @Test func anInteropSixClientUploadsOptimisticallyAndContinuesInVersionSix() async throws {
        let receiver = try await ReceiverHarness.start()
        let form = FormBody(name: "six.png", size: 200_000)
        let whole = form.write(0..<form.bytes.count, to: receiver.root + "/whole")
        let optimistic = try await exchange([
            "-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?1",
            "-H", "Upload-Draft-Interop-Version: 6", "--data-binary", "@" + whole, receiver.url,
        ])
        #expect(optimistic.status == 200, "\(optimistic)")
        #expect(optimistic.interim.map(\.status) == [104])
        #expect(optimistic.interim.first?.fields["upload-draft-interop-version"] == "6")
        #expect(optimistic.interim.first?.fields["location"]?.contains("/resumable/") == true)
        #expect(json(optimistic.body) == ["filename": "six.png"])
        #expect(FileManager.default.contents(atPath: receiver.directory + "/six.png") == Data(form.content))

        let created = try await exchange([
            "-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0",
            "-H", "Upload-Draft-Interop-Version: 6", "--data-binary", "@" + form.write(0..<1000, to: receiver.root + "/head"),
            receiver.url,
        ])
        #expect(created.status == 201 && created["Upload-Offset"] == "1000", "\(created)")
        let location = try #require(created["Location"])
        let offset = try await exchange(["-I", "-H", "Upload-Draft-Interop-Version: 6", location])
        #expect(offset["Upload-Offset"] == "1000")
        let rest = form.write(1000..<form.bytes.count, to: receiver.root + "/rest")
        let completed = try await exchange([
            "-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 1000", "-H", "Upload-Complete: ?1",
            "-H", "Upload-Draft-Interop-Version: 6", "--data-binary", "@" + rest, location,
        ])
        #expect(completed.status == 200, "\(completed)")
        #expect(json(completed.body) == ["filename": "six-1.png"])
        #expect(FileManager.default.contents(atPath: receiver.directory + "/six-1.png") == Data(form.content))
        await receiver.cleanUp()
    }

    @Test func aCutTransferKeepsWhatArrivedAndANewerRequestEndsAStalledOne() async throws {
        let receiver = try await ReceiverHarness.start()
        let form = FormBody(size: 2_000_000)
        // An optimistic creation: the whole body in one request, announced with 104 before it.
        let connection = try RawConnection.connect(to: receiver.port)
        defer { connection.close() }
        let head =
            "POST /photo HTTP/1.1\r\nHost: 127.0.0.1:\(receiver.port)\r\n\(multipart)\r\nContent-Length: \(form.bytes.count)\r\n"
            + "Upload-Complete: ?1\r\nUpload-Draft-Interop-Version: 6\r\n\r\n"
        #expect(connection.send(Array(head.utf8)))
        let announced = try await offPool { connection.read(until: "\r\n\r\n", timeout: 10) }
        #expect(announced.hasPrefix("HTTP/1.1 104 Upload Resumption Supported\r\n"), "\(announced)")
        let location = try #require(
            announced.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }
                .map { $0.dropFirst("location:".count).trimmingCharacters(in: .whitespaces) })
        // Half the body, then the connection stalls (the client's link is gone, the server cannot tell).
        #expect(connection.send(Array(form.bytes[0..<1_000_000])))
        #expect(try await eventually { receiver.logLines.isEmpty && partSize(receiver, location) >= 700_000 })

        // The client asks for the offset on a new connection: the stalled request is ended first.
        let offset = try await exchange(["-I", location])
        let kept = try #require(offset["Upload-Offset"].flatMap(Int.init))
        #expect((700_000...1_000_000).contains(kept), "\(offset)")
        let (_, closed) = try await offPool { connection.readUntilClosed(timeout: 10) }
        #expect(closed, "the superseded request's connection is ended")

        let completed = try await exchange([
            "-X", "PATCH", "-H", partial, "-H", "Upload-Offset: \(kept)", "-H", "Upload-Complete: ?1",
            "-H", "Upload-Draft-Interop-Version: 6",
            "--data-binary", "@" + form.write(kept..<form.bytes.count, to: receiver.root + "/rest"), location,
        ])
        #expect(completed.status == 200, "\(completed)")
        #expect(completed["Upload-Draft-Interop-Version"] == "6")
        #expect(FileManager.default.contents(atPath: receiver.directory + "/big.png") == Data(form.content))
        await receiver.cleanUp()
    }

}

/// Bytes the receiver keeps so far for the upload at `location`.
/// The bytes the receiver keeps of an upload: the stream up to the file's bytes, and from there.
func partSize(_ receiver: ReceiverHarness, _ location: String) -> Int64 {
    let token = location.split(separator: "/").last.map(String.init) ?? ""
    let base = receiver.directory + "/.uploadmon-resumable/" + token
    guard let head = TestFiles.size(of: base + ".part") else { return -1 }
    return head + (TestFiles.size(of: base + ".body") ?? 0)
}

/// `Idempotency-Key` on ordinary uploads: a repeat gets the first answer and stores nothing twice.
@Suite(.serialized, .timeLimit(.minutes(2))) struct IdempotencyKeyTests {
    @Test func aRepeatedKeyGetsTheFirstAnswerOnlyForTheSameFile() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/once.png", size: 4_000_000)
        let key = ["-H", #"Idempotency-Key: "3f1c9a52-upload-once""#]
        let first = try await curlMeasured(key + ["-F", "photo=@\(path)", receiver.url])
        #expect(first.status == 200)
        #expect(json(first.body) == ["filename": "once.png"])
        // The same upload again (a client that never heard the answer), with curl's new boundary:
        // the same answer, once the body shows the same file, and no second file.
        let again = try await exchange(key + ["-F", "photo=@\(path)", receiver.url])
        #expect(again.status == 200)
        #expect(json(again.body) == ["filename": "once.png"])
        #expect(again["Idempotent-Replayed"] == "true")
        #expect(receiver.storedNames() == ["once.png"])

        // Another file of the same length under the same key was once given the first one's
        // answer and silently dropped: it is refused, and nothing is stored.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0xFF
        let twin = receiver.root + "/twin/once.png"
        try FileManager.default.createDirectory(atPath: receiver.root + "/twin", withIntermediateDirectories: true)
        try bytes.write(to: URL(fileURLWithPath: twin))
        let sameLength = try await exchange(key + ["-F", "photo=@\(twin)", receiver.url])
        #expect(sameLength.status == 422, "\(sameLength)")
        #expect(json(sameLength.body)["error"]?.contains("another file") == true)
        #expect(receiver.storedNames() == ["once.png"])

        // The stored file moved away (the user took it): nothing to compare with, so the repeat
        // is a new upload, stored again rather than answered with a name that no longer exists.
        try FileManager.default.moveItem(atPath: receiver.directory + "/once.png", toPath: receiver.root + "/taken.png")
        let afterMove = try await exchange(key + ["-F", "photo=@\(path)", receiver.url])
        #expect(afterMove.status == 200 && afterMove["Idempotent-Replayed"] == nil, "\(afterMove)")
        #expect(receiver.storedNames() == ["once.png"])

        // The key with a body of another length (refused from the head), and keys that are not sf-strings.
        let other = try TestFiles.writeImage(at: receiver.root + "/other.png", size: 1000)
        #expect(try await curlMeasured(key + ["-F", "photo=@\(other)", receiver.url]).status == 422)
        #expect(try await curlMeasured(["-H", "Idempotency-Key: unquoted", "-F", "photo=@\(other)", receiver.url]).status == 400)
        #expect(receiver.storedNames() == ["once.png"])
        await receiver.cleanUp()
    }

    @Test func anInterruptedUploadFreesItsKeyForTheRetry() async throws {
        let receiver = try await ReceiverHarness.start()
        let form = FormBody(name: "cut.png", size: 500_000)
        let connection = try RawConnection.connect(to: receiver.port)
        let head =
            "POST /photo HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=\(FormBody.boundary)\r\n"
            + "Content-Length: \(form.bytes.count)\r\nIdempotency-Key: \"cut-once\"\r\n\r\n"
        #expect(connection.send(Array(head.utf8) + Array(form.bytes[0..<100_000])))
        #expect(try await eventually { TestFiles.openFiles(in: receiver.directory) == 1 })
        connection.reset()
        #expect(try await eventually { receiver.logLines.count == 1 })
        let retry = try await exchange([
            "-H", #"Idempotency-Key: "cut-once""#, "-H", "Content-Type: multipart/form-data; boundary=" + FormBody.boundary,
            "--data-binary", "@" + form.write(0..<form.bytes.count, to: receiver.root + "/whole"), receiver.url,
        ])
        #expect(retry.status == 200, "\(retry)")
        #expect(retry["Idempotent-Replayed"] == nil)
        #expect(receiver.storedNames() == ["cut.png"])
        await receiver.cleanUp()
    }
}
