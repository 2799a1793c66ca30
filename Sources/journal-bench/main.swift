import Foundation
import UploadCore
import UploadJournal

// A busy watched folder, simulated with the clock as input: for `--days` days, `--per-day`
// photos arrive spread over the day and are found by a scan every `--scan-minutes`; each is
// queued by the watch (its `watch_file` row and upload row in one transaction), started,
// hashed, answered and finished, as the agent records them; once a day the maintenance job's
// journal work runs (finished uploads and events older than `--keep-days` pruned, the file
// vacuumed when a quarter of it is free). The folder keeps its photos for `--folder-days`
// days (0: for ever), so `watch_file` follows the folder. Prints, at the end of every day,
// the journal's size on disk and what each table holds.
//
//   journal-bench [--days 14] [--per-day 5000] [--scan-minutes 15] [--keep-days 7] [--folder-days 0] [--dir DIR]
//
// With `--agent-drain N [--batch B] [--rounds R]`, instead: the agent's journal work for N small files
// (`AgentDrain`), CPU per upload.

var options: [String: Double] = ["days": 14, "per-day": 5000, "scan-minutes": 15, "keep-days": 7, "folder-days": 0, "agent-drain": 0, "batch": 24, "rounds": 5]
var directory = NSTemporaryDirectory() + "uploadmon-journal-bench-\(getpid())"
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard flag.hasPrefix("--"), let value = arguments.popFirst() else {
        FileHandle.standardError.write(
            Data(
                "usage: journal-bench [--days N] [--per-day N] [--scan-minutes N] [--keep-days N] [--folder-days N] [--dir DIR] | [--agent-drain N] [--batch N] [--rounds N]\n"
                    .utf8))
        exit(64)
    }
    let name = String(flag.dropFirst(2))
    if name == "dir" {
        directory = value
        continue
    }
    guard options[name] != nil, let number = Double(value), number >= 0 else {
        FileHandle.standardError.write(Data("journal-bench: unknown option or bad value: \(flag) \(value)\n".utf8))
        exit(64)
    }
    options[name] = number
}
let days = Int(options["days"]!)
let perDay = Int(options["per-day"]!)
let scanSeconds = options["scan-minutes"]! * 60
let keep = options["keep-days"]! * 86_400
let folderDays = options["folder-days"]!
try? FileManager.default.removeItem(atPath: directory)
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: directory) }

if options["agent-drain"]! > 0 {
    try AgentDrain.run(
        uploads: Int(options["agent-drain"]!), batch: max(1, Int(options["batch"]!)), rounds: max(1, Int(options["rounds"]!)), directory: directory)
    try? FileManager.default.removeItem(atPath: directory)
    exit(0)
}

let journal = try Journal(path: directory + "/journal.sqlite")
let start = Date(timeIntervalSince1970: 1_800_000_000)  // the simulated clock's first instant
let url = "http://photos.example.net/photo"
let folder = "/home/u/Camera"
var settings = TransportSettings()
settings.retries = 3
let spec = WatchSpec(directory: folder, template: UploadRequest(source: .file(path: folder), url: url, uploadName: ""), settings: settings)
let (job, _) = try journal.registerJob(.watch(spec), every: scanSeconds, firstRunAt: start, at: start)
let answer = UploadResponse(
    status: 201, reason: "Created",
    headers: [("Content-Type", "application/json"), ("Content-Length", "36"), ("Date", "Thu, 15 Jan 2027 08:00:00 GMT")],
    body: Array(#"{"filename": "IMG_0000.HEIC", "ok": 1}"#.utf8), bodyBytesTotal: 36)

var photo = 0
var folderFiles: [(name: String, at: Date)] = []
var nextMaintenance = start.addingTimeInterval(86_400)
print("day  journal MiB  B/photo-kept  uploads  events  watch_file  sentContent  (pruned)")
for day in 1...days {
    let dayStart = start.addingTimeInterval(Double(day - 1) * 86_400)
    var now = dayStart
    var pruned = PruneResult(uploads: 0, events: 0)
    let scans = Int(86_400 / scanSeconds)
    for scan in 0..<scans {
        now = dayStart.addingTimeInterval(Double(scan) * scanSeconds)
        // The photos that arrived since the last scan.
        let arriving = perDay * (scan + 1) / scans - perDay * scan / scans
        var changes = WatchScanChanges()
        if folderDays > 0 {
            let cutoff = now.addingTimeInterval(-folderDays * 86_400)
            let gone = folderFiles.prefix { $0.at < cutoff }
            changes.forgotten = gone.map(\.name)
            folderFiles.removeFirst(gone.count)
        }
        for _ in 0..<arriving {
            photo += 1
            let name = String(format: "IMG_%06d.HEIC", photo)
            let fingerprint = FileFingerprint(size: 2_400_000 + Int64(photo % 1000), modificationNanoseconds: Int64(now.timeIntervalSince1970 * 1e9))
            let request = spec.request(forFileNamed: name)
            changes.queue.append((name, NewUpload(request: request, fingerprint: fingerprint, settings: settings, origin: "watch \(folder)")))
            folderFiles.append((name, now))
        }
        let added = try journal.applyWatchScan(job.id, changes, at: now)
        // Each upload's life as the agent records it, a few seconds apart.
        var events: [UploadEvent] = []
        for record in added {
            let sha = String(format: "%064x", record.id.rawValue)
            events += [
                .started(record.id, attempt: 1, url: url, totalBytes: (record.fileSize ?? 0) + 300),
                .content(record.id, sha256: sha),
                .response(record.id, answer),
                .finished(record.id, .answered(status: 201)),
            ]
        }
        _ = try journal.record(events, at: now.addingTimeInterval(5))
        if now >= nextMaintenance {
            let result = try journal.prune(finishedBefore: now.addingTimeInterval(-keep))
            pruned.uploads += result.uploads
            pruned.events += result.events
            _ = try journal.vacuumIfWorthwhile()
            nextMaintenance = nextMaintenance.addingTimeInterval(86_400)
        }
    }
    let counts = try journal.tableCounts()
    let bytes = journal.sizeOnDisk()
    let kept = max(1, counts["upload"] ?? 1)
    print(
        String(
            format: "%3d  %11.1f  %12.0f  %7d  %6d  %10d  %11d  (%d, %d)", day, Double(bytes) / 1_048_576, Double(bytes) / Double(kept),
            counts["upload"] ?? 0, counts["event"] ?? 0, counts["watch_file"] ?? 0, counts["sentContent"] ?? 0, pruned.uploads, pruned.events))
}
