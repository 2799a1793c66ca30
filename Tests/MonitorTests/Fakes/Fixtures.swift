import UploadTesting
import Foundation
import Monitor
import TerminalCanvas
import UploadCore

/// States and event helpers for reducer and view tests.
enum Fixtures {
    static let time = EventTime(seconds: 10, clock: "12:00:00", date: Date(timeIntervalSince1970: 1_700_000_000 + 10))

    static func at(_ seconds: Double) -> EventTime {
        EventTime(
            seconds: seconds, clock: "12:00:\(Int(seconds) < 10 ? "0" : "")\(Int(seconds) % 60)",
            date: Date(timeIntervalSince1970: 1_700_000_000 + seconds))
    }

    static let listing = DirectoryListing(
        path: "/photos",
        entries: [
            DirectoryEntry(name: "holiday", kind: .directory),
            DirectoryEntry(name: "cat.jpg", kind: .file, size: 2_100_000, isImage: true),
            DirectoryEntry(name: "dog.png", kind: .file, size: 512_000, isImage: true),
            DirectoryEntry(name: "notes.txt", kind: .file, size: 120, isImage: false),
            DirectoryEntry(name: "夕焼け.png", kind: .file, size: 204_000_000, isImage: true),
            DirectoryEntry(name: "gone.jpg", kind: .brokenLink(reason: "broken symlink"), isImage: true),
        ])

    static func state(width: Int = 120, height: Int = 40) -> MonitorState {
        var state = MonitorState(width: width, height: height, endpoint: "http://127.0.0.1:3000/photo", directory: "/photos", home: "/home/me")
        _ = MonitorReducer.reduce(&state, .directoryLoaded(listing))
        return state
    }

    @discardableResult
    static func press(_ state: inout MonitorState, _ keys: Key...) -> [MonitorEffect] {
        var effects: [MonitorEffect] = []
        for key in keys { effects += MonitorReducer.reduce(&state, .key(key, time)) }
        return effects
    }

    /// The files the effects hand to the queue.
    static func enqueued(_ effects: [MonitorEffect]) -> [QueueItem] {
        effects.flatMap { effect -> [QueueItem] in if case .enqueue(let items) = effect { items } else { [] } }
    }

    /// The `queued` event of `item`, as the queue reports it once it took the file.
    static func queued(_ id: UploadID, _ item: QueueItem, totalBytes: Int64?) -> UploadEvent {
        var record = UploadRecord(id: id, name: item.uploadName, path: item.path, url: "", origin: "monitor", fileSize: totalBytes, createdAt: time.date)
        record.fileModified = item.modified
        record.fileChanged = item.changed
        record.withoutLocation = item.stripLocation
        return .queued(record)
    }

    @discardableResult
    static func upload(_ state: inout MonitorState, _ event: UploadEvent, at seconds: Double = 10) -> [MonitorEffect] {
        MonitorReducer.reduce(&state, .upload(event, at(seconds)))
    }

    static func response(_ status: Int, _ body: String, reason: String = "") -> UploadResponse {
        UploadResponse(
            status: status, reason: reason.isEmpty ? HTTPStatus.reason(status) : reason,
            headers: [("Content-Type", "application/json")], body: Array(body.utf8), bodyBytesTotal: Int64(body.utf8.count))
    }

    /// A state with one finished upload, one red answer, one sending and one queued.
    static func busyState(width: Int, height: Int) -> MonitorState {
        var state = Fixtures.state(width: width, height: height)
        let ok = UploadID(1)
        let refused = UploadID(2)
        let sending = UploadID(3)
        let waiting = UploadID(4)
        upload(&state, .queued(ok, name: "cat.jpg", totalBytes: 2_100_000), at: 1)
        upload(&state, .queued(refused, name: "notes.jpg", totalBytes: 38), at: 1)
        upload(&state, .queued(sending, name: "夕焼け.png", totalBytes: 204_000_000), at: 1)
        upload(&state, .queued(waiting, name: "dog.png", totalBytes: 512_000), at: 1)
        upload(&state, .started(ok, attempt: 1, url: "http://127.0.0.1:3000/photo", totalBytes: 2_100_000), at: 1)
        upload(&state, .progress(ok, bytesSent: 2_100_000, totalBytesSent: 2_100_000, totalBytesExpected: 2_100_000), at: 2.4)
        upload(&state, .response(ok, response(200, #"{"filename": "cat.jpg"}"#)), at: 2.4)
        upload(&state, .finished(ok, .answered(status: 200)), at: 2.4)
        // A 38-byte file is 228 bytes on the wire with its multipart framing.
        upload(&state, .started(refused, attempt: 1, url: "http://127.0.0.1:3000/photo", totalBytes: 228), at: 2.5)
        upload(&state, .progress(refused, bytesSent: 228, totalBytesSent: 228, totalBytesExpected: 228), at: 2.5)
        upload(&state, .response(refused, response(415, #"{"error": "notes.jpg is not an image"}"#)), at: 2.6)
        upload(&state, .finished(refused, .answered(status: 415)), at: 2.6)
        upload(&state, .started(sending, attempt: 1, url: "http://127.0.0.1:3000/photo", totalBytes: 204_000_000), at: 3)
        for step in 1...8 {
            let sent = Int64(step) * 12_500_000
            upload(&state, .progress(sending, bytesSent: 12_500_000, totalBytesSent: sent, totalBytesExpected: 204_000_000), at: 3 + Double(step) * 0.5)
        }
        return state
    }
}
