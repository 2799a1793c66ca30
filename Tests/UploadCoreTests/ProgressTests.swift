import UploadTesting
import Foundation
import Testing
@testable import UploadCore

@Suite struct ProgressTests {
    @Test func rateIsSmoothedNotJumpy() {
        var meter = RateMeter(halfLife: 2)
        meter.record(totalBytes: 0, at: 0)
        meter.record(totalBytes: 1_000_000, at: 1)  // 1 MB/s
        #expect(meter.bytesPerSecond == 1_000_000)
        meter.record(totalBytes: 11_000_000, at: 2)  // burst: 10 MB/s for one second
        let rate = meter.bytesPerSecond!
        #expect(rate > 1_000_000 && rate < 5_000_000)
        #expect(meter.eta(remainingBytes: Int64(rate) * 3)! > 2.9)
    }

    @Test func samplesTooCloseTogetherAreAccumulated() {
        var meter = RateMeter()
        meter.record(totalBytes: 0, at: 0)
        meter.record(totalBytes: 100, at: 0.001)
        #expect(meter.bytesPerSecond == nil)
        meter.record(totalBytes: 1000, at: 0.1)
        #expect(meter.bytesPerSecond == 10_000)
    }

    @Test func formatting() {
        #expect(ByteFormat.bytes(0) == "0 B")
        #expect(ByteFormat.bytes(999) == "999 B")
        #expect(ByteFormat.bytes(2_100_000) == "2.10 MB")
        #expect(ByteFormat.bytes(52_100_000) == "52.1 MB")
        #expect(ByteFormat.bytes(1_073_741_824) == "1.07 GB")
        #expect(ByteFormat.duration(1.44) == "1.4 s")
        #expect(ByteFormat.duration(185) == "3m05s")
        #expect(ByteFormat.eta(7) == "0:07")
        #expect(ByteFormat.eta(3723) == "1:02:03")
        #expect(ProgressText.bar(fraction: 0.5, width: 10) == "#####-----")
        #expect(ProgressText.bar(fraction: nil, width: 4) == "----")
        #expect(ProgressText.percent(0.426) == " 42%")
    }

    @Test func trackerFollowsEventsAndDropsUnknownIDs() {
        var tracker = TransferTracker()
        let id = UploadID(1)
        tracker.apply(.queued(id, name: "a.jpg", totalBytes: 100), now: 0, date: Date(timeIntervalSince1970: 1_700_000_000 + 0))
        tracker.apply(.started(id, attempt: 1, url: "http://h/p", totalBytes: 300), now: 0, date: Date(timeIntervalSince1970: 1_700_000_000 + 0))
        tracker.apply(.progress(id, bytesSent: 150, totalBytesSent: 150, totalBytesExpected: 300), now: 1, date: Date(timeIntervalSince1970: 1_700_000_000 + 1))
        #expect(tracker[id]?.fraction == 0.5)
        tracker.apply(
            .progress(UploadID(9), bytesSent: 1, totalBytesSent: 1, totalBytesExpected: 1), now: 1, date: Date(timeIntervalSince1970: 1_700_000_000 + 1))
        #expect(tracker[UploadID(9)] == nil)
        tracker.apply(.finished(id, .answered(status: 201)), now: 2, date: Date(timeIntervalSince1970: 1_700_000_000 + 2))
        #expect(tracker[id]?.outcome?.isSuccess == true)
        #expect(tracker[id]?.elapsed == 2)
    }
}

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxRetries: 3, baseDelay: 1, maxDelay: 8)

    func response(_ status: Int, _ headers: [(String, String)] = []) -> UploadResponse {
        UploadResponse(status: status, reason: "", headers: headers, body: [], bodyBytesTotal: 0)
    }

    @Test func backsOffExponentiallyForTransientFailures() {
        let refused = UploadOutcome.failed(UploadFailure(.cannotConnect, "refused"))
        #expect(policy.delay(after: refused, response: nil, attempt: 1, now: Date()) == 1)
        #expect(policy.delay(after: refused, response: nil, attempt: 2, now: Date()) == 2)
        #expect(policy.delay(after: refused, response: nil, attempt: 3, now: Date()) == 4)
        #expect(policy.delay(after: refused, response: nil, attempt: 4, now: Date()) == nil)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func retriesRetryableStatuses(status: Int) {
        #expect(policy.delay(after: .answered(status: status), response: response(status), attempt: 1, now: Date()) == 1)
    }

    @Test(arguments: [200, 400, 404, 413, 501, 505])
    func doesNotRetryOtherStatuses(status: Int) {
        #expect(policy.delay(after: .answered(status: status), response: response(status), attempt: 1, now: Date()) == nil)
    }

    /// A retry that repeats an Idempotency-Key may meet the attempt before still running at the
    /// server (its cut connection not yet noticed): 409 then means "wait", not "conflict".
    @Test func aConflictWithAnEarlierAttemptOfTheSameKeyIsWaitedOut() {
        let conflict = UploadOutcome.answered(status: 409)
        #expect(policy.delay(after: conflict, response: response(409, [("Retry-After", "1")]), attempt: 2, keyed: true, now: Date()) == 1)
        #expect(policy.delay(after: conflict, response: response(409), attempt: 2, keyed: true, now: Date()) == 2)
        #expect(policy.delay(after: conflict, response: response(409), attempt: 1, keyed: true, now: Date()) == nil, "a first attempt's conflict is real")
        #expect(policy.delay(after: conflict, response: response(409), attempt: 2, keyed: false, now: Date()) == nil)
    }

    @Test func doesNotRetryCancelOrFileErrors() {
        #expect(policy.delay(after: .failed(UploadFailure(.cancelled, "")), response: nil, attempt: 1, now: Date()) == nil)
        #expect(policy.delay(after: .failed(UploadFailure(.fileError, "")), response: nil, attempt: 1, now: Date()) == nil)
    }

    @Test func honoursRetryAfterSecondsAndDates() {
        #expect(policy.delay(after: .answered(status: 503), response: response(503, [("Retry-After", "7")]), attempt: 1, now: Date()) == 7)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let later = "Tue, 14 Nov 2023 22:13:40 GMT"  // now + 20 s
        #expect(policy.delay(after: .answered(status: 429), response: response(429, [("retry-after", later)]), attempt: 1, now: now) == 20)
        let capped = RetryPolicy(maxRetries: 1, maxRetryAfter: 30)
        #expect(capped.delay(after: .answered(status: 503), response: response(503, [("Retry-After", "86400")]), attempt: 1, now: Date()) == 30)
    }
}

