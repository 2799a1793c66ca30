import UploadTesting
import Foundation
import Testing
import UploadCore
import UploadReports

/// Every way text from outside reaches a terminal goes through the one escaping rule: a file
/// named with an OSC title sequence and a screen clear, a bidi override, a server's answer and
/// reason, a URL, an error. Nothing a terminal acts on is written raw.
@Suite struct HostileOutputTests {
    static let name = "x\u{1B}]0;OWNED\u{07}\u{1B}[2J\u{202E}gnp.jpg"
    static let url = "http://h/\u{1B}[2Jphoto"
    static let answer = UploadResponse(status: 500, reason: "Bad\u{1B}]0;T\u{07}", headers: [], body: Array("\u{1B}[31mred\u{9B}2J".utf8), bodyBytesTotal: 12)
    static let failure = UploadFailure(.connectionLost, "reset by \u{1B}[2J\u{202E}peer", code: 104)

    /// Nothing a terminal acts on: no C0 control but the line feed, no C1 control, no bidi control.
    static func isInert(_ text: String) -> Bool {
        !text.unicodeScalars.contains { InvisibleCharacters.isHidden($0) && $0 != "\n" }
    }

    static var events: [UploadEvent] {
        let id = UploadID(7)
        return [
            .queued(id, name: name, totalBytes: 10),
            .started(id, attempt: 1, url: url, totalBytes: 100),
            .response(id, answer),
            .retryScheduled(id, attempt: 2, delaySeconds: 1, reason: "500 Bad\u{1B}]0;T\u{07}"),
            .redirected(id, to: url),
            .resumable(id, nil, startedOver: "the server \u{1B}[2J forgot"),
            .started(id, attempt: 2, url: url, totalBytes: 100),
            .finished(id, .failed(failure)),
            .allFinished(UploadSummary(succeeded: 0, failed: 1)),
        ]
    }

    @Test func plainAndTerminalReportersWriteNothingRaw() {
        let plain = Captured()
        var reporter = PlainReporter(console: plain)
        report(&reporter, Self.events)
        #expect(Self.isInert(plain.text), "\(plain.text.debugDescription)")
        #expect(plain.text.contains("x<U+001B>]0;OWNED<U+0007><U+001B>[2J<U+202E>gnp.jpg"))

        for color in [false, true] {
            let tty = Captured()
            var live = TTYReporter(style: OutputStyle(isTTY: true, color: color, width: 200), console: tty)
            report(&live, Self.events)
            // The reporter's own cursor and colour sequences are its own; what it quotes is escaped.
            let quoted = tty.text.replacingOccurrences(of: #"\u{1B}\[(\d*[AK]|\d+m)"#, with: "", options: .regularExpression)
                .replacingOccurrences(of: "\r", with: "")
            #expect(Self.isInert(quoted), "\(quoted.debugDescription)")
        }
    }

    @Test func jsonLinesEscapeWhatTheyQuote() {
        let out = Captured()
        var reporter = JSONReporter(console: out)
        report(&reporter, Self.events)
        #expect(Self.isInert(out.text), "\(out.text.debugDescription)")
    }

    @Test func statusAndJobsTablesEscapeEveryCell() {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var record = UploadRecord(id: UploadID(7), name: Self.name, path: "/p/" + Self.name, url: Self.url, origin: "send", fileSize: 10, createdAt: t0)
        for event in Self.events { record.apply(event, at: t0) }
        let table = StatusTable.render([record], now: t0)
        #expect(Self.isInert(table), "\(table.debugDescription)")
        #expect(table.contains("<U+202E>"))

        // A damaged journal row (more sent than expected) is shown, not a trap.
        var damaged = UploadRecord(id: UploadID(8), name: "d.jpg", path: "/p/d.jpg", url: "http://h/", origin: "send", fileSize: 1, createdAt: t0)
        damaged.apply(.started(UploadID(8), attempt: 1, url: "http://h/", totalBytes: 1), at: t0)
        damaged.apply(.progress(UploadID(8), bytesSent: .max, totalBytesSent: .max, totalBytesExpected: 1), at: t0)
        #expect(StatusTable.render([damaged], now: t0).contains("100 %"))
    }

    @Test func messagesKeepTheirLinesAndJSONKeepsItsData() throws {
        #expect(InvisibleCharacters.escaped("a\n\u{1B}b", keepingLineFeeds: true) == "a\n<U+001B>b")
        #expect(InvisibleCharacters.escaped("a\n\u{1B}b") == "a<U+000A><U+001B>b")
        let json = String(decoding: try JSONEncoder().encode(["name": Self.name + "\u{E0001}"]), as: UTF8.self)
        let safe = InvisibleCharacters.jsonEscaped(json)
        #expect(Self.isInert(safe))
        let back = try JSONDecoder().decode([String: String].self, from: Data(safe.utf8))
        #expect(back["name"] == Self.name + "\u{E0001}", "the same data")
    }
}
