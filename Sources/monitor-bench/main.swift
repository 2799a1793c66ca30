import Foundation
import ImagePreview
import Monitor
import MonitorRuntime
import NCursesTerminal
import NIOConcurrencyHelpers
import TerminalCanvas
import UploadCore
import UploadTesting

// Measures the monitor's pure parts in-process (run a release build: bench/monitor does).
//   render   frame render time at 200×60 with 1,000 rows in the queue, and with a 64 KiB JSON
//            answer in the response panel
//   dir      time to open a 100,000-entry directory: read, sort, filter, first frame
//   queue    the reducer's cost per upload event and a frame's render time with 1,000, 20,000
//            and 100,000 uploads queued (a camera roll): flat as the queue grows, since the
//            queue's tallies change by what each event changed
//   preview  a 6000x4000 JPEG and a 4000x3000 PNG ready in the preview pane (decoded, scaled,
//            laid out, encoded as cells), and frame times while `j` scrolls 1,000 photos with
//            previews decoding in the background
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
        let t = EventTime(seconds: Double(i) * 0.01, clock: "12:00:00", date: Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 0.01))
        let total: Int64 = 2_000_000
        let record = UploadRecord(
            id: id, name: "IMG_\(i)_夕焼け.jpg", path: "/photos/IMG_\(i)_夕焼け.jpg", url: "http://127.0.0.1:3000/photo",
            origin: "monitor", fileSize: total, createdAt: t.date)
        _ = MonitorReducer.reduce(&state, .upload(.queued(record), t))
        _ = MonitorReducer.reduce(&state, .upload(.started(id, attempt: 1, url: "http://127.0.0.1:3000/photo", totalBytes: total), t))
        _ = MonitorReducer.reduce(&state, .upload(.progress(id, bytesSent: total, totalBytesSent: total, totalBytesExpected: total), t))
        if i % 10 != 0 {
            let body = Array(#"{"filename": "IMG_\#(i).jpg"}"#.utf8)
            _ = MonitorReducer.reduce(
                &state,
                .upload(
                    .response(id, UploadResponse(status: i % 7 == 0 ? 415 : 200, reason: "", headers: [], body: body, bodyBytesTotal: Int64(body.count))), t))
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
        _ = MonitorReducer.reduce(
            &state,
            .upload(
                .progress(id, bytesSent: 3_000, totalBytesSent: sent, totalBytesExpected: 2_000_000),
                EventTime(seconds: 20 + Double(frame) * 0.033, clock: "12:00:20", date: Date(timeIntervalSince1970: 1_700_000_000 + 20 + Double(frame) * 0.033))
            ))
        times.append(seconds { _ = MonitorView.render(state, theme: theme) })
    }
    let mean = times.reduce(0, +) / Double(times.count)
    print("render 200x60, 1,000 queue rows: mean \(ms(mean)), p99 \(ms(percentile(times, 0.99))) (target <= 2 ms)")
}

/// The response panel made from the record on every frame: a 64 KiB JSON answer selected
/// (formatted up to the panel's height per frame, not kept formatted beside the record).
func benchLargeAnswer() {
    var state = busyState(width: 200, height: 60, rows: 100)
    let theme = Theme(colors: true, glyphs: .unicode)
    let id = UploadID(101)
    let t = EventTime(seconds: 10, clock: "12:00:10", date: Date(timeIntervalSince1970: 1_700_000_010))
    let record = UploadRecord(
        id: id, name: "big-answer.jpg", path: "/photos/big-answer.jpg", url: "http://127.0.0.1:3000/photo",
        origin: "monitor", fileSize: 1_000, createdAt: t.date)
    var items: [String] = []
    var size = 0
    var i = 0
    while size < 64 * 1024 - 200 {
        let item = #"{"filename":"IMG_\#(i).jpg","size":\#(i * 1_234),"tags":["a","b"],"ok":true}"#
        items.append(item)
        size += item.utf8.count + 1
        i += 1
    }
    let body = Array(("[" + items.joined(separator: ",") + "]").utf8)
    _ = MonitorReducer.reduce(&state, .upload(.queued(record), t))
    _ = MonitorReducer.reduce(&state, .upload(.started(id, attempt: 1, url: record.url, totalBytes: 1_000), t))
    _ = MonitorReducer.reduce(
        &state, .upload(.response(id, UploadResponse(status: 200, reason: "OK", headers: [], body: body, bodyBytesTotal: Int64(body.count))), t))
    _ = MonitorReducer.reduce(&state, .upload(.finished(id, .answered(status: 200)), t))
    precondition(state.queue.selectedID == id, "the finished upload is shown")
    for _ in 0..<20 { _ = MonitorView.render(state, theme: theme) }
    var times: [Double] = []
    var digests: [Double] = []
    for frame in 0..<300 {
        let other = UploadID(10 * (frame % 10 + 1))
        _ = MonitorReducer.reduce(&state, .upload(.progress(other, bytesSent: 3_000, totalBytesSent: Int64(frame * 3_000), totalBytesExpected: 2_000_000), t))
        times.append(seconds { _ = MonitorView.render(state, theme: theme) })
        digests.append(seconds { _ = AnswerDigest(record: state.queue.state(id)!.record, lineLimit: 40) })
    }
    let mean = times.reduce(0, +) / Double(times.count)
    print(
        "render 200x60 with a \(body.count / 1024) KiB JSON answer shown: mean \(ms(mean)), p99 \(ms(percentile(times, 0.99))); of which the answer's lines: median \(ms(percentile(digests, 0.5))) (target <= 2 ms)"
    )
}

