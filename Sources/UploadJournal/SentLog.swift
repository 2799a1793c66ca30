import Foundation

/// What a foreground `send` remembers of what it sent, appended to a small file beside the
/// journal (`journal.sqlite-sent`) instead of written into the journal itself: one `write` of a
/// line per file, where opening the journal (SQLite, its schema, its write-ahead log, a
/// transaction and a checkpoint on close) was a third of a small upload's whole process. The
/// journal takes the lines in (`Journal.drainSentLog`) whenever it is opened, before "already
/// sent" is looked up, and when the log grows past `drainAbove`, so nothing is lost and the
/// file stays small.
///
/// Lines are tab-separated, `%`, tab, CR and LF percent-escaped; a line the log does not end
/// (a writer killed half-way) is skipped. Writers hold a shared `flock`, the journal an
/// exclusive one while it reads and empties the file.
public struct SentLog: Sendable {
    public let path: String

    /// The log of the journal at `journalPath`.
    public init(journal journalPath: String) {
        path = journalPath + "-sent"
    }

    /// Past this size the writer has the journal take the lines in.
    public static let drainAbove = 256 * 1024

    /// Appends the records; returns whether the log is now past `drainAbove`.
    @discardableResult
    public func append(sent: [SentContent], pending: [PendingSent]) throws -> Bool {
        guard !sent.isEmpty || !pending.isEmpty else { return false }
        var text = ""
        for one in sent { text += Self.line(one) }
        for one in pending { text += Self.line(one) }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SentLogError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        guard flock(fd, LOCK_SH) == 0 else { throw SentLogError(path: path, reason: String(cString: strerror(errno))) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw SentLogError(path: path, reason: String(cString: strerror(errno))) }
            written += n
        }
        var st = stat()
        return fstat(fd, &st) == 0 && Int(st.st_size) > Self.drainAbove
    }

    /// Takes every whole line out of the log and hands its records to `take`; the log is emptied
    /// only when `take` returns (an error leaves the lines for the next time).
    func drain(_ take: (_ sent: [SentContent], _ pending: [PendingSent]) throws -> Void) throws {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return }
            throw SentLogError(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { throw SentLogError(path: path, reason: String(cString: strerror(errno))) }
        defer { flock(fd, LOCK_UN) }
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw SentLogError(path: path, reason: String(cString: strerror(errno))) }
            if n == 0 { break }
            data.append(contentsOf: chunk[0..<n])
        }
        guard !data.isEmpty else { return }
        let (sent, pending) = Self.records(in: data)
        try take(sent, pending)
        guard ftruncate(fd, 0) == 0 else { throw SentLogError(path: path, reason: String(cString: strerror(errno))) }
    }

    /// The records of the log's whole lines; lines that do not read are skipped.
    static func records(in data: [UInt8]) -> (sent: [SentContent], pending: [PendingSent]) {
        var sent: [SentContent] = []
        var pending: [PendingSent] = []
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        lines.removeLast()  // after the last line feed: empty, or a line never finished
        for line in lines {
            let fields = line.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false).map { unescape(Array($0)) }
            switch (fields.first, fields.count) {
            case ("s", 6):
                guard let size = Int64(fields[3]), size >= 0, let at = Self.time(fields[5]) else { continue }
                sent.append(SentContent(endpoint: fields[1], sha256: fields[2], size: size, name: fields[4], sentAt: at))
            case ("p", 9):
                guard let size = Int64(fields[3]), size >= 0, let mtime = Int64(fields[4]), let ctime = Int64(fields[5]),
                    let at = Self.time(fields[8])
                else { continue }
                pending.append(
                    PendingSent(
                        endpoint: fields[1], path: fields[2], size: size, mtimeNs: mtime, ctimeNs: ctime,
                        stripped: fields[6] == "1", name: fields[7], sentAt: at))
            default:
                continue
            }
        }
        return (sent, pending)
    }

    /// A line's time (seconds since 1970), only when it is a time a journal keeps: finite and
    /// between 1970 and 9999 (the file is ours, but what is read from disk is checked).
    static func time(_ text: String) -> Date? {
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds < 253_402_300_800 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    static func line(_ sent: SentContent) -> String {
        [
            "s", escape(sent.endpoint), escape(sent.sha256), String(sent.size), escape(sent.name),
            String(sent.sentAt.timeIntervalSince1970),
        ].joined(separator: "\t") + "\n"
    }

    static func line(_ pending: PendingSent) -> String {
        [
            "p", escape(pending.endpoint), escape(pending.path), String(pending.size), String(pending.mtimeNs), String(pending.ctimeNs),
            pending.stripped ? "1" : "0", escape(pending.name), String(pending.sentAt.timeIntervalSince1970),
        ].joined(separator: "\t") + "\n"
    }

    static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == 9 || $0 == 10 || $0 == 13 }) else { return text }
        var out = ""
        for character in text.unicodeScalars {
            switch character {
            case "%": out += "%25"
            case "\t": out += "%09"
            case "\n": out += "%0A"
            case "\r": out += "%0D"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    static func unescape(_ bytes: [UInt8]) -> String {
        guard bytes.contains(UInt8(ascii: "%")) else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                out.append(value)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// The sent log could not be opened, locked, written or read.
public struct SentLogError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "\(path): \(reason)" }
}

extension Journal {
    /// Takes the lines of the journal's `SentLog` in (what foreground sends remembered).
    public func drainSentLog() throws {
        try SentLog(journal: path).drain { sent, pending in try remember(sent: sent, pending: pending) }
    }
}
