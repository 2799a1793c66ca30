import UploadCore

/// A server's answer whose head HTTP does not allow: the field that broke it, found in the
/// bytes the parser refused. NIO's parser says only "invalid character in header"; a user
/// whose S3-compatible server put a control character in a part's `ETag` needs to read which
/// field of the server's answer it was.
struct MalformedAnswer: Error, Equatable, CustomStringConvertible {
    /// The field's name as the server wrote it (printable characters only), or nil when the bad
    /// byte is in a line without one (the status line, a line without a colon).
    let field: String?
    /// The byte HTTP does not allow there.
    let byte: UInt8
    /// Whether the byte is in the field's name (else in its value).
    let inName: Bool

    var description: String {
        let what = Self.byteWords(byte)
        guard let field else { return "the server's answer was refused as malformed: a line of its head holds \(what)" }
        return "the server's answer was refused as malformed: its \(field) header holds \(what) in its \(inName ? "name" : "value"), which HTTP does not allow"
    }

    static func byteWords(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16, uppercase: true)
        let code = "0x" + (hex.count < 2 ? "0" + hex : hex)
        return byte < 0x20 || byte == 0x7F ? "a control character (\(code))" : "the character \(code)"
    }

    /// The first field of the head in `bytes` (from a status line or from a field's line, as the
    /// parser left them) whose name is not a token or whose value holds a control character other
    /// than tab; nil when every line is well formed (the parser refused something else).
    static func find<Bytes: Collection<UInt8>>(in bytes: Bytes) -> MalformedAnswer? {
        var lines: [ArraySlice<UInt8>] = []
        var current: [UInt8] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if current.last == UInt8(ascii: "\r") { current.removeLast() }
                // The empty line ends the head.
                if current.isEmpty { break }
                lines.append(current[...])
                current = []
            } else {
                current.append(byte)
            }
        }
        if !current.isEmpty { lines.append(current[...]) }
        for line in lines {
            if line.starts(with: Array("HTTP/".utf8)) {
                if let bad = line.first(where: { !isValueByte($0) }) { return MalformedAnswer(field: nil, byte: bad, inName: false) }
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                if let bad = line.first(where: { !isValueByte($0) }) { return MalformedAnswer(field: nil, byte: bad, inName: false) }
                continue
            }
            let name = line[..<colon]
            let printable = String(decoding: name.filter { $0 > 0x20 && $0 < 0x7F }.prefix(64), as: UTF8.self)
            if let bad = name.first(where: { !isTokenByte($0) }) {
                return MalformedAnswer(field: printable.isEmpty ? nil : printable, byte: bad, inName: true)
            }
            if let bad = line[(colon + 1)...].first(where: { !isValueByte($0) }) {
                return MalformedAnswer(field: printable, byte: bad, inName: false)
            }
        }
        return nil
    }

    static func isValueByte(_ byte: UInt8) -> Bool { DirectRequestHead.isValueByte(byte) }
    static func isTokenByte(_ byte: UInt8) -> Bool { RequestHeader.isTokenByte(byte) }
}
