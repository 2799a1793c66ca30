import Foundation
import Monitor
import TerminalCanvas
import UploadCore

// Measures the monitor's pure parts in-process (run a release build: bench/monitor does).
//   render   frame render time at 200×60 with 1,000 rows in the queue
//   dir      time to open a 100,000-entry directory: read, sort, filter, first frame
// Prints one line per figure with its target.

func seconds(_ body: () -> Void) -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    body()
    return start.duration(to: clock.now).seconds
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

func ms(_ s: Double) -> String { String(format: "%.3f ms", s * 1000) }

func busyState(width: Int, height: Int, rows: Int) -> MonitorState {
    var state = MonitorState(width: width, height: height, endpoint: "http://127.0.0.1:3000/photo", directory: "/photos", home: "/")
    let entries = (0..<500).map { DirectoryEntry(name: "IMG_\($0)_夕焼け.jpg", kind: .file, size: Int64($0) * 12_345, isImage: true) }
    _ = MonitorReducer.reduce(&state, .directoryLoaded(DirectoryListing(path: "/photos", entries: entries)))
    for i in 1...rows {
        let id = UploadID(i)
        let t = EventTime(seconds: Double(i) * 0.01, clock: "12:00:00")
        let total: Int64 = 2_000_000
        _ = MonitorReducer.reduce(&state, .upload(.queued(id, name: "IMG_\(i)_夕焼け.jpg", totalBytes: total), t))
        _ = MonitorReducer.reduce(&state, .upload(.started(id, attempt: 1, url: "http://127.0.0.1:3000/photo", totalBytes: total), t))
        _ = MonitorReducer.reduce(&state, .upload(.progress(id, bytesSent: total, totalBytesSent: total, totalBytesExpected: total), t))
        if i % 10 != 0 {
            let body = Array(#"{"filename": "IMG_\#(i).jpg"}"#.utf8)
            _ = MonitorReducer.reduce(&state, .upload(.response(id, UploadResponse(status: i % 7 == 0 ? 415 : 200, reason: "", headers: [], body: body, bodyBytesTotal: Int64(body.count))), t))
            _ = MonitorReducer.reduce(&state, .upload(.finished(id, .answered(status: i % 7 == 0 ? 415 : 200)), t))
        }
    }
    return state
}

func benchRender() {
    var state = busyState(width: 200, height: 60, rows: 1000)
    let theme = Theme(colors: true, glyphs: .unicode)
    for _ in 0..<20 { _ = MonitorView.render(state, theme: theme) }
    var times: [Double] = []
    for frame in 0..<500 {
        // Change something each frame, as progress does, and scroll the queue now and then.
        let id = UploadID(10 * (frame % 100 + 1))
        let sent = Int64(frame * 3_000)
        _ = MonitorReducer.reduce(&state, .upload(.progress(id, bytesSent: 3_000, totalBytesSent: sent, totalBytesExpected: 2_000_000), EventTime(seconds: 20 + Double(frame) * 0.033, clock: "12:00:20")))
        times.append(seconds { _ = MonitorView.render(state, theme: theme) })
    }
    let mean = times.reduce(0, +) / Double(times.count)
    print("render 200x60, 1,000 queue rows: mean \(ms(mean)), p99 \(ms(percentile(times, 0.99))) (target <= 2 ms)")
}

func benchDirectory() throws {
    let dir = NSTemporaryDirectory() + "uploadmon-bench-100k"
    let fm = FileManager.default
    if (try? fm.contentsOfDirectory(atPath: dir).count) != 100_000 {
        try? fm.removeItem(atPath: dir)
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for i in 0..<100_000 {
            let name = i % 10 == 0 ? "folder-\(i)" : "photo-\(i)\(i % 3 == 0 ? ".txt" : ".jpg")"
            if i % 10 == 0 { try fm.createDirectory(atPath: dir + "/" + name, withIntermediateDirectories: false) }
            else { _ = fm.createFile(atPath: dir + "/" + name, contents: nil) }
        }
    }
    var state = MonitorState(width: 200, height: 60, endpoint: "http://127.0.0.1:3000/photo", directory: dir, home: "/")
    let theme = Theme(colors: true, glyphs: .unicode)
    var times: [Double] = []
    var readTimes: [Double] = []
    for _ in 0..<5 {
        times.append(seconds {
            var listing: DirectoryListing!
            readTimes.append(seconds { listing = DirectoryReader.read(dir) })
            _ = MonitorReducer.reduce(&state, .directoryLoaded(listing))
            _ = MonitorView.render(state, theme: theme)
        })
    }
    var scroll: [Double] = []
    for _ in 0..<200 {
        scroll.append(seconds {
            _ = MonitorReducer.reduce(&state, .key(.pageDown, EventTime(seconds: 1, clock: "12:00:00")))
            _ = MonitorView.render(state, theme: theme)
        })
    }
    let filter = seconds {
        _ = MonitorReducer.reduce(&state, .key(.character("/"), EventTime(seconds: 1, clock: "12:00:00")))
        _ = MonitorReducer.reduce(&state, .key(.character("9"), EventTime(seconds: 1, clock: "12:00:00")))
        _ = MonitorView.render(state, theme: theme)
    }
    print("open 100,000-entry directory (read + sort + first frame): median \(ms(percentile(times, 0.5))), of which reading \(ms(percentile(readTimes, 0.5))) (target <= 500 ms)")
    print("  \(state.browser.entries.count) entries; page down + frame: p99 \(ms(percentile(scroll, 0.99))); one filter keystroke + frame: \(ms(filter))")
}

let what = CommandLine.arguments.dropFirst().first ?? "all"
if what == "render" || what == "all" { benchRender() }
if what == "dir" || what == "all" { try benchDirectory() }
