import Foundation
import Testing
@testable import UploadAgent
import UploadCore

/// The everyday events written and read by hand mean what the JSON coders make of them, both
/// ways, for any values they may hold; anything else goes through the coders.
@Suite struct EventLinesTests {
    static func jsonLine(_ message: AgentMessage) throws -> [UInt8] {
        Array(try JSONWriter.data(message, .compact, dates: .secondsSince1970))
    }

    static func decodedByJSON(_ line: [UInt8]) throws -> AgentMessage {
        try AgentCoding.decode(AgentMessage.self, from: line)
    }

    static func parts(_ message: AgentMessage) -> (Int64?, UploadEvent, Double)? {
        guard case .event(let seq, let event, let at) = message else { return nil }
        return (seq, event, at.timeIntervalSince1970)
    }

    static func randomText(_ generator: inout some RandomNumberGenerator) -> String {
        let pieces = ["http://127.0.0.1:3000/photo", "https://up.example/a b", "/ä/ö", "\"", "\\", "\n", "\u{1}", "\u{202E}", "日本", "/", "?q=1&r=2", "😀"]
        return (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
    }

    @Test func handWrittenAndJSONAgreeBothWays() throws {
        var generator = SystemRandomNumberGenerator()
        var byHand = 0
        for round in 0..<4_000 {
            let id = UploadID(Int.random(in: 1...Int(Int32.max), using: &generator))
            let big = Int64.random(in: 0...(1 << 53), using: &generator)
            var answer = UploadResponse(
                status: Int.random(in: 100...599, using: &generator), reason: Self.randomText(&generator),
                headers: (0..<(round % 3)).map { _ in (Self.randomText(&generator), Self.randomText(&generator)) },
                body: (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) },
                bodyBytesTotal: big, cut: round % 4 == 0 ? Self.randomText(&generator) : nil)
            answer.verified = round % 5 == 0 ? "sha-256" : nil
            var record = UploadRecord(
                id: id, name: Self.randomText(&generator), path: round % 3 == 0 ? nil : Self.randomText(&generator),
                url: Self.randomText(&generator), field: round % 2 == 0 ? "photo" : Self.randomText(&generator),
                origin: Self.randomText(&generator), fileSize: round % 4 == 0 ? nil : big,
                createdAt: Date(timeIntervalSince1970: [1_700_000_000.5, Double.random(in: 0...4e9, using: &generator)][round % 2]))
            record.fileModified = round % 5 == 0 ? nil : big + 7
            record.fileChanged = round % 6 == 0 ? nil : big + 9
            record.withoutLocation = round % 2 == 1
            if round % 9 == 0 { record.attempts = 1 }
            if round % 11 == 0 { record.contentSHA256 = "ab" }
            let event: UploadEvent =
                switch round % 8 {
                case 0:
                    .started(
                        id, attempt: Int.random(in: 1...1000, using: &generator), url: Self.randomText(&generator), totalBytes: round % 12 == 0 ? nil : big)
                case 1: .progress(id, bytesSent: big / 3, totalBytesSent: big, totalBytesExpected: round % 12 == 1 ? nil : big + 1)
                case 2:
                    .content(
                        id, sha256: round % 12 == 2 ? Self.randomText(&generator) : String(repeating: "0f", count: 32),
                        source: round % 5 == 0 ? String(repeating: "1e", count: 32) : nil,
                        name: round % 3 == 0 ? Self.randomText(&generator) : nil)
                case 3: .finished(id, .answered(status: Int.random(in: 100...599, using: &generator)))
                case 4: .finished(id, .failed(UploadFailure(.cannotConnect, Self.randomText(&generator), code: 111)))
                case 5: .response(id, answer)
                case 6: .queued(record)
                default: .redirected(id, to: Self.randomText(&generator))
                }
            let at = [1_700_000_000, 1_764_387_200.123456, Double.random(in: 0...4e9, using: &generator), 0.5][round % 4]
            let message = AgentMessage.event(
                seq: round % 5 == 0 ? nil : Int64.random(in: 1...Int64(1) << 50, using: &generator), event: event, at: Date(timeIntervalSince1970: at))
            let written = Array(AgentCoding.encode(message))
            if EventLines.write(message) != nil { byHand += 1 }
            // What the hand wrote, the JSON decoder reads as the message.
            let viaJSON = try #require(Self.parts(try Self.decodedByJSON(written)))
            let expected = try #require(Self.parts(message))
            #expect(viaJSON.0 == expected.0 && viaJSON.1 == expected.1 && viaJSON.2 == expected.2, "\(String(decoding: written, as: UTF8.self))")
            // What the JSON encoder wrote, the reader reads as the message (by hand when it can).
            let fromJSON = try #require(Self.parts(try AgentCoding.decodeMessage(from: Self.jsonLine(message))))
            #expect(fromJSON.0 == expected.0 && fromJSON.1 == expected.1 && fromJSON.2 == expected.2)
            // And its own lines.
            let own = try #require(Self.parts(try AgentCoding.decodeMessage(from: written)))
            #expect(own.0 == expected.0 && own.1 == expected.1 && own.2 == expected.2)
        }
        #expect(byHand >= 2_800, "the six kinds are written by hand (a record only as queued)")
    }

