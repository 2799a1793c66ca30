import Foundation
import Monitor
import TerminalCanvas
import UploadCore

/// A camera roll in the queue: `rows` uploads queued, then the last 2,000 sent through their
/// whole life (start, progress, content, answer, end) and the 2,000 before them refused; the
/// reducer's time per event and the render time per frame with that many rows.
func benchQueue() {
    let theme = Theme(colors: true, glyphs: .unicode)
    let endpoint = "http://127.0.0.1:3000/photo"
    for rows in [1_000, 20_000, 100_000] {
        var state = MonitorState(width: 120, height: 40, endpoint: endpoint, directory: "/photos", home: "/")
        func at(_ step: Int) -> EventTime {
            EventTime(seconds: Double(step) * 0.001, clock: "12:00:00", date: Date(timeIntervalSince1970: 1_700_000_000 + Double(step) * 0.001))
        }
        let queueing = seconds {
            for i in 1...rows {
                let record = UploadRecord(
                    id: UploadID(i), name: "IMG_\(i).jpg", path: "/photos/IMG_\(i).jpg", url: endpoint,
                    origin: "monitor", fileSize: 40_000, createdAt: at(i).date)
                _ = MonitorReducer.reduce(&state, .upload(.queued(record), at(i)))
            }
        }
        var events = 0
        let lives = seconds {
            for i in (rows - 1_999)...rows {
                let id = UploadID(i)
                let t = at(rows + i)
                for event: UploadEvent in [
                    .started(id, attempt: 1, url: endpoint, totalBytes: 40_200),
                    .progress(id, bytesSent: 20_000, totalBytesSent: 20_000, totalBytesExpected: 40_200),
                    .progress(id, bytesSent: 20_200, totalBytesSent: 40_200, totalBytesExpected: 40_200),
                    .content(id, sha256: "sha-\(i)"),
                    .response(id, UploadResponse(status: 200, reason: "OK", headers: [], body: Array(#"{"filename":"x.jpg"}"#.utf8), bodyBytesTotal: 20)),
                    .finished(id, .answered(status: 200)),
                ] {
                    _ = MonitorReducer.reduce(&state, .upload(event, t))
                    events += 1
                }
            }
            for i in (rows - 3_999)...(rows - 2_000) {
                _ = MonitorReducer.reduce(&state, .upload(.finished(UploadID(i), .failed(UploadFailure(.other, "refused"))), at(2 * rows + i)))
                events += 1
            }
        }
        var keys: [Double] = []
        for _ in 0..<200 {
            keys.append(seconds { _ = MonitorReducer.reduce(&state, .key(.character("j"), at(3 * rows))) })
        }
        var frames: [Double] = []
        for _ in 0..<200 { frames.append(seconds { _ = MonitorView.render(state, theme: theme) }) }
        print(
            String(
                format: "queue of %6d: queueing %.2f µs/upload, %.2f µs per upload event, a key %.1f µs (p99 %.1f), a frame %@ (p99 %@)",
                rows, queueing / Double(rows) * 1e6, lives / Double(events) * 1e6, percentile(keys, 0.5) * 1e6, percentile(keys, 0.99) * 1e6,
                ms(percentile(frames, 0.5)), ms(percentile(frames, 0.99))))
    }
}
