import Foundation
import HTTPTypes
import Testing
import UploadCore
import UploadTesting
@testable import Receiver

/// The receiver's resumable uploads (draft-ietf-httpbis-resumable-upload, interop 6, 8, 9, 10)
/// in process, through `EndpointDriver`: no socket. What only the connection can show (the
/// `104` before the body, a stalled request ended by a newer one, curl as the client) stays in
/// `ResumableReceiverTests`.
@Suite(.timeLimit(.minutes(2))) struct ResumableEndpointTests {
    func multipart(_ more: [String: String]) -> [String: String] {
        more.merging(["Content-Type": "multipart/form-data; boundary=\(FormBody.boundary)"]) { mine, _ in mine }
    }

    func partial(_ more: [String: String]) -> [String: String] {
        more.merging(["Content-Type": "application/partial-upload"]) { mine, _ in mine }
    }

    /// An append that ends where the parser must hold bytes back (they may begin the closing
    /// delimiter) leaves a checkpoint before its end; completing the upload then reads the
    /// stream from that checkpoint, past the split into the body file. That read once built a
    /// backwards range and stopped the whole receiver.
    @Test func completingFromACheckpointBeforeTheEndOfTheLastAppendWorks() async throws {
        let receiver = try EndpointDriver()
        let head = Array(
            "--\(FormBody.boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"held.png\"\r\nContent-Type: image/png\r\n\r\n".utf8)
        var content = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + (0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        // The first append ends in "\r\n--": the start of a delimiter, as far as it can tell.
        let cut = 250_000
        content.replaceSubrange((cut - head.count - 4)..<(cut - head.count), with: Array("\r\n--".utf8.prefix(4)))
        let body = head + content + Array("\r\n--\(FormBody.boundary)--\r\n".utf8)
        let created = try await receiver.send(
            .post, nil, multipart(["Upload-Complete": "?0", "Upload-Length": "\(body.count)", "Upload-Draft-Interop-Version": "8"]))
        #expect(created.status == 201, "\(created)")
        let location = try #require(created["Location"])
        #expect(location.hasPrefix("http://uploads.test/resumable/"))
        let first = try await receiver.send(.patch, location, partial(["Upload-Offset": "0", "Upload-Complete": "?0"]), body: Array(body[0..<cut]))
        #expect(first.status == 204 && first["Upload-Offset"] == String(cut), "\(first)")
        let rest = try await receiver.send(.patch, location, partial(["Upload-Offset": "\(cut)", "Upload-Complete": "?1"]), body: Array(body[cut...]))
        #expect(rest.status == 200 && json(rest.body) == ["filename": "held.png"], "\(rest)")
        #expect(FileManager.default.contents(atPath: receiver.directory + "/held.png") == Data(content))
    }

    /// Interop version 9 (the changes since draft -11): `OPTIONS` says the limits and no longer
    /// `Accept-Patch`; a lost final answer is had again by the valid append to the completed
    /// upload, which older versions refuse as an append to a completed upload.
    @Test func interopNine() async throws {
        let receiver = try EndpointDriver()
        let nine = try await receiver.send(.options, nil, ["Upload-Draft-Interop-Version": "9"])
        #expect(nine.status == 204 && nine["Upload-Draft-Interop-Version"] == "9", "\(nine)")
        #expect(nine["Upload-Limit"]?.contains("max-size=") == true)
        #expect(nine["Accept-Patch"] == nil)
        // RFC 9530 §4: it asks for a Content-Digest, so a client knows before it sends that
        // the digest it works out will be looked at.
        #expect(nine["Want-Content-Digest"] == "sha-256=10", "\(nine)")
        let eight = try await receiver.send(.options, nil, ["Upload-Draft-Interop-Version": "8"])
        #expect(eight["Accept-Patch"] == "application/partial-upload")

        let form = FormBody(name: "nine.png", size: 300_000)
        let created = try await receiver.send(.post, nil, multipart(["Upload-Complete": "?1", "Upload-Draft-Interop-Version": "9"]), body: form.bytes)
        #expect(created.status == 200 && json(created.body) == ["filename": "nine.png"], "\(created)")
        let location = try #require(created["Location"])
        let head = try await receiver.send(.head, location, ["Upload-Draft-Interop-Version": "9"])
        #expect(head["Upload-Complete"] == "?1" && head["Upload-Offset"] == String(form.bytes.count) && head["Upload-Length"] == String(form.bytes.count))
        #expect(head["Upload-Limit"] != nil)

        let replay = try await receiver.send(
            .patch, location, partial(["Upload-Offset": "\(form.bytes.count)", "Upload-Complete": "?1", "Upload-Draft-Interop-Version": "9"]))
        #expect(replay.status == 200 && json(replay.body) == ["filename": "nine.png"], "\(replay)")
        #expect(replay["Upload-Complete"] == "?1")
        // Not at the end, or with content, or in version 8: refused, nothing appended.
        let early = try await receiver.send(.patch, location, partial(["Upload-Offset": "5", "Upload-Complete": "?1", "Upload-Draft-Interop-Version": "9"]))
        #expect(early.status == 400 && early.body.contains("completed-upload"), "\(early)")
        let withContent = try await receiver.send(
            .patch, location,
            partial([
                "Upload-Offset": "\(form.bytes.count)", "Upload-Complete": "?1",
                "Upload-Draft-Interop-Version": "9",
            ]), body: [1, 2, 3])
        #expect(withContent.status == 400 && withContent.body.contains("inconsistent-upload-length"), "\(withContent)")
        let older = try await receiver.send(
            .patch, location, partial(["Upload-Offset": "\(form.bytes.count)", "Upload-Complete": "?1", "Upload-Draft-Interop-Version": "8"]))
        #expect(older.status == 400 && older.body.contains("completed-upload"), "\(older)")
        #expect(receiver.storedNames() == ["nine.png"])
    }

    /// Interop version 10 (drafts -13 to -15): an offset retrieval answer no longer says
    /// `Upload-Complete` (PR #3493: it meant something else there than in every other answer)
    /// and `GET` retrieves the offset as `HEAD` does; a version past ours is refused naming ours.
    @Test func interopTen() async throws {
        let receiver = try EndpointDriver(maxSize: 600_000)
        let ten = try await receiver.send(.options, nil, ["Upload-Draft-Interop-Version": "10"])
        #expect(ten.status == 204 && ten["Upload-Draft-Interop-Version"] == "10", "\(ten)")
        #expect(ten["Upload-Limit"]?.contains("max-size=600000") == true && ten["Accept-Patch"] == nil, "\(ten)")

        let form = FormBody(name: "ten.png", size: 300_000)
        let created = try await receiver.send(
            .post, nil,
            multipart([
                "Upload-Complete": "?0", "Upload-Length": "\(form.bytes.count)",
                "Upload-Draft-Interop-Version": "10",
            ]), body: Array(form.bytes[0..<1000]))
        #expect(created.status == 201 && created["Upload-Offset"] == "1000", "\(created)")
        let location = try #require(created["Location"])
        for method in [HTTPRequest.Method.head, .get] {
            let retrieved = try await receiver.send(method, location, ["Upload-Draft-Interop-Version": "10"])
            #expect(retrieved.status == 204, "\(method) \(retrieved)")
            #expect(retrieved.body.isEmpty, "no content: \(retrieved.body)")
            #expect(retrieved["Upload-Offset"] == "1000" && retrieved["Upload-Length"] == String(form.bytes.count), "\(retrieved)")
            #expect(retrieved["Upload-Complete"] == nil, "\(retrieved)")
            #expect(retrieved["Upload-Limit"]?.contains("max-age=") == true && retrieved["Cache-Control"] == "no-store", "\(retrieved)")
            #expect(retrieved["Upload-Draft-Interop-Version"] == "10")
        }
        // Version 9 still says it.
        #expect(try await receiver.send(.head, location, ["Upload-Draft-Interop-Version": "9"])["Upload-Complete"] == "?0")
        // A version newer than ours: refused, naming ours and what is spoken here.
        let newer = try await receiver.send(.get, location, ["Upload-Draft-Interop-Version": "11"])
        #expect(newer.status == 400 && newer["Upload-Draft-Interop-Version"] == "10", "\(newer)")
        #expect(newer.body.contains("10, 9, 8 and 6"), "\(newer)")

        // Completing with fewer bytes than its length: refused (offset and length must meet).
        let short = try await receiver.send(
            .patch, location, partial(["Upload-Offset": "1000", "Upload-Complete": "?1", "Upload-Draft-Interop-Version": "10"]),
            body: Array(form.bytes[1000..<2000]))
        #expect(short.status == 400 && short.body.contains("inconsistent-upload-length"), "\(short)")
        let after = try await receiver.send(.head, location, ["Upload-Draft-Interop-Version": "10"])
        #expect(after.status == 204 && after["Upload-Offset"] == "1000", "the short content is not taken, the upload goes on: \(after)")

        // A whole upload, then its answer had again by the valid append; GET gives the offset.
        let done = try await receiver.send(.post, nil, multipart(["Upload-Complete": "?1", "Upload-Draft-Interop-Version": "10"]), body: form.bytes)
        #expect(done.status == 200 && json(done.body) == ["filename": "ten.png"], "\(done)")
        let resource = try #require(done["Location"])
        let end = try await receiver.send(.get, resource, ["Upload-Draft-Interop-Version": "10"])
        #expect(end.status == 204 && end["Upload-Offset"] == String(form.bytes.count) && end["Upload-Complete"] == nil, "\(end)")
        let replay = try await receiver.send(
            .patch, resource, partial(["Upload-Offset": "\(form.bytes.count)", "Upload-Complete": "?1", "Upload-Draft-Interop-Version": "10"]))
        #expect(replay.status == 200 && json(replay.body) == ["filename": "ten.png"] && replay["Upload-Complete"] == "?1", "\(replay)")
        // Version 8 had the answer by GET.
        let eight = try await receiver.send(.get, resource, ["Upload-Draft-Interop-Version": "8"])
        #expect(eight.status == 200 && json(eight.body) == ["filename": "ten.png"], "\(eight)")

        // Past --max-size in a body of no declared length: 413 with every limit (PR #3466).
        let open = try await receiver.send(.post, nil, multipart(["Upload-Complete": "?0", "Upload-Draft-Interop-Version": "10"]))
        let openLocation = try #require(open["Location"], "\(open)")
        let over = try await receiver.send(
            .patch, openLocation, partial(["Upload-Offset": "0", "Upload-Complete": "?0", "Upload-Draft-Interop-Version": "10"]),
            body: [UInt8](repeating: 65, count: 700_000), chunked: true)
        #expect(over.status == 413 && over["Upload-Limit"]?.contains("max-size=600000") == true, "\(over)")
        #expect(over["Upload-Limit"]?.contains("max-age=") == true, "all the limits, not only the one refused: \(over)")
        // What came before the limit is kept: the upload goes on from there.
        let kept = try await receiver.send(.head, openLocation, ["Upload-Draft-Interop-Version": "10"])
        #expect(kept.status == 204 && kept["Upload-Offset"].flatMap(Int.init).map { $0 <= 600_000 } == true, "\(kept)")
    }

    @Test func cancellingRemovesTheUploadAndItsBytes() async throws {
        let receiver = try EndpointDriver()
        let form = FormBody(size: 50_000)
        let created = try await receiver.send(.post, nil, multipart(["Upload-Complete": "?0"]), body: Array(form.bytes[0..<20_000]))
        #expect(created.status == 201)
        #expect(created["Upload-Offset"] == "20000")
        let location = try #require(created["Location"])
        let folder = receiver.directory + "/.uploadmon-resumable"
        let token = String(location.split(separator: "/").last ?? "")
        // The stream up to the file's bytes, the file's bytes from there on, the record.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == [token + ".body", token + ".json", token + ".part"])
        #expect(TestFiles.size(of: folder + "/" + token + ".part") == Int64(form.bytes.firstRange(of: form.content)!.lowerBound))
        let cancelled = try await receiver.send(.delete, location)
        #expect(cancelled.status == 204)
        #expect(try await receiver.send(.head, location).status == 404)
        #expect(!FileManager.default.fileExists(atPath: folder), "the private folder goes with its last upload")
    }

    /// The receiver reads the time from its clock: moved past an upload's idle age by hand, the
    /// upload is gone at once, with no waiting.
    @Test func anUploadIdleLongerThanItsAgeByTheReceiversClockIsGone() async throws {
        let time = ManualClock()
        let receiver = try EndpointDriver(resumableMaxAge: .seconds(7200), resumableIdleAge: .seconds(1800), clock: time.clock)
        let form = FormBody(size: 50_000)
        let created = try await receiver.send(.post, nil, multipart(["Upload-Complete": "?0"]), body: Array(form.bytes[0..<20_000]))
        #expect(created.status == 201, "\(created)")
        let location = try #require(created["Location"])
        time.advance(by: 1700)
        let kept = try await receiver.send(.head, location)
        #expect(kept.status == 204 && kept["Upload-Offset"] == "20000", "\(kept)")
        time.advance(by: 1801)
        #expect(try await receiver.send(.head, location).status == 404, "idle for 1,801 s by the receiver's clock")
    }

    @Test func optionsSaysResumableUploadsAreSupportedAndTheirLimits() async throws {
        let receiver = try EndpointDriver(maxSize: 5_000_000, resumableMaxAge: .seconds(7200), resumableIdleAge: .seconds(1800))
        let answer = try await receiver.send(.options, nil, ["Upload-Draft-Interop-Version": "6"])
        #expect(answer.status == 204)
        #expect(answer["Accept-Patch"] == "application/partial-upload")
        // An upload lives as long as requests keep touching it within the idle age: that is what a client can rely on.
        #expect(answer["Upload-Limit"] == "max-size=5000000, max-age=1800")
        #expect(answer["Upload-Draft-Interop-Version"] == "6")
    }

    /// `serve --resume-max-append`: the limit is said, and a request over it is refused with it
    /// before any of it is kept; requests within it make the upload.
    @Test func aLimitOnEachRequestIsSaidAndARequestOverItRefused() async throws {
        let receiver = try EndpointDriver(resumableMaxAppend: 100_000)
        let options = try await receiver.send(.options, nil, ["Upload-Draft-Interop-Version": "9"])
        #expect(options["Upload-Limit"]?.contains("max-append-size=100000") == true, "\(options)")
        let form = FormBody(name: "parts.png", size: 250_000)
        let tooLarge = try await receiver.send(.post, nil, multipart(["Upload-Complete": "?1", "Upload-Draft-Interop-Version": "9"]), body: form.bytes)
        #expect(tooLarge.status == 413 && tooLarge["Upload-Limit"]?.contains("max-append-size=100000") == true, "\(tooLarge)")
        #expect(!FileManager.default.fileExists(atPath: receiver.directory + "/.uploadmon-resumable"), "no upload resource was made")
        let created = try await receiver.send(.post, nil, multipart(["Upload-Complete": "?0", "Upload-Draft-Interop-Version": "9"]))
        let location = try #require(created["Location"], "\(created)")
        let over = try await receiver.send(
            .patch, location, partial(["Upload-Offset": "0", "Upload-Complete": "?0", "Upload-Draft-Interop-Version": "9"]), body: form.bytes)
        #expect(over.status == 413, "\(over)")
        var offset = 0
        while offset < form.bytes.count {
            let end = min(offset + 100_000, form.bytes.count)
            let appended = try await receiver.send(
                .patch, location,
                partial([
                    "Upload-Offset": "\(offset)", "Upload-Complete": end == form.bytes.count ? "?1" : "?0",
                    "Upload-Draft-Interop-Version": "9",
                ]), body: Array(form.bytes[offset..<end]))
            #expect(end == form.bytes.count ? appended.status == 200 : appended.status == 204, "\(appended)")
            offset = end
        }
        #expect(receiver.storedNames() == ["parts.png"])
    }

    @Test func aRestartBetweenTwoAppendsKeepsTheUpload() async throws {
        let first = try EndpointDriver()
        let form = FormBody(size: 400_000)
        let created = try await first.send(.post, nil, multipart(["Upload-Complete": "?0"]), body: Array(form.bytes[0..<150_000]))
        let location = try #require(created["Location"])
        // The record says how far the file's bytes were read, so completing it skips them.
        let token = String(location.split(separator: "/").last ?? "")
        let record = try #require(FileManager.default.contents(atPath: first.directory + "/.uploadmon-resumable/" + token + ".json"))
        let checkpoint = try #require((try JSONSerialization.jsonObject(with: record) as? [String: Any])?["checkpoint"] as? Int)
        #expect(checkpoint > form.bytes.firstRange(of: form.content)!.lowerBound && checkpoint <= 150_000, "\(checkpoint)")

        // Another receiver on the same folder, as after a restart.
        let second = try EndpointDriver(reusing: first.root)
        let offset = try await second.send(.head, location)
        #expect(offset["Upload-Offset"] == "150000", "\(offset)")
        let completed = try await second.send(
            .patch, location, partial(["Upload-Offset": "150000", "Upload-Complete": "?1"]), body: Array(form.bytes[150_000...]))
        #expect(completed.status == 200, "\(completed)")
        #expect(FileManager.default.contents(atPath: second.directory + "/big.png") == Data(form.content))
    }

    /// A request cut part-way (its connection dropped) keeps every byte it brought; the client
    /// learns the offset and goes on from it.
    @Test func aCutRequestKeepsWhatArrived() async throws {
        let receiver = try EndpointDriver()
        let form = FormBody(size: 1_000_000)
        let cut = try await receiver.send(
            .post, nil, multipart(["Upload-Complete": "?1", "Upload-Draft-Interop-Version": "8"]),
            body: form.bytes, cutAfter: 600_000)
        #expect(cut.status == 400 && cut.body.contains("interrupted at offset 600000"), "\(cut)")
        let location = try #require(cut["Location"])
        #expect(receiver.keptSize(location) == 600_000)
        let offset = try await receiver.send(.head, location, ["Upload-Draft-Interop-Version": "8"])
        #expect(offset["Upload-Offset"] == "600000", "\(offset)")
        let completed = try await receiver.send(
            .patch, location, partial(["Upload-Offset": "600000", "Upload-Complete": "?1", "Upload-Draft-Interop-Version": "8"]),
            body: Array(form.bytes[600_000...]))
        #expect(completed.status == 200, "\(completed)")
        #expect(FileManager.default.contents(atPath: receiver.directory + "/big.png") == Data(form.content))
    }

    @Test func aBodyThatIsNoUploadIsAnsweredAsTheEndpointWouldOnceComplete() async throws {
        let receiver = try EndpointDriver()
        let created = try await receiver.send(.post, nil, multipart(["Upload-Complete": "?0"]))
        let location = try #require(created["Location"])
        let junk = Array("--\(FormBody.boundary)\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--\(FormBody.boundary)--\r\n".utf8)
        let answer = try await receiver.send(.patch, location, partial(["Upload-Offset": "0", "Upload-Complete": "?1"]), body: junk)
        #expect(answer.status == 400)
        #expect(answer["Upload-Complete"] == "?1", "the representation was complete; its processing failed")
        #expect(json(answer.body)["error"] == "no file in the form field 'photo'")
        #expect(receiver.storedNames().isEmpty)
        // Nothing of it is kept: the upload is gone.
        #expect(try await receiver.send(.head, location).status == 404)
    }

    @Test func contentPastTheStatedLengthEndsTheUpload() async throws {
        let receiver = try EndpointDriver()
        let created = try await receiver.send(.post, nil, multipart(["Upload-Complete": "?0", "Upload-Length": "100"]))
        let location = try #require(created["Location"])
        // No Content-Length to judge by in advance.
        let answer = try await receiver.send(
            .patch, location, partial(["Upload-Offset": "0", "Upload-Complete": "?0"]),
            body: [UInt8](repeating: 65, count: 150), chunked: true)
        #expect(answer.status == 400)
        #expect(answer.body.contains("inconsistent-upload-length"))
        #expect(try await receiver.send(.head, location).status == 404)
    }
}