func benchDirectory() throws {
    let dir = NSTemporaryDirectory() + "uploadmon-bench-100k"
    let fm = FileManager.default
    if (try? fm.contentsOfDirectory(atPath: dir).count) != 100_000 {
        try? fm.removeItem(atPath: dir)
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for i in 0..<100_000 {
            let name = i % 10 == 0 ? "folder-\(i)" : "photo-\(i)\(i % 3 == 0 ? ".txt" : ".jpg")"
            if i % 10 == 0 {
                try fm.createDirectory(atPath: dir + "/" + name, withIntermediateDirectories: false)
            } else {
                _ = fm.createFile(atPath: dir + "/" + name, contents: nil)
            }
        }
    }
    var state = MonitorState(width: 200, height: 60, endpoint: "http://127.0.0.1:3000/photo", directory: dir, home: "/")
    let theme = Theme(colors: true, glyphs: .unicode)
    var times: [Double] = []
    var readTimes: [Double] = []
    for _ in 0..<5 {
        times.append(
            seconds {
                var listing: DirectoryListing!
                readTimes.append(seconds { listing = DirectoryReader.read(dir) })
                _ = MonitorReducer.reduce(&state, .directoryLoaded(listing))
                _ = MonitorView.render(state, theme: theme)
            })
    }
    var scroll: [Double] = []
    for _ in 0..<200 {
        scroll.append(
            seconds {
                _ = MonitorReducer.reduce(
                    &state, .key(.pageDown, EventTime(seconds: 1, clock: "12:00:00", date: Date(timeIntervalSince1970: 1_700_000_000 + 1))))
                _ = MonitorView.render(state, theme: theme)
            })
    }
    let filter = seconds {
        _ = MonitorReducer.reduce(&state, .key(.character("/"), EventTime(seconds: 1, clock: "12:00:00", date: Date(timeIntervalSince1970: 1_700_000_000 + 1))))
        _ = MonitorReducer.reduce(&state, .key(.character("9"), EventTime(seconds: 1, clock: "12:00:00", date: Date(timeIntervalSince1970: 1_700_000_000 + 1))))
        _ = MonitorView.render(state, theme: theme)
    }
    print(
        "open 100,000-entry directory (read + sort + first frame): median \(ms(percentile(times, 0.5))), of which reading \(ms(percentile(readTimes, 0.5))) (target <= 500 ms)"
    )
    print("  \(state.browser.entries.count) entries; page down + frame: p99 \(ms(percentile(scroll, 0.99))); one filter keystroke + frame: \(ms(filter))")
}

/// A photo-like picture: smooth gradients with grain, so it compresses as photos do.
func photo(width: Int, height: Int, seed: Int) -> RGBImage {
    var rgb = [UInt8](repeating: 0, count: width * height * 3)
    var noise = UInt32(truncatingIfNeeded: seed &* 2_654_435_761 | 1)
    rgb.withUnsafeMutableBufferPointer { p in
        for y in 0..<height {
            for x in 0..<width {
                noise ^= noise << 13
                noise ^= noise >> 17
                noise ^= noise << 5
                let grain = Int(noise & 15) - 8
                let i = (y * width + x) * 3
                p[i] = UInt8(clamping: x * 255 / width + grain + seed % 40)
                p[i + 1] = UInt8(clamping: y * 255 / height + grain)
                p[i + 2] = UInt8(clamping: (x + y) * 128 / (width + height) + 64 + grain)
            }
        }
    }
    return RGBImage(width: width, height: height, rgb: rgb)
}

