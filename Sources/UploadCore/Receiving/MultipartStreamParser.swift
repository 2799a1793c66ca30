import Foundation

/// A streaming `multipart/form-data` parser for bodies of any size: feed it the body in chunks
/// as they arrive and it reports each part's headers, its body bytes (as views into the chunk
/// just fed, never copied), and its end; it never holds more than one delimiter's worth of bytes.
///
/// The delimiter (`CRLF--boundary`) is found with `memchr` and `memcmp`, so the cost per byte is a scan, not a
/// callback: receiving stays near memory speed even for data full of CR bytes.
public struct MultipartStreamParser {
    /// What the parser found in the bytes fed so far, in order.
    public enum Event {
        /// A part begins; header names are lowercased. `bodyAt`: where in the stream its body
        /// starts (a receiver that keeps the stream can split it there).
        case partBegin(headers: [String: String], bodyAt: Int64)
        /// Body bytes of the current part, valid only during the callback.
        case body(UnsafeRawBufferPointer)
        /// The current part's body ended at a delimiter.
        case partEnd
    }

    /// Why a body is not multipart/form-data with the given boundary.
    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case headersTooLarge
        case malformedHeader(String)
        case malformedDelimiter

        public var description: String {
            switch self {
            case .headersTooLarge: "a part's headers are larger than 16 KiB"
            case .malformedHeader(let line): "a part header is malformed: \(line.prefix(80))"
            case .malformedDelimiter: "a boundary delimiter is not followed by CRLF or --"
            }
        }
    }

    private enum State {
        case preamble
        case afterDelimiter
        case headers
        case body
        case done
    }

    static let maxHeaderBytes = 16 * 1024

    private let delimiter: [UInt8]
    private var state: State = .preamble
    /// Bytes held back because they may begin a delimiter (or a header block not yet complete).
    private var carry: [UInt8]
    /// Whether the closing delimiter (`--boundary--`) has been seen.
    public private(set) var isComplete = false
    /// Bytes fed so far.
    public private(set) var position: Int64 = 0

    /// Inside a part's body with nothing held back: bytes known to hold no delimiter can be
    /// skipped from here (`skipBody`).
    public var canSkipBody: Bool { state == .body && carry.isEmpty }

    /// Steps over `count` bytes of the current part's body without looking at them: the caller
    /// knows they hold no delimiter (a parser before this one read them). No events.
    public mutating func skipBody(_ count: Int64) {
        precondition(canSkipBody, "only inside a part's body with nothing held back")
        position += count
    }

    public init(boundary: String) {
        delimiter = Array("\r\n--\(boundary)".utf8)
        // The first delimiter may start the body without a preceding CRLF: pretend one was there.
        carry = [0x0D, 0x0A]
    }

    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ sink: (Event) throws -> Void) throws {
        var chunk = chunk
        // Where `chunk` starts in the stream; held-back bytes are the ones just before it.
        var chunkStart = position
        position += Int64(chunk.count)
        while !carry.isEmpty, !chunk.isEmpty, state != .done {
            // Join the held-back bytes with a bounded slice of the chunk, process that copy, and
            // go on with the rest of the chunk in place once nothing is held back.
            let joinCount = min(chunk.count, Self.maxHeaderBytes)
            var joined = carry
            joined.append(contentsOf: chunk[0..<joinCount])
            let base = chunkStart - Int64(carry.count)
            carry = []
            try joined.withUnsafeBytes { try process($0, at: base, sink) }
            chunk = UnsafeRawBufferPointer(rebasing: chunk[joinCount...])
            chunkStart += Int64(joinCount)
        }
        if !chunk.isEmpty { try process(chunk, at: chunkStart, sink) }
    }

    /// Processes `data`, which starts at `base` in the stream; trailing bytes that cannot be
    /// decided yet go to `carry`.
    private mutating func process(_ data: UnsafeRawBufferPointer, at base: Int64, _ sink: (Event) throws -> Void) throws {
        var offset = 0
        while offset < data.count {
            let rest = UnsafeRawBufferPointer(rebasing: data[offset...])
            switch state {
            case .done:
                return
            case .preamble, .body:
                if let hit = find(delimiter, in: rest) {
                    if state == .body, hit > 0 { try sink(.body(UnsafeRawBufferPointer(rebasing: rest[0..<hit]))) }
                    if state == .body { try sink(.partEnd) }
                    offset += hit + delimiter.count
                    state = .afterDelimiter
                } else {
                    let keep = partialDelimiterSuffix(rest)
                    let emit = rest.count - keep
                    if state == .body, emit > 0 { try sink(.body(UnsafeRawBufferPointer(rebasing: rest[0..<emit]))) }
                    carry = Array(rest[emit...])
                    return
                }
            case .afterDelimiter:
                guard rest.count >= 2 else {
                    carry = Array(rest)
                    return
                }
                if rest[0] == 0x2D && rest[1] == 0x2D {
                    isComplete = true
                    state = .done
                    return
                }
                // RFC 2046 allows transport padding (spaces, tabs) before the CRLF.
                var i = 0
                while i < rest.count, rest[i] == 0x20 || rest[i] == 0x09 { i += 1 }
                guard i + 1 < rest.count else {
                    carry = Array(rest)
                    return
                }
                guard rest[i] == 0x0D && rest[i + 1] == 0x0A else { throw ParseError.malformedDelimiter }
                offset += i + 2
                state = .headers
            case .headers:
                let end: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]
                let blank = rest.starts(with: [0x0D, 0x0A]) ? 0 : find(end, in: rest).map { $0 + 2 }
                guard let blank else {
                    guard rest.count < Self.maxHeaderBytes else { throw ParseError.headersTooLarge }
                    carry = Array(rest)
                    return
                }
                let headers = try Self.parseHeaders(UnsafeRawBufferPointer(rebasing: rest[0..<blank]))
                try sink(.partBegin(headers: headers, bodyAt: base + Int64(offset + blank + 2)))
                offset += blank + 2
                state = .body
            }
        }
    }

    /// First occurrence of `needle` in `haystack`: `memchr` to each candidate first byte, then a
    /// compare. (glibc's `memmem` is not visible to Swift without `_GNU_SOURCE`.)
    private func find(_ needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int? {
        guard haystack.count >= needle.count, let base = haystack.baseAddress, let first = needle.first else { return nil }
        let last = haystack.count - needle.count
        var index = 0
        return needle.withUnsafeBytes { n -> Int? in
            while index <= last {
                guard let hit = memchr(base + index, Int32(first), last - index + 1) else { return nil }
                let position = UnsafeRawPointer(hit) - base
                if memcmp(base + position, n.baseAddress!, n.count) == 0 { return position }
                index = position + 1
            }
            return nil
        }
    }

    /// How many trailing bytes could be the start of a delimiter split across chunks.
    private func partialDelimiterSuffix(_ data: UnsafeRawBufferPointer) -> Int {
        let longest = min(delimiter.count - 1, data.count)
        var length = longest
        while length > 0 {
            if data[(data.count - length)...].elementsEqual(delimiter[0..<length]) { return length }
            length -= 1
        }
        return 0
    }

    static func parseHeaders(_ block: UnsafeRawBufferPointer) throws -> [String: String] {
        var headers: [String: String] = [:]
        let text = String(decoding: block, as: UTF8.self)
        for line in text.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { throw ParseError.malformedHeader(String(line)) }
            let name = line[..<colon].trimmingSpaces().lowercased()
            guard !name.isEmpty else { throw ParseError.malformedHeader(String(line)) }
            headers[name] = line[line.index(after: colon)...].trimmingSpaces()
        }
        return headers
    }
}
