import Foundation
import Glibc
import UploadCore
import UploadJournal

/// The agent's journal work for a folder of small files, in process and without a network:
/// `uploads` handed over in one transaction (`add`), read back a window at a time for the
/// queue (`pending`, half a window of 256 each time, as the agent's backlog feeds it), and
/// each upload's start, content digest, answer and end recorded in batches of `batch` uploads'
/// events (`record`: the agent gathers events for 10 ms before it commits them, about 24
/// small uploads' worth at the rate a foreground `send` reaches on loopback). Prints the CPU time of
/// each part per upload, the median of `rounds` rounds, each on a fresh journal: what the
/// agent spends beside the sending that a foreground `send` spends too.
enum AgentDrain {
    static func run(uploads: Int, batch uploadsPerBatch: Int, rounds: Int, directory: String) throws {
        var figures: [String: [Double]] = [:]
        for round in 1...rounds {
            let path = directory + "/drain-\(round).sqlite"
            let journal = try Journal(path: path)
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            var settings = TransportSettings()
            settings.retries = 3
            let news = (0..<uploads).map { index in
                let file = String(format: "/home/u/small/p%05d.jpg", index)
                let request = UploadRequest(source: .file(path: file), url: "http://127.0.0.1:8080/photo", uploadName: (file as NSString).lastPathComponent)
                return NewUpload(
                    request: request, fingerprint: FileFingerprint(size: 2048, modificationNanoseconds: 1_700_000_000_000_000_000 + Int64(index)),
                    settings: settings, origin: "send")
            }
            let answer = UploadResponse(
                status: 200, reason: "OK", headers: [("Content-Type", "application/json"), ("Content-Length", "26")],
                body: Array(#"{"filename": "p00000.jpg"}"#.utf8), bodyBytesTotal: 26)
            var added: [UploadRecord] = []
            let add = try cpu { added = try journal.add(news, at: now) }
            var pendingTime = 0.0
            var recordTime = 0.0
            let ids = added.map(\.id)
            for window in stride(from: 0, to: ids.count, by: 128) {
                let slice = Array(ids[window..<min(ids.count, window + 128)])
                var pending: [PendingUpload] = []
                pendingTime += try cpu { pending = try journal.pending(slice) }
                precondition(pending.count == slice.count, "the journal gave back \(pending.count) of \(slice.count) uploads")
                for batch in stride(from: 0, to: slice.count, by: uploadsPerBatch) {
                    var events: [UploadEvent] = []
                    for id in slice[batch..<min(slice.count, batch + uploadsPerBatch)] {
                        events += [
                            .started(id, attempt: 1, url: "http://127.0.0.1:8080/photo", totalBytes: 2348),
                            .content(id, sha256: String(format: "%064x", id.rawValue)),
                            .response(id, answer),
                            .finished(id, .answered(status: 200)),
                        ]
                    }
                    recordTime += try cpu { _ = try journal.record(events, at: now.addingTimeInterval(1)) }
                }
            }
            for (name, seconds) in [("add", add), ("pending", pendingTime), ("record", recordTime)] {
                figures[name, default: []].append(seconds)
            }
            try? FileManager.default.removeItem(atPath: path)
            for suffix in ["-wal", "-shm", "-sent"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        print("journal work per upload, \(uploads) uploads, \(uploadsPerBatch) uploads' events per transaction, median of \(rounds) rounds (CPU):")
        var total = 0.0
        for name in ["add", "pending", "record"] {
            let sorted = figures[name, default: []].sorted()
            let median = sorted[sorted.count / 2]
            total += median
            print(
                String(
                    format: "  %@ %6.1f µs  (%.3f s; rounds %@)", name.padding(toLength: 8, withPad: " ", startingAt: 0), median / Double(uploads) * 1e6,
                    median,
                    sorted.map { String(format: "%.3f", $0) }.joined(separator: " ")))
        }
        print(String(format: "  total    %6.1f µs", total / Double(uploads) * 1e6))
    }

    /// The CPU time (user and system) this process spends in `body`.
    static func cpu(_ body: () throws -> Void) throws -> Double {
        func now() -> Double {
            var time = timespec()
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
            return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        }
        let start = now()
        try body()
        return now() - start
    }
}