/// `state` with the browser's cursor on `path` and no previews kept.
func cursorOn(_ path: String, in state: MonitorState) -> MonitorState {
    var local = state
    local.browser.selected = state.browser.visible.firstIndex { state.browser.visibleEntry($0).name == (path as NSString).lastPathComponent }!
    local.preview = PreviewState()
    return local
}

/// What a preview pane does when the cursor lands on `path` and stays: the reducer asks for the
/// photo (any event makes it ask), the photo is decoded to the box asked for, the result goes
/// back, the cursor rests.
func decodeWantedPreview(_ state: inout MonitorState, path: String) -> Result<Preview, PreviewProblem> {
    let effects = MonitorReducer.reduce(&state, .resize(width: state.width, height: state.height))
    guard
        let wanted = effects.lazy.compactMap({ effect -> PreviewRequest? in
            if case .loadPreview(let request) = effect { request } else { nil }
        }).first
    else { fatalError("no preview asked for") }
    let box = wanted.pixelBox
    let result = PreviewDecoder.decode(path: path, fitting: box.width, box.height)
    _ = MonitorReducer.reduce(&state, .previewLoaded(wanted, result))
    _ = MonitorReducer.reduce(&state, .previewRested(wanted))
    return result
}

func benchPreview() throws {
    let dir = NSTemporaryDirectory() + "uploadmon-bench-preview"
    let fm = FileManager.default
    try fm.createDirectory(atPath: dir + "/many", withIntermediateDirectories: true)
    let jpeg = dir + "/big.jpg"
    let png = dir + "/big.png"
    if !fm.fileExists(atPath: jpeg) { try PictureWriter.jpeg(photo(width: 6000, height: 4000, seed: 1), to: jpeg, quality: 90) }
    if !fm.fileExists(atPath: png) { try PictureWriter.png(photo(width: 4000, height: 3000, seed: 2), to: png) }
    // The preview pane of a 200x60 terminal.
    var state = MonitorState(width: 200, height: 60, endpoint: "http://127.0.0.1:3000/photo", directory: dir, home: "/")
    _ = MonitorReducer.reduce(&state, .directoryLoaded(DirectoryReader.read(dir)))
    let theme = Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor)
    for (name, path, target) in [("6000x4000 JPEG", jpeg, 60.0), ("4000x3000 PNG", png, 150.0)] {
        var times: [Double] = []
        var pane = ""
        for _ in 0..<7 {
            var local = cursorOn(path, in: state)
            times.append(
                seconds {
                    let result = decodeWantedPreview(&local, path: path)
                    let canvas = MonitorView.render(local, theme: theme)
                    guard let picture = canvas.picture else { fatalError("no picture: \(result)") }
                    let bytes = PictureEncoder.bytes(picture, depth: .trueColor)
                    pane = "\(picture.columns)x\(picture.rows) cells, \(bytes.count) bytes of escapes"
                })
        }
        print(
            "preview of a \(name) ready (decode + scale + layout + cells, \(pane)): median \(ms(percentile(times, 0.5))), worst \(ms(times.max()!)) (target <= \(Int(target)) ms)"
        )
    }

    // Real pixels (kitty graphics, sixel) in 10x20-pixel cells: the decode to the pane's pixels,
    // and the escapes, which are made on the screen's loop when a frame is drawn.
    var pixelState = state
    pixelState.pixelGraphics = PixelGraphics(kind: .kitty, cellWidth: 10, cellHeight: 20)
    let pixelTheme = Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor, pixels: pixelState.pixelGraphics)
    for (name, path) in [("6000x4000 JPEG", jpeg), ("4000x3000 PNG", png)] {
        var ready: [Double] = []
        var kitty: [Double] = []
        var sixel: [Double] = []
        var sizes = ""
        for _ in 0..<7 {
            var local = cursorOn(path, in: pixelState)
            var pixels: PixelPicture?
            ready.append(
                seconds {
                    _ = decodeWantedPreview(&local, path: path)
                    pixels = MonitorView.render(local, theme: pixelTheme).pixels
                })
            guard let pixels else { fatalError("no picture in pixels") }
            var kittyBytes = 0
            var sixelBytes = 0
            kitty.append(seconds { kittyBytes = KittyEncoder.show(pixels, compress: NCursesTerminal.deflate).count })
            sixel.append(seconds { sixelBytes = SixelEncoder.bytes(pixels).count })
            sizes = "\(pixels.width)x\(pixels.height) px; kitty \(kittyBytes / 1024) KiB, sixel \(sixelBytes / 1024) KiB"
        }
        print(
            "preview of a \(name) in real pixels (\(sizes)): decoded and laid out median \(ms(percentile(ready, 0.5))); escapes on the screen's loop: kitty median \(ms(percentile(kitty, 0.5))), sixel median \(ms(percentile(sixel, 0.5))) (a frame is 16 ms)"
        )
    }

    // 1,000 photos; `j` held (30 presses a second) with previews on, decoding in the background.
    let many = dir + "/many"
    if (try? fm.contentsOfDirectory(atPath: many).count) != 1000 {
        for i in 0..<1000 { try PictureWriter.jpeg(photo(width: 1600, height: 1200, seed: i), to: many + String(format: "/IMG_%04d.JPG", i), quality: 85) }
    }
    // In half blocks, and with kitty graphics (pixels only once the cursor rests: never here).
    for (mode, modeTheme, graphics) in [("half blocks", theme, nil), ("kitty graphics", pixelTheme, pixelState.pixelGraphics)] {
        var browse = MonitorState(width: 200, height: 60, endpoint: "http://127.0.0.1:3000/photo", directory: many, home: "/")
        browse.pixelGraphics = graphics
        _ = MonitorReducer.reduce(&browse, .directoryLoaded(DirectoryReader.read(many)))
        let arrived = NIOLockedValueBox<[(PreviewRequest, Result<Preview, PreviewProblem>)]>([])
        let worker = PreviewWorker { request, result in arrived.withLockedValue { $0.append((request, result)) } }
        var frames: [Double] = []
        var decoded = 0
        var bytes = 0
        let clock = ContinuousClock()
        for press in 0..<999 {
            let due = clock.now.advanced(by: .milliseconds(33))
            func frame() {
                let canvas = MonitorView.render(browse, theme: modeTheme)
                if let picture = canvas.picture { bytes += PictureEncoder.bytes(picture, depth: .trueColor).count }
                if let pixels = canvas.pixels { bytes += KittyEncoder.show(pixels, compress: NCursesTerminal.deflate).count }
            }
            // A frame when a decoded photo arrives (the loop draws it), and one after the key.
            let results = arrived.withLockedValue {
                let a = $0
                $0 = []
                return a
            }
            if !results.isEmpty {
                frames.append(
                    seconds {
                        for (request, result) in results {
                            decoded += 1
                            _ = MonitorReducer.reduce(&browse, .previewLoaded(request, result))
                        }
                        frame()
                    })
            }
            try? await_sleep(until: clock.now.advanced(by: .milliseconds(16)), clock: clock)
            frames.append(
                seconds {
                    for effect in MonitorReducer.reduce(
                        &browse,
                        .key(
                            .character("j"),
                            EventTime(seconds: Double(press), clock: "12:00:00", date: Date(timeIntervalSince1970: 1_700_000_000 + Double(press)))))
                    {
                        if case .loadPreview(let request) = effect { worker.request(request) }
                    }
                    frame()
                })
            try? await_sleep(until: due, clock: clock)
        }
        print(
            "holding j through 1,000 photos (1600x1200 JPEG) with previews in \(mode): \(frames.count) frames, p50 \(ms(percentile(frames, 0.5))), p99 \(ms(percentile(frames, 0.99))), worst \(ms(frames.max()!)) (target p99 <= 16 ms); \(decoded) previews finished on the way, the rest cancelled; \(bytes / 1_048_576) MiB of picture escapes"
        )
    }
}

