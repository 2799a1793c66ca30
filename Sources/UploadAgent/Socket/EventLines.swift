import Foundation
import UploadCore

/// The events every upload tells a monitor (started, progress, content, the server's answer and
/// an end with one), written and read by hand on the agent's socket: through the JSON coders they took
/// about 15 µs to write and 20 µs to read each, several seconds of a camera roll's 20,000
/// uploads on a machine the uploads themselves keep busy (`monitor-bench coding`).
///
/// The text is the JSON the coders write for the same message, keys in the same (sorted)
/// order, so either side may be another version: a line read here that is laid out in any
/// other way, or holds an escape, is given to the JSON decoder, and every other message is
/// written by the JSON encoder.
enum EventLines {
    /// `message` as a line, when it is one of those.
    static func write(_ message: AgentMessage) -> Data? {
        guard case .event(let seq, let event, let at) = message, at.timeIntervalSince1970.isFinite else { return nil }
        var out = #"{"event":{"at":"#
        out += number(at.timeIntervalSince1970)
        switch event {
        case .started(let id, let attempt, let url, let totalBytes):
            out += #","event":{"started":{"_0":"# + String(id.rawValue) + #","attempt":"# + String(attempt)
            if let totalBytes { out += #","totalBytes":"# + String(totalBytes) }
            out += #","url":"#
            JSONLine.appendString(url, to: &out)
        case .progress(let id, let bytesSent, let totalBytesSent, let totalBytesExpected):
            out += #","event":{"progress":{"_0":"# + String(id.rawValue) + #","bytesSent":"# + String(bytesSent)
            if let totalBytesExpected { out += #","totalBytesExpected":"# + String(totalBytesExpected) }
            out += #","totalBytesSent":"# + String(totalBytesSent)
        case .content(let id, let sha256, let source, let name):
            out += #","event":{"content":{"_0":"# + String(id.rawValue) + #","sha256":"#
            JSONLine.appendString(sha256, to: &out)
            if let source {
                out += #","source":"#
                JSONLine.appendString(source, to: &out)
            }
            if let name {
                out += #","name":"#
                JSONLine.appendString(name, to: &out)
            }
        case .queued(let record):
            guard let fresh = freshRecord(record) else { return nil }
            out += #","event":{"queued":{"_0":"# + fresh
        case .response(let id, let response):
            out += #","event":{"response":{"_0":"# + String(id.rawValue) + #","_1":"#
            writeResponse(response, to: &out)
        case .finished(let id, .answered(let status)):
            out += #","event":{"finished":{"_0":"# + String(id.rawValue) + #","_1":{"answered":{"status":"# + String(status) + "}}"
        default:
            return nil
        }
        out += "}}"
        if let seq { out += #","seq":"# + String(seq) }
        out += "}}"
        return Data(out.utf8)
    }

    /// A record just queued (nothing sent, nothing answered) as its `Codable` form has it, keys
    /// sorted; nil for any other (what this form leaves out would be lost: checked by reading
    /// the form back into a record equal to it).
    private static func freshRecord(_ record: UploadRecord) -> String? {
        guard record.phase == .queued, record.attempts == 0, record.bytesSent == 0, record.createdAt.timeIntervalSince1970.isFinite else { return nil }
        var out = #"{"attempts":0,"bytesSent":0,"field":"#
        JSONLine.appendString(record.field, to: &out)
        if let path = record.path {
            out += #","file":"#
            JSONLine.appendString(path, to: &out)
        }
        if let changed = record.fileChanged { out += #","fileChangedNs":"# + String(changed) }
        if let modified = record.fileModified { out += #","fileModifiedNs":"# + String(modified) }
        if let size = record.fileSize { out += #","fileSize":"# + String(size) }
        out += #","id":"# + String(record.id.rawValue) + #","name":"#
        JSONLine.appendString(record.name, to: &out)
        out += #","origin":"#
        JSONLine.appendString(record.origin, to: &out)
        out += #","queuedAt":"# + number(record.createdAt.timeIntervalSince1970) + #","state":"queued","url":"#
        JSONLine.appendString(record.url, to: &out)
        if record.withoutLocation { out += #","withoutLocation":true"# }
        out += "}"
        // Whatever a fresh record may carry that this form does not must not be dropped.
        var reader = Reader(bytes: Array(out.utf8))
        if let back = reader.freshRecord(), back == record { return out }
        guard let back = try? AgentCoding.decode(UploadRecord.self, from: Array(out.utf8)), back == record else { return nil }
        return out
    }

    /// An answer as its `Codable` form has it, keys sorted: the kept body in base64 (as the
    /// JSON encoder writes `Data`), the headers as pairs.
    private static func writeResponse(_ response: UploadResponse, to out: inout String) {
        out += #"{"body":""# + Data(response.body).base64EncodedString() + #"","bodyBytesTotal":"# + String(response.bodyBytesTotal)
        if let cut = response.cut {
            out += #","cut":"#
            JSONLine.appendString(cut, to: &out)
        }
        out += #","headers":["#
        for (index, (name, value)) in response.headers.enumerated() {
            out += index == 0 ? "[" : ",["
            JSONLine.appendString(name, to: &out)
            out += ","
            JSONLine.appendString(value, to: &out)
            out += "]"
        }
        out += #"],"reason":"#
        JSONLine.appendString(response.reason, to: &out)
        out += #","status":"# + String(response.status)
        if let verified = response.verified {
            out += #","verified":"#
            JSONLine.appendString(verified, to: &out)
        }
        out += "}"
    }

    /// A finite number as JSON: whole ones without a fraction.
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    /// The message in `line`, when it is one of those laid out as `write` lays them out
    /// (and as the JSON encoder does); nil for anything else.
    static func read(_ line: [UInt8]) -> AgentMessage? {
        var reader = Reader(bytes: line)
        guard reader.literal(#"{"event":{"at":"#), let at = reader.double(), reader.literal(#","event":{""#),
            let kind = reader.plainString(), reader.literal(#":{"_0":"#)
        else { return nil }
        // A record, not an id, follows a `queued`'s `_0`.
        if kind == "queued" { return readQueued(line, at: at) }
        guard let id = reader.int() else { return nil }
        let event: UploadEvent
        switch kind {
        case "started":
            guard reader.literal(#","attempt":"#), let attempt = reader.int() else { return nil }
            var totalBytes: Int64?
            if reader.literal(#","totalBytes":"#) {
                guard let total = reader.int() else { return nil }
                totalBytes = Int64(total)
            }
            guard reader.literal(#","url":""#), let url = reader.plainString() else { return nil }
            event = .started(UploadID(id), attempt: attempt, url: url, totalBytes: totalBytes)
        case "progress":
            guard reader.literal(#","bytesSent":"#), let sent = reader.int() else { return nil }
            var expected: Int64?
            if reader.literal(#","totalBytesExpected":"#) {
                guard let total = reader.int() else { return nil }
                expected = Int64(total)
            }
            guard reader.literal(#","totalBytesSent":"#), let total = reader.int() else { return nil }
            event = .progress(UploadID(id), bytesSent: Int64(sent), totalBytesSent: Int64(total), totalBytesExpected: expected)
        case "content":
            guard reader.literal(#","sha256":""#), let sha = reader.plainString() else { return nil }
            var source: String?
            if reader.literal(#","source":""#) {
                guard let text = reader.plainString() else { return nil }
                source = text
            }
            var name: String?
            if reader.literal(#","name":""#) {
                guard let text = reader.plainString() else { return nil }
                name = text
            }
            event = .content(UploadID(id), sha256: sha, source: source, name: name)
        case "response":
            guard reader.literal(#","_1":"#), let response = reader.response() else { return nil }
            event = .response(UploadID(id), response)
        case "finished":
            guard reader.literal(#","_1":{"answered":{"status":"#), let status = reader.int(), reader.literal("}}") else { return nil }
            event = .finished(UploadID(id), .answered(status: status))
        default:
            return nil
        }
        guard reader.literal("}}") else { return nil }
        var seq: Int64?
        if reader.literal(#","seq":"#) {
            guard let number = reader.int() else { return nil }
            seq = Int64(number)
        }
        guard reader.literal("}}"), reader.atEnd else { return nil }
        return .event(seq: seq, event: event, at: Date(timeIntervalSince1970: at))
    }

    /// A `queued` line: `{"event":{"at":…,"event":{"queued":{"_0":{record}}},"seq":…}}`.
    private static func readQueued(_ line: [UInt8], at: Double) -> AgentMessage? {
        var reader = Reader(bytes: line)
        guard reader.literal(#"{"event":{"at":"#), reader.double() != nil, reader.literal(#","event":{"queued":{"_0":"#),
            let record = reader.freshRecord(), reader.literal("}}")
        else { return nil }
        var seq: Int64?
        if reader.literal(#","seq":"#) {
            guard let number = reader.int() else { return nil }
            seq = Int64(number)
        }
        guard reader.literal("}}"), reader.atEnd else { return nil }
        return .event(seq: seq, event: .queued(record), at: Date(timeIntervalSince1970: at))
    }

    /// A cursor over a line's bytes.
    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        var atEnd: Bool { at == bytes.count }

        /// Steps over `text` if the line goes on with it.
        mutating func literal(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard bytes.count - at >= count else { return false }
            let matches = text.withUTF8Buffer { expected in
                bytes.withUnsafeBufferPointer { line in memcmp(line.baseAddress! + at, expected.baseAddress!, count) == 0 }
            }
            if matches { at += count }
            return matches
        }

        /// An integer (optionally negative) that fits an `Int`.
        mutating func int() -> Int? {
            var index = at
            let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            let first = index
            var value = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, index - first < 18 {
                value = value * 10 + Int(bytes[index] - 0x30)
                index += 1
            }
            guard index > first, index - first < 18 || !(index < bytes.count && (0x30...0x39).contains(bytes[index])) else { return nil }
            at = index
            return negative ? -value : value
        }

        /// A JSON number, as `Double` reads its text.
        mutating func double() -> Double? {
            var index = at
            while index < bytes.count, Self.numberBytes.contains(bytes[index]) { index += 1 }
            guard index > at, let value = Double(String(decoding: bytes[at..<index], as: UTF8.self)), value.isFinite else { return nil }
            at = index
            return value
        }

        private static let numberBytes = Set("0123456789+-.eE".utf8)

        /// A record laid out as `freshRecord` lays it out.
        mutating func freshRecord() -> UploadRecord? {
            guard literal(#"{"attempts":0,"bytesSent":0,"field":""#), let field = plainString() else { return nil }
            var path: String?
            if literal(#","file":""#) {
                guard let text = plainString() else { return nil }
                path = text
            }
            var changed: Int64?
            var modified: Int64?
            var size: Int64?
            if literal(#","fileChangedNs":"#) {
                guard let number = int() else { return nil }
                changed = Int64(number)
            }
            if literal(#","fileModifiedNs":"#) {
                guard let number = int() else { return nil }
                modified = Int64(number)
            }
            if literal(#","fileSize":"#) {
                guard let number = int() else { return nil }
                size = Int64(number)
            }
            guard literal(#","id":"#), let id = int(), literal(#","name":""#), let name = plainString(),
                literal(#","origin":""#), let origin = plainString(), literal(#","queuedAt":"#), let queuedAt = double(),
                literal(#","state":"queued","url":""#), let url = plainString()
            else { return nil }
            let withoutLocation = literal(#","withoutLocation":true"#)
            guard literal("}") else { return nil }
            var record = UploadRecord(
                id: UploadID(id), name: name, path: path, url: url, field: field, origin: origin, fileSize: size,
                createdAt: Date(timeIntervalSince1970: queuedAt))
            (record.fileChanged, record.fileModified, record.withoutLocation) = (changed, modified, withoutLocation)
            return record
        }

        /// An answer laid out as `writeResponse` lays it out.
        mutating func response() -> UploadResponse? {
            guard literal(#"{"body":""#), let encoded = plainString(), let body = Data(base64Encoded: encoded),
                literal(#","bodyBytesTotal":"#), let total = int()
            else { return nil }
            var cut: String?
            if literal(#","cut":""#) {
                guard let text = plainString() else { return nil }
                cut = text
            }
            guard literal(#","headers":["#) else { return nil }
            var headers: [(String, String)] = []
            while !literal("]") {
                if !headers.isEmpty { guard literal(",") else { return nil } }
                guard literal(#"[""#), let name = plainString(), literal(#",""#), let value = plainString(), literal("]") else { return nil }
                headers.append((name, value))
            }
            guard literal(#","reason":""#), let reason = plainString(), literal(#","status":"#), let status = int() else { return nil }
            var verified: String?
            if literal(#","verified":""#) {
                guard let text = plainString() else { return nil }
                verified = text
            }
            guard literal("}") else { return nil }
            var response = UploadResponse(status: status, reason: reason, headers: headers, body: Array(body), bodyBytesTotal: Int64(total), cut: cut)
            response.verified = verified
            return response
        }

        /// The rest of a string whose opening quote was read, up to its closing quote, when it
        /// holds no escape (nil otherwise: the JSON decoder reads it).
        mutating func plainString() -> String? {
            var index = at
            while index < bytes.count {
                switch bytes[index] {
                case 0x22:
                    let text = String(decoding: bytes[at..<index], as: UTF8.self)
                    at = index + 1
                    return text
                case 0x5C, 0..<0x20:
                    return nil
                default:
                    index += 1
                }
            }
            return nil
        }
    }
}