    @Test func theJSONEncodersLinesOfTheEverydayEventsAreReadByHand() throws {
        let at = Date(timeIntervalSince1970: 1_700_000_000.25)
        for event: UploadEvent in [
            .started(UploadID(7), attempt: 2, url: "http://h/photo", totalBytes: 40_200),
            .progress(UploadID(7), bytesSent: 1, totalBytesSent: 40_200, totalBytesExpected: nil),
            .content(UploadID(7), sha256: "ab"), .finished(UploadID(7), .answered(status: 201)),
            .response(
                UploadID(7),
                UploadResponse(
                    status: 200, reason: "OK", headers: [("Content-Type", "application/json")],
                    body: Array(#"{"filename":"x.jpg"}"#.utf8), bodyBytesTotal: 20)),
            .queued(
                UploadRecord(
                    id: UploadID(7), name: "IMG_7.jpg", path: "/home/ann/IMG_7.jpg", url: "http://h/photo",
                    origin: "monitor", fileSize: 40_000, createdAt: at)),
        ] {
            let line = try Self.jsonLine(.event(seq: 9, event: event, at: at))
            let read = try #require(EventLines.read(line).flatMap(Self.parts), "\(String(decoding: line, as: UTF8.self))")
            #expect(read.0 == 9 && read.1 == event && read.2 == 1_700_000_000.25)
        }
    }

    @Test func whatIsNotLaidOutAsExpectedIsLeftToTheJSONDecoder() throws {
        for text in [
            #"{"event":{"at":1,"event":{"progress":{"_0":1,"bytesSent":2,"totalBytesSent":3}},"seq":4}} "#,
            #"{"event":{"event":{"progress":{"_0":1,"bytesSent":2,"totalBytesSent":3}},"at":1}}"#,
            #"{"event":{"at":1,"event":{"content":{"_0":1,"sha256":"a\"b"}}}}"#,
            #"{"event":{"at":1,"event":{"progress":{"_0":99999999999999999999,"bytesSent":2,"totalBytesSent":3}}}}"#,
            #"{"event":{"at":1,"event":{"started":{"_0":1,"attempt":1,"url":"x"}}"#,
        ] {
            #expect(EventLines.read(Array(text.utf8)) == nil, "\(text)")
        }
        // Laid out otherwise but valid: still read, by the decoder.
        let reordered = #"{"event":{"event":{"progress":{"_0":1,"bytesSent":2,"totalBytesSent":3}},"at":1}}"#
        let read = try #require(Self.parts(try AgentCoding.decodeMessage(from: Array(reordered.utf8))))
        #expect(read.1 == .progress(UploadID(1), bytesSent: 2, totalBytesSent: 3, totalBytesExpected: nil))
    }
}