@Suite struct BandedPNGTests {
    @Test func adlerCombinationMatchesTheWholeStream() {
        let a: [UInt8] = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let b: [UInt8] = (0..<12_345).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        #expect(Adler32.combine(Adler32.checksum(a), Adler32.checksum(b), secondLength: b.count) == Adler32.checksum(a + b))
    }

    @Test func bandedPNGIsValid() throws {
        let path = NSTemporaryDirectory() + "uploadmon-banded-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let size = try PNGEncoder.writeBanded(to: path, width: 30_000, height: 10, bandRows: 3) { x, y in (UInt8(x & 0xFF), UInt8(y), 9) }
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(Int64(bytes.count) == size)
        #expect(PNGEncoder.bandedFileSize(width: 30_000, height: 10, bandRows: 3) == size)
        #expect(MediaSniffer.sniff(bytes.prefix(64)) == .png)
        // Walk the chunks: every CRC must hold, and the zlib stream must inflate to the raw rows.
        var offset = 8
        var zlib: [UInt8] = []
        var types: [String] = []
        while offset < bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let body = Array(bytes[(offset + 4)..<(offset + 8 + length)])
            let crc = bytes[(offset + 8 + length)..<(offset + 12 + length)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            #expect(CRC32.checksum(body) == crc)
            let type = String(decoding: body.prefix(4), as: UTF8.self)
            types.append(type)
            if type == "IDAT" { zlib += body.dropFirst(4) }
            offset += 12 + length
        }
        #expect(types.first == "IHDR" && types.last == "IEND")
        // Stored blocks: gather the payload and check the trailing Adler-32 against it.
        var raw: [UInt8] = []
        var p = 2
        var final = false
        while !final {
            final = zlib[p] & 1 == 1
            let count = Int(zlib[p + 1]) | Int(zlib[p + 2]) << 8
            raw += zlib[(p + 5)..<(p + 5 + count)]
            p += 5 + count
        }
        #expect(raw.count == (30_000 * 3 + 1) * 12)
        let adler = zlib[p..<(p + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        #expect(adler == Adler32.checksum(raw))
    }
}

@Suite struct HTTPStatusLineTests {
    @Test func serverPhraseThenStandardPhraseThenJustTheNumber() {
        #expect(HTTPStatus.line(200, reason: "All Good") == "200 All Good")
        #expect(HTTPStatus.line(415, reason: "") == "415 Unsupported Media Type")
        #expect(HTTPStatus.line(503, reason: nil) == "503 Service Unavailable")
        #expect(HTTPStatus.line(599, reason: "") == "599")
    }
}
