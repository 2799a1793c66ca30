import Foundation
import UploadAgent
import UploadCore

/// What one upload's life costs on the agent's socket: each event the agent tells a monitor
/// (queued, started, progress, content, answer, end) written as the agent writes it and read as
/// the monitor's reader reads it, per event, over 20,000 uploads' worth.
func benchCoding() {
    let endpoint = "http://127.0.0.1:3000/photo"
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    var messages: [AgentMessage] = []
    for i in 1...2_000 {
        let id = UploadID(i)
        let record = UploadRecord(
            id: id, name: "IMG_\(i).jpg", path: "/home/ann/Pictures/roll/IMG_\(i).jpg", url: endpoint,
            origin: "monitor", fileSize: 40_000, createdAt: now)
        let events: [UploadEvent] = [
            .queued(record),
            .started(id, attempt: 1, url: endpoint, totalBytes: 40_200),
            .progress(id, bytesSent: 40_200, totalBytesSent: 40_200, totalBytesExpected: 40_200),
            .content(id, sha256: String(repeating: "ab", count: 32)),
            .response(
                id,
                UploadResponse(
                    status: 200, reason: "OK", headers: [("Content-Type", "application/json"), ("Content-Length", "24")],
                    body: Array(#"{"filename":"IMG_\#(i).jpg"}"#.utf8), bodyBytesTotal: 24)),
            .finished(id, .answered(status: 200)),
        ]
        for (n, event) in events.enumerated() {
            messages.append(.event(seq: n == 2 ? nil : Int64(i * 6 + n), event: event, at: now))
        }
    }
    var lines: [Data] = []
    let rounds = 10
    let writing = seconds {
        for _ in 0..<rounds {
            lines = messages.map { AgentCoding.encode($0) }
        }
    }
    let bytes = lines.reduce(0) { $0 + $1.count }
    let raw = lines.map { Array($0) }
    var read = 0
    let reading = seconds {
        for _ in 0..<rounds {
            for line in raw where (try? AgentCoding.decodeMessage(from: line)) != nil { read += 1 }
        }
    }
    precondition(read == raw.count * rounds, "every line reads back")
    // Per kind: the share each of the six takes.
    var perKind: [String] = []
    for (kind, name) in ["queued", "started", "progress", "content", "response", "finished"].enumerated() {
        let picked = messages.enumerated().filter { $0.offset % 6 == kind }.map(\.element)
        let pickedLines = picked.map { Array(AgentCoding.encode($0)) }
        let write = seconds { for _ in 0..<rounds { for message in picked { _ = AgentCoding.encode(message) } } }
        let read = seconds { for _ in 0..<rounds { for line in pickedLines { _ = try? AgentCoding.decodeMessage(from: line) } } }
        let n = Double(picked.count * rounds)
        perKind.append(String(format: "%@ %.1f/%.1f", name, write / n * 1e6, read / n * 1e6))
    }
    print("  per kind, µs to write/read: " + perKind.joined(separator: ", "))
    let count = Double(messages.count * rounds)
    print(
        String(
            format: "agent socket: %d events of 6 kinds, %.0f bytes a line; writing %.2f µs, reading %.2f µs per event (%.2f s and %.2f s for 20,000 uploads)",
            messages.count, Double(bytes) / Double(lines.count), writing / count * 1e6, reading / count * 1e6,
            writing / count * 120_000, reading / count * 120_000))
}

func printCodingSamples() {
    let endpoint = "http://127.0.0.1:3000/photo"
    let now = Date(timeIntervalSince1970: 1_700_000_000.25)
    let id = UploadID(7)
    let record = UploadRecord(id: id, name: "IMG_7.jpg", path: "/home/ann/IMG_7.jpg", url: endpoint, origin: "monitor", fileSize: 40_000, createdAt: now)
    for event: UploadEvent in [
        .queued(record), .started(id, attempt: 1, url: endpoint, totalBytes: 40_200),
        .progress(id, bytesSent: 40_200, totalBytesSent: 40_200, totalBytesExpected: nil),
        .content(id, sha256: "abcd"),
        .response(
            id, UploadResponse(status: 200, reason: "OK", headers: [("Content-Type", "application/json")], body: Array(#"{"f":"\é"}"#.utf8), bodyBytesTotal: 9)),
        .finished(id, .answered(status: 200)), .finished(id, .failed(UploadFailure(.cannotConnect, "refused", code: 111))),
    ] {
        print(String(decoding: AgentCoding.encode(AgentMessage.event(seq: 12, event: event, at: now)), as: UTF8.self))
    }
}
