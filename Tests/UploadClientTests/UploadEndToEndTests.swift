import Foundation
import Testing
import UploadClient
import UploadCore
import UploadTesting

@Suite(.serialized, .timeLimit(.minutes(5))) struct UploadEndToEndTests {
    @Test(arguments: [Int64(0), 1 << 20, 200 << 20])
    func filesArriveByteIdenticalWithProgressUpToContentLength(size: Int64) async throws {
        let receiver = try await ReceiverHarness.start()
        let folder = TestFiles.makeTemporaryDirectory("send")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = try TestFiles.writeImage(at: folder + "/photo-\(size).jpg", size: size)
        let request = try UploadRequest.forPath(path, url: receiver.url, allowAnyFile: size == 0)

        let run = try await UploadRun.run([request])
        await receiver.stop()

        #expect(run.outcome() == .answered(status: 200))
        #expect(run.storedName() == "photo-\(size).jpg")
        #expect(TestFiles.sameContents(path, receiver.directory + "/photo-\(size).jpg"))
        let totals = run.progressTotals()
        #expect(totals == totals.sorted())
        #expect(totals.last == run.expectedLength())
        #expect(run.expectedLength()! > size)
        #expect(receiver.storedNames() == ["photo-\(size).jpg"])
        await receiver.cleanUp()
    }

    @Test func severalUploadsShareTheQueueAndAllFinish() async throws {
        let receiver = try await ReceiverHarness.start()
        let folder = TestFiles.makeTemporaryDirectory("many")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var requests: [UploadRequest] = []
        for i in 0..<5 {
            requests.append(try UploadRequest.forPath(try TestFiles.writeImage(at: folder + "/p\(i).jpg", size: 100_000 + Int64(i)), url: receiver.url))
        }
        let run = try await UploadRun.run(requests, concurrency: 2)
        #expect(run.events.last == .allFinished(UploadSummary(succeeded: 5, failed: 0)))
        #expect(receiver.storedNames() == ["p0.jpg", "p1.jpg", "p2.jpg", "p3.jpg", "p4.jpg"])
        await receiver.cleanUp()
    }

    @Test func notFoundIsAnAnswerWithTheServersBody() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/a.jpg", size: 1000)
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: "http://127.0.0.1:\(receiver.port)/elsewhere")])
        #expect(run.outcome() == .answered(status: 404))
        #expect(run.response()?.bodyText.contains("no such endpoint") == true)
        #expect(receiver.storedNames().isEmpty)
        await receiver.cleanUp()
    }

    @Test func hostileFileNamesStayInsideTheFolder() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/source.jpg", size: 2000)
        let long = String(repeating: "写", count: 100) + ".jpg"
        let names = ["quo\"te.jpg", "cr\r\nlf.jpg", "../../escape.jpg", long, "..", "/etc/passwd"]
        var requests: [UploadRequest] = []
        for name in names {
            var request = try UploadRequest.forPath(path, url: receiver.url)
            request.uploadName = name
            requests.append(request)
        }
        let run = try await UploadRun.run(requests, concurrency: 1)
        let stored = (1...names.count).map { run.storedName($0) }
        #expect(stored[0] == "quo\"te.jpg")
        #expect(stored[1] == "crlf.jpg")
        #expect(stored[2] == "escape.jpg")
        #expect(stored[3]!.utf8.count <= 255 && stored[3]!.hasSuffix(".jpg") && stored[3]!.hasPrefix("写写"))
        #expect(stored[4]!.hasPrefix("upload-"))
        #expect(stored[5] == "passwd")
        for name in stored {
            #expect(TestFiles.sameContents(path, receiver.directory + "/" + name!))
        }
        let outside = try FileManager.default.contentsOfDirectory(atPath: receiver.root).sorted()
        #expect(outside == ["source.jpg", "uploads"])
        #expect(!FileManager.default.fileExists(atPath: (receiver.root as NSString).deletingLastPathComponent + "/escape.jpg"))
        await receiver.cleanUp()
    }

    @Test func cancelMidUploadStopsAndLeavesNoFile() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/big.jpg", size: 300 << 20)
        let cancelled = CancelOnce()
        // Paced (300 MB at 50 MB/s: six seconds): on loopback the whole file can otherwise be
        // sent before a loaded machine delivers the event that cancels it.
        let run = try await UploadRun.run([try UploadRequest.forPath(path, url: receiver.url)], rateLimit: 50_000_000) { event, queue in
            if case .progress(let id, _, let sent, _) = event, sent > 4 << 20, cancelled.first() {
                await queue.cancel(id)
            }
        }
        #expect(run.failure()?.kind == .cancelled)
        #expect(run.progressTotals().last! < 300 << 20)
        // A file this size goes resumable: the cancel ends the request (logged once the receiver
        // ended it) and removes the upload on the server (DELETE), then nothing is left.
        #expect(
            try await eventually {
                let lines = receiver.logLines
                return lines.contains { $0.method == "POST" } && lines.contains { $0.method == "DELETE" } && receiver.openConnections == 0
            }, "\(receiver.logLines)")
        #expect(receiver.logLines.allSatisfy { $0.storedName == nil })
        #expect(receiver.storedNames().isEmpty)
        await receiver.cleanUp()
    }
}

final class CancelOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func first() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if done { return false }
        done = true
        return true
    }
}