func await_sleep(until deadline: ContinuousClock.Instant, clock: ContinuousClock) throws {
    let left = clock.now.duration(to: deadline)
    if left > .zero { Thread.sleep(forTimeInterval: Double(left.components.attoseconds) / 1e18 + Double(left.components.seconds)) }
}

/// Peak memory of one preview of `path` in the pane of a 200x60 monitor, in a process of its own.
func benchPreviewMemory(_ path: String) {
    func peakMiB() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_maxrss) / 1024
    }
    let before = peakMiB()
    let result = PreviewDecoder.decode(path: path, fitting: 108, 110)
    guard case .success(let preview) = result else { fatalError("\(result)") }
    print(
        String(
            format: "preview of %@ (%dx%d, %.0f MB file) into %dx%d px: peak RSS %.1f MiB (%.1f MiB before decoding)",
            (path as NSString).lastPathComponent, preview.info.width ?? 0, preview.info.height ?? 0,
            Double(preview.info.fileSize ?? 0) / 1e6, preview.image.width, preview.image.height, peakMiB(), before))
}

let what = CommandLine.arguments.dropFirst().first ?? "all"
let hugePNG = NSTemporaryDirectory() + "uploadmon-bench-preview/huge.png"
if what == "make-huge" {
    // 100 megapixels (300 MB of RGB while it is written: the writer takes whole pictures), once.
    try FileManager.default.createDirectory(atPath: NSTemporaryDirectory() + "uploadmon-bench-preview", withIntermediateDirectories: true)
    if !FileManager.default.fileExists(atPath: hugePNG) { try PictureWriter.png(photo(width: 10_000, height: 10_000, seed: 3), to: hugePNG) }
    print(hugePNG)
    exit(0)
}
if what == "make-photo-png" {
    // A 12-megapixel photo (a phone's 4032x3024) as PNG, for the encoders of the other formats.
    let path = NSTemporaryDirectory() + "uploadmon-bench-preview/phone.png"
    try FileManager.default.createDirectory(atPath: NSTemporaryDirectory() + "uploadmon-bench-preview", withIntermediateDirectories: true)
    if !FileManager.default.fileExists(atPath: path) { try PictureWriter.png(photo(width: 4032, height: 3024, seed: 4), to: path) }
    print(path)
    exit(0)
}
if what == "make-phone-jpeg" {
    // A phone's 12-megapixel JPEG with its EXIF thumbnail (160x120), as a camera writes it.
    let dir = NSTemporaryDirectory() + "uploadmon-bench-preview"
    let path = dir + "/phone.jpg"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    if !FileManager.default.fileExists(atPath: path) {
        let thumbnailPath = dir + "/phone-thumbnail.jpg"
        try PictureWriter.jpeg(photo(width: 160, height: 120, seed: 4), to: thumbnailPath, quality: 80)
        let thumbnail = Array(try Data(contentsOf: URL(fileURLWithPath: thumbnailPath)))
        let exif = PictureWriter.exif(thumbnail: thumbnail, make: "Apple", model: "iPhone 12")
        try PictureWriter.jpeg(photo(width: 4032, height: 3024, seed: 4), to: path, quality: 90, exif: exif)
    }
    print(path)
    exit(0)
}
if what == "preview-file" {
    // One file decoded into the preview pane of a 200x60 monitor in cells (108x110 px) and in
    // real pixels (10x20-pixel cells: 1080x1100 px): the median of 7 of each.
    let path = CommandLine.arguments[2]
    for (box, width, height) in [("cells, 108x110 px", 108, 110), ("real pixels, 1080x1100 px", 1080, 1100)] {
        var times: [Double] = []
        var said = ""
        for _ in 0..<7 {
            times.append(
                seconds {
                    switch PreviewDecoder.decode(path: path, fitting: width, height) {
                    case .success(let preview): said = "\(preview.image.width)x\(preview.image.height)"
                    case .failure(let problem): fatalError("\(path): \(problem)")
                    }
                })
        }
        print("uploadmon preview of \((path as NSString).lastPathComponent) (\(box)) -> \(said): median \(ms(percentile(times, 0.5)))")
        var firsts: [Double] = []
        for _ in 0..<7 {
            var found = false
            firsts.append(seconds { found = PreviewDecoder.firstPicture(path: path, fitting: width, height) != nil })
            if !found {
                firsts.removeAll()
                break
            }
        }
        if !firsts.isEmpty {
            print(
                "  first picture (its EXIF thumbnail) of \((path as NSString).lastPathComponent) (\(box)): median \(ms(percentile(firsts, 0.5))) (goal <= 10 ms)"
            )
        }
    }
    exit(0)
}
if what == "preview-memory" {
    benchPreviewMemory(CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : hugePNG)
    exit(0)
}
if what == "render" || what == "all" {
    benchRender()
    benchLargeAnswer()
}
if what == "queue" || what == "all" { benchQueue() }
if what == "coding" || what == "all" { benchCoding() }
if what == "coding-samples" { printCodingSamples() }
if what == "dir" || what == "all" { try benchDirectory() }
if what == "preview" || what == "all" { try benchPreview() }
