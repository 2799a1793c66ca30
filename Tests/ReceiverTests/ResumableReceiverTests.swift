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
        bytes = Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"\(name)\"\r\nContent-Type: image/png\r\n\r\n".utf8)
            + content + Array("\r\n--\(Self.boundary)--\r\n".utf8)
    }

    /// Writes bytes `range` to a file for curl's `--data-binary @file`.
    func write(_ range: Range<Int>, to path: String) -> String {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes[range]))
        return path
    }
}

/// The receiver's resumable uploads, driven by curl and raw sockets (independent clients).
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
        let appended = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?0",
                                           "--data-binary", "@" + first, location])
        #expect(appended.status == 204, "\(appended)")
        #expect(appended["Upload-Offset"] == "300000")

        let rest = form.write(300_000..<form.bytes.count, to: receiver.root + "/rest")
        let conflict = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 299999", "-H", "Upload-Complete: ?1",
                                           "--data-binary", "@" + rest, location])
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

        let completed = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 300000", "-H", "Upload-Complete: ?1",
                                            "--data-binary", "@" + rest, location])
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
        let late = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: \(form.bytes.count)", "-H", "Upload-Complete: ?1",
                                       "--data-binary", "", location])
        #expect(late.status == 400)
        #expect(late.body.contains("completed-upload"))
        #expect(receiver.storedNames().filter { !$0.hasPrefix(".") } == ["big.png"])
        await receiver.cleanUp()
    }

    /// An append that ends where the parser must hold bytes back (they may begin the closing
    /// delimiter) leaves a checkpoint before its end; completing the upload then reads the
    /// stream from that checkpoint, past the split into the body file. That read once built a
    /// backwards range and stopped the whole receiver.
    @Test func completingFromACheckpointBeforeTheEndOfTheLastAppendWorks() async throws {
        let receiver = try await ReceiverHarness.start()
        let head = Array("--\(FormBody.boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"held.png\"\r\nContent-Type: image/png\r\n\r\n".utf8)
        var content = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + (0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        // The first append ends in "\r\n--": the start of a delimiter, as far as it can tell.
        let cut = 250_000
        content.replaceSubrange((cut - head.count - 4)..<(cut - head.count), with: Array("\r\n--".utf8.prefix(4)))
        let body = head + content + Array("\r\n--\(FormBody.boundary)--\r\n".utf8)
        _ = FileManager.default.createFile(atPath: receiver.root + "/first", contents: Data(body[0..<cut]))
        _ = FileManager.default.createFile(atPath: receiver.root + "/rest", contents: Data(body[cut...]))
        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "-H", "Upload-Length: \(body.count)",
                                          "-H", "Upload-Draft-Interop-Version: 8", "--data-binary", "", receiver.url])
        let location = try #require(created["Location"])
        let first = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?0",
                                        "--data-binary", "@" + receiver.root + "/first", location])
        #expect(first.status == 204 && first["Upload-Offset"] == String(cut), "\(first)")
        let rest = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: \(cut)", "-H", "Upload-Complete: ?1",
                                       "--data-binary", "@" + receiver.root + "/rest", location])
        #expect(rest.status == 200 && json(rest.body) == ["filename": "held.png"], "\(rest)")
        #expect(FileManager.default.contents(atPath: receiver.directory + "/held.png") == Data(content))
        await receiver.cleanUp()
    }

    /// Interop version 9 (the changes since draft -11): `OPTIONS` says the limits and no longer
    /// `Accept-Patch`; a lost final answer is had again by the valid append to the completed
    /// upload, which older versions refuse as an append to a completed upload.
    @Test func interopNineAsCurlSpeaksIt() async throws {
        let receiver = try await ReceiverHarness.start()
        let nine = try await exchange(["-X", "OPTIONS", "-H", "Upload-Draft-Interop-Version: 9", receiver.url])
        #expect(nine.status == 204 && nine["Upload-Draft-Interop-Version"] == "9", "\(nine)")
        #expect(nine["Upload-Limit"]?.contains("max-size=") == true)
        #expect(nine["Accept-Patch"] == nil)
        // RFC 9530 §4: it asks for a Content-Digest, so a client knows before it sends that
        // the digest it works out will be looked at.
        #expect(nine["Want-Content-Digest"] == "sha-256=10", "\(nine)")
        let eight = try await exchange(["-X", "OPTIONS", "-H", "Upload-Draft-Interop-Version: 8", receiver.url])
        #expect(eight["Accept-Patch"] == "application/partial-upload")

        let form = FormBody(name: "nine.png", size: 300_000)
        let whole = form.write(0..<form.bytes.count, to: receiver.root + "/whole")
        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?1", "-H", "Upload-Draft-Interop-Version: 9",
                                          "--data-binary", "@" + whole, receiver.url])
        #expect(created.status == 200 && json(created.body) == ["filename": "nine.png"], "\(created)")
        #expect(created.interim.map(\.status) == [104])
        #expect(created.interim.first?.fields["upload-draft-interop-version"] == "9")
        let location = try #require(created.interim.first?.fields["location"])
        let head = try await exchange(["-I", "-H", "Upload-Draft-Interop-Version: 9", location])
        #expect(head["Upload-Complete"] == "?1" && head["Upload-Offset"] == String(form.bytes.count) && head["Upload-Length"] == String(form.bytes.count))
        #expect(head["Upload-Limit"] != nil)

        let replay = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: \(form.bytes.count)", "-H", "Upload-Complete: ?1",
                                         "-H", "Upload-Draft-Interop-Version: 9", "--data-binary", "", location])
        #expect(replay.status == 200 && json(replay.body) == ["filename": "nine.png"], "\(replay)")
        #expect(replay["Upload-Complete"] == "?1")
        // Not at the end, or with content, or in version 8: refused, nothing appended.
        let early = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 5", "-H", "Upload-Complete: ?1",
                                        "-H", "Upload-Draft-Interop-Version: 9", "--data-binary", "", location])
        #expect(early.status == 400 && early.body.contains("completed-upload"), "\(early)")
        let older = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: \(form.bytes.count)", "-H", "Upload-Complete: ?1",
                                        "-H", "Upload-Draft-Interop-Version: 8", "--data-binary", "", location])
        #expect(older.status == 400 && older.body.contains("completed-upload"), "\(older)")
        #expect(receiver.storedNames().filter { !$0.hasPrefix(".") } == ["nine.png"])
        await receiver.cleanUp()
    }

    /// Interop version 10 (drafts -13 to -15): an offset retrieval answer no longer says
    /// `Upload-Complete` (PR #3493: it meant something else there than in every other answer)
    /// and `GET` retrieves the offset as `HEAD` does; a version past ours is refused naming ours.
    @Test func interopTenAsCurlSpeaksIt() async throws {
        let receiver = try await ReceiverHarness.start(maxSize: 600_000)
        let ten = try await exchange(["-X", "OPTIONS", "-H", "Upload-Draft-Interop-Version: 10", receiver.url])
        #expect(ten.status == 204 && ten["Upload-Draft-Interop-Version"] == "10", "\(ten)")
        #expect(ten["Upload-Limit"]?.contains("max-size=600000") == true && ten["Accept-Patch"] == nil, "\(ten)")

        let form = FormBody(name: "ten.png", size: 300_000)
        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "-H", "Upload-Length: \(form.bytes.count)",
                                          "-H", "Upload-Draft-Interop-Version: 10",
                                          "--data-binary", "@" + form.write(0..<1000, to: receiver.root + "/head"), receiver.url])
        #expect(created.status == 201 && created["Upload-Offset"] == "1000", "\(created)")
        #expect(created.interim.first?.fields["upload-draft-interop-version"] == "10")
        let location = try #require(created["Location"])
        for method in [["-I"], ["-X", "GET"]] {
            let retrieved = try await exchange(method + ["-H", "Upload-Draft-Interop-Version: 10", location])
            #expect(retrieved.status == 204, "\(method) \(retrieved)")
            if method == ["-X", "GET"] { #expect(retrieved.body.isEmpty, "no content: \(retrieved.body)") }
            #expect(retrieved["Upload-Offset"] == "1000" && retrieved["Upload-Length"] == String(form.bytes.count), "\(retrieved)")
            #expect(retrieved["Upload-Complete"] == nil, "\(retrieved)")
            #expect(retrieved["Upload-Limit"]?.contains("max-age=") == true && retrieved["Cache-Control"] == "no-store", "\(retrieved)")
            #expect(retrieved["Upload-Draft-Interop-Version"] == "10")
        }
        // Version 9 still says it.
        #expect(try await exchange(["-I", "-H", "Upload-Draft-Interop-Version: 9", location])["Upload-Complete"] == "?0")
        // A version newer than ours: refused, naming ours and what is spoken here.
        let newer = try await exchange(["-I", "-H", "Upload-Draft-Interop-Version: 11", location])
        #expect(newer.status == 400 && newer["Upload-Draft-Interop-Version"] == "10", "\(newer)")
        let said = try await exchange(["-X", "GET", "-H", "Upload-Draft-Interop-Version: 11", location])
        #expect(said.body.contains("10, 9, 8 and 6"), "\(said)")

        // Completing with fewer bytes than its length: refused (offset and length must meet).
        let short = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 1000", "-H", "Upload-Complete: ?1",
                                        "-H", "Upload-Draft-Interop-Version: 10",
                                        "--data-binary", "@" + form.write(1000..<2000, to: receiver.root + "/short"), location])
        #expect(short.status == 400 && short.body.contains("inconsistent-upload-length"), "\(short)")
        let after = try await exchange(["-I", "-H", "Upload-Draft-Interop-Version: 10", location])
        #expect(after.status == 204 && after["Upload-Offset"] == "1000", "the short content is not taken, the upload goes on: \(after)")

        // A whole upload, then its answer had again by the valid append; GET gives the offset.
        let whole = form.write(0..<form.bytes.count, to: receiver.root + "/whole")
        let done = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?1", "-H", "Upload-Draft-Interop-Version: 10",
                                       "--data-binary", "@" + whole, receiver.url])
        #expect(done.status == 200 && json(done.body) == ["filename": "ten.png"], "\(done)")
        let resource = try #require(done.interim.first?.fields["location"])
        let end = try await exchange(["-X", "GET", "-H", "Upload-Draft-Interop-Version: 10", resource])
        #expect(end.status == 204 && end["Upload-Offset"] == String(form.bytes.count) && end["Upload-Complete"] == nil, "\(end)")
        let replay = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: \(form.bytes.count)", "-H", "Upload-Complete: ?1",
                                         "-H", "Upload-Draft-Interop-Version: 10", "--data-binary", "", resource])
        #expect(replay.status == 200 && json(replay.body) == ["filename": "ten.png"] && replay["Upload-Complete"] == "?1", "\(replay)")
        // Version 8 had the answer by GET.
        let eight = try await exchange(["-X", "GET", "-H", "Upload-Draft-Interop-Version: 8", resource])
        #expect(eight.status == 200 && json(eight.body) == ["filename": "ten.png"], "\(eight)")

        // Past --max-size in a body of no declared length: 413 with every limit (PR #3466).
        let open = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "-H", "Upload-Draft-Interop-Version: 10",
                                       "--data-binary", "", receiver.url])
        let openLocation = try #require(open["Location"], "\(open)")
        let big = receiver.root + "/big"
        _ = FileManager.default.createFile(atPath: big, contents: Data(repeating: 65, count: 700_000))
        let over = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?0",
                                       "-H", "Upload-Draft-Interop-Version: 10", "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + big, openLocation])
        #expect(over.status == 413 && over["Upload-Limit"]?.contains("max-size=600000") == true, "\(over)")
        #expect(over["Upload-Limit"]?.contains("max-age=") == true, "all the limits, not only the one refused: \(over)")
        await receiver.cleanUp()
    }

    /// What URLSession (interop 6) does: the whole upload in one POST with `Upload-Complete: ?1`,
    /// told the resource in a `104` before the body, then the endpoint's own answer; cut, it
    /// would continue with HEAD and PATCH, here in version 6 too.
    @Test func anInteropSixClientUploadsOptimisticallyAndContinuesInVersionSix() async throws {
        let receiver = try await ReceiverHarness.start()
        let form = FormBody(name: "six.png", size: 200_000)
        let whole = form.write(0..<form.bytes.count, to: receiver.root + "/whole")
        let optimistic = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?1",
                                             "-H", "Upload-Draft-Interop-Version: 6", "--data-binary", "@" + whole, receiver.url])
        #expect(optimistic.status == 200, "\(optimistic)")
        #expect(optimistic.interim.map(\.status) == [104])
        #expect(optimistic.interim.first?.fields["upload-draft-interop-version"] == "6")
        #expect(optimistic.interim.first?.fields["location"]?.contains("/resumable/") == true)
        #expect(json(optimistic.body) == ["filename": "six.png"])
        #expect(FileManager.default.contents(atPath: receiver.directory + "/six.png") == Data(form.content))

        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0",
                                          "-H", "Upload-Draft-Interop-Version: 6", "--data-binary", "@" + form.write(0..<1000, to: receiver.root + "/head"),
                                          receiver.url])
        #expect(created.status == 201 && created["Upload-Offset"] == "1000", "\(created)")
        let location = try #require(created["Location"])
        let offset = try await exchange(["-I", "-H", "Upload-Draft-Interop-Version: 6", location])
        #expect(offset["Upload-Offset"] == "1000")
        let rest = form.write(1000..<form.bytes.count, to: receiver.root + "/rest")
        let completed = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 1000", "-H", "Upload-Complete: ?1",
                                            "-H", "Upload-Draft-Interop-Version: 6", "--data-binary", "@" + rest, location])
        #expect(completed.status == 200, "\(completed)")
        #expect(json(completed.body) == ["filename": "six-1.png"])
        #expect(FileManager.default.contents(atPath: receiver.directory + "/six-1.png") == Data(form.content))
        await receiver.cleanUp()
    }

    @Test func cancellingRemovesTheUploadAndItsBytes() async throws {
        let receiver = try await ReceiverHarness.start()
        let form = FormBody(size: 50_000)
        let body = form.write(0..<20_000, to: receiver.root + "/part")
        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "--data-binary", "@" + body, receiver.url])
        #expect(created.status == 201)
        #expect(created.interim.isEmpty, "no 104 without an interop version")
        #expect(created["Upload-Offset"] == "20000")
        let location = try #require(created["Location"])
        let folder = receiver.directory + "/.uploadmon-resumable"
        let token = String(location.split(separator: "/").last ?? "")
        // The stream up to the file's bytes, the file's bytes from there on, the record.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [token + ".body", token + ".json", token + ".part"])
        #expect(TestFiles.size(of: folder + "/" + token + ".part") == Int64(form.bytes.firstRange(of: form.content)!.lowerBound))
        let cancelled = try await exchange(["-X", "DELETE", location])
        #expect(cancelled.status == 204)
        #expect(try await exchange(["-I", location]).status == 404)
        #expect(!FileManager.default.fileExists(atPath: folder), "the private folder goes with its last upload")
        await receiver.cleanUp()
    }

    /// The receiver reads the time from its clock: moved past an upload's idle age by hand, the
    /// upload is gone at once, with no waiting.
    @Test func anUploadIdleLongerThanItsAgeByTheReceiversClockIsGone() async throws {
        let time = ManualClock()
        let receiver = try await ReceiverHarness.start(resumableMaxAge: .seconds(7200), resumableIdleAge: .seconds(1800), clock: time.clock)
        let form = FormBody(size: 50_000)
        let body = form.write(0..<20_000, to: receiver.root + "/part")
        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "--data-binary", "@" + body, receiver.url])
        #expect(created.status == 201, "\(created)")
        let location = try #require(created["Location"])
        time.advance(by: 1700)
        let kept = try await exchange(["-I", location])
        #expect(kept.status == 204 && kept["Upload-Offset"] == "20000", "\(kept)")
        time.advance(by: 1801)
        #expect(try await exchange(["-I", location]).status == 404, "idle for 1,801 s by the receiver's clock")
        await receiver.cleanUp()
    }

    @Test func optionsSaysResumableUploadsAreSupportedAndTheirLimits() async throws {
        let receiver = try await ReceiverHarness.start(maxSize: 5_000_000, resumableMaxAge: .seconds(7200), resumableIdleAge: .seconds(1800))
        let answer = try await exchange(["-X", "OPTIONS", "-H", "Upload-Draft-Interop-Version: 6", receiver.url])
        #expect(answer.status == 204)
        #expect(answer["Accept-Patch"] == "application/partial-upload")
        // An upload lives as long as requests keep touching it within the idle age: that is what a client can rely on.
        #expect(answer["Upload-Limit"] == "max-size=5000000, max-age=1800")
        #expect(answer["Upload-Draft-Interop-Version"] == "6")
        await receiver.cleanUp()
    }

    /// `serve --resume-max-append`: the limit is said, and a request over it is refused with it
    /// before any of it is kept; requests within it make the upload.
    @Test func aLimitOnEachRequestIsSaidAndARequestOverItRefused() async throws {
        let receiver = try await ReceiverHarness.start(resumableMaxAppend: 100_000)
        let options = try await exchange(["-X", "OPTIONS", "-H", "Upload-Draft-Interop-Version: 9", receiver.url])
        #expect(options["Upload-Limit"]?.contains("max-append-size=100000") == true, "\(options)")
        let form = FormBody(name: "parts.png", size: 250_000)
        let whole = form.write(0..<form.bytes.count, to: receiver.root + "/whole")
        let tooLarge = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?1", "-H", "Upload-Draft-Interop-Version: 9",
                                           "--data-binary", "@" + whole, receiver.url])
        #expect(tooLarge.status == 413 && tooLarge["Upload-Limit"]?.contains("max-append-size=100000") == true, "\(tooLarge)")
        #expect(tooLarge.interim.isEmpty, "no upload resource was made")
        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "-H", "Upload-Draft-Interop-Version: 9",
                                          "--data-binary", "", receiver.url])
        let location = try #require(created["Location"], "\(created)")
        let over = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?0",
                                       "-H", "Upload-Draft-Interop-Version: 9", "--data-binary", "@" + whole, location])
        #expect(over.status == 413, "\(over)")
        var offset = 0
        while offset < form.bytes.count {
            let end = min(offset + 100_000, form.bytes.count)
            let part = form.write(offset..<end, to: receiver.root + "/part\(offset)")
            let appended = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: \(offset)",
                                               "-H", "Upload-Complete: \(end == form.bytes.count ? "?1" : "?0")",
                                               "-H", "Upload-Draft-Interop-Version: 9", "--data-binary", "@" + part, location])
            #expect(end == form.bytes.count ? appended.status == 200 : appended.status == 204, "\(appended)")
            offset = end
        }
        #expect(receiver.storedNames().filter { !$0.hasPrefix(".") } == ["parts.png"])
        await receiver.cleanUp()
    }

    @Test func aRestartBetweenTwoAppendsKeepsTheUpload() async throws {
        let first = try await ReceiverHarness.start()
        let form = FormBody(size: 400_000)
        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0",
                                          "--data-binary", "@" + form.write(0..<150_000, to: first.root + "/a"), first.url])
        let path = try #require(created["Location"].flatMap { URL(string: $0)?.path })
        await first.stop()
        // The record says how far the file's bytes were read, so completing it skips them.
        let token = String(path.split(separator: "/").last ?? "")
        let record = try #require(FileManager.default.contents(atPath: first.directory + "/.uploadmon-resumable/" + token + ".json"))
        let checkpoint = try #require((try JSONSerialization.jsonObject(with: record) as? [String: Any])?["checkpoint"] as? Int)
        #expect(checkpoint > form.bytes.firstRange(of: form.content)!.lowerBound && checkpoint <= 150_000, "\(checkpoint)")

        let second = try await ReceiverHarness.start(reusing: first.root)
        let location = "http://127.0.0.1:\(second.port)\(path)"
        let offset = try await exchange(["-I", location])
        #expect(offset["Upload-Offset"] == "150000", "\(offset)")
        let completed = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 150000", "-H", "Upload-Complete: ?1",
                                            "--data-binary", "@" + form.write(150_000..<form.bytes.count, to: second.root + "/b"), location])
        #expect(completed.status == 200, "\(completed)")
        #expect(FileManager.default.contents(atPath: second.directory + "/big.png") == Data(form.content))
        await second.cleanUp()
    }

    @Test func aCutTransferKeepsWhatArrivedAndANewerRequestEndsAStalledOne() async throws {
        let receiver = try await ReceiverHarness.start()
        let form = FormBody(size: 2_000_000)
        // An optimistic creation: the whole body in one request, announced with 104 before it.
        let connection = try RawConnection.connect(to: receiver.port)
        defer { connection.close() }
        let head = "POST /photo HTTP/1.1\r\nHost: 127.0.0.1:\(receiver.port)\r\n\(multipart)\r\nContent-Length: \(form.bytes.count)\r\n"
            + "Upload-Complete: ?1\r\nUpload-Draft-Interop-Version: 6\r\n\r\n"
        #expect(connection.send(Array(head.utf8)))
        let announced = try await offPool { connection.read(until: "\r\n\r\n", timeout: 10) }
        #expect(announced.hasPrefix("HTTP/1.1 104 Upload Resumption Supported\r\n"), "\(announced)")
        let location = try #require(announced.split(separator: "\r\n").first { $0.lowercased().hasPrefix("location:") }
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

        let completed = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: \(kept)", "-H", "Upload-Complete: ?1",
                                            "-H", "Upload-Draft-Interop-Version: 6",
                                            "--data-binary", "@" + form.write(kept..<form.bytes.count, to: receiver.root + "/rest"), location])
        #expect(completed.status == 200, "\(completed)")
        #expect(completed["Upload-Draft-Interop-Version"] == "6")
        #expect(FileManager.default.contents(atPath: receiver.directory + "/big.png") == Data(form.content))
        await receiver.cleanUp()
    }

    @Test func aBodyThatIsNoUploadIsAnsweredAsTheEndpointWouldOnceComplete() async throws {
        let receiver = try await ReceiverHarness.start()
        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "--data-binary", "", receiver.url])
        let location = try #require(created["Location"])
        let junk = receiver.root + "/junk"
        _ = FileManager.default.createFile(atPath: junk, contents: Data("--\(FormBody.boundary)\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--\(FormBody.boundary)--\r\n".utf8))
        let answer = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?1",
                                         "--data-binary", "@" + junk, location])
        #expect(answer.status == 400)
        #expect(answer["Upload-Complete"] == "?1", "the representation was complete; its processing failed")
        #expect(json(answer.body)["error"] == "no file in the form field 'photo'")
        #expect(receiver.storedNames().filter { !$0.hasPrefix(".") }.isEmpty)
        await receiver.cleanUp()
    }

    @Test func contentPastTheStatedLengthEndsTheUpload() async throws {
        let receiver = try await ReceiverHarness.start()
        let created = try await exchange(["-X", "POST", "-H", multipart, "-H", "Upload-Complete: ?0", "-H", "Upload-Length: 100",
                                          "--data-binary", "", receiver.url])
        let location = try #require(created["Location"])
        let body = receiver.root + "/long"
        _ = FileManager.default.createFile(atPath: body, contents: Data(repeating: 65, count: 150))
        // No Content-Length to judge by in advance: chunked.
        let answer = try await exchange(["-X", "PATCH", "-H", partial, "-H", "Upload-Offset: 0", "-H", "Upload-Complete: ?0",
                                         "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + body, location])
        #expect(answer.status == 400)
        #expect(answer.body.contains("inconsistent-upload-length"))
        #expect(try await exchange(["-I", location]).status == 404)
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
        let head = "POST /photo HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=\(FormBody.boundary)\r\n"
            + "Content-Length: \(form.bytes.count)\r\nIdempotency-Key: \"cut-once\"\r\n\r\n"
        #expect(connection.send(Array(head.utf8) + Array(form.bytes[0..<100_000])))
        #expect(try await eventually { TestFiles.openFiles(in: receiver.directory) == 1 })
        connection.reset()
        #expect(try await eventually { receiver.logLines.count == 1 })
        let retry = try await exchange(["-H", #"Idempotency-Key: "cut-once""#, "-H", "Content-Type: multipart/form-data; boundary=" + FormBody.boundary,
                                        "--data-binary", "@" + form.write(0..<form.bytes.count, to: receiver.root + "/whole"), receiver.url])
        #expect(retry.status == 200, "\(retry)")
        #expect(retry["Idempotent-Replayed"] == nil)
        #expect(receiver.storedNames() == ["cut.png"])
        await receiver.cleanUp()
    }
}
