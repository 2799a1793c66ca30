import Foundation
import UploadCore
import Glibc
import NIOConcurrencyHelpers

/// One connected Unix socket carrying newline-terminated JSON messages.
///
/// Reading is blocking (one reader thread per connection). Writing goes through a serial queue,
/// so a slow peer never blocks the sender; a peer that falls more than `maxPendingBytes` behind
/// is disconnected rather than allowed to grow the agent's memory without bound.
public final class LineConnection: @unchecked Sendable {
    public let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private let writer: DispatchQueue
    private let state = NIOLockedValueBox(Output())

    /// Bytes queued and not yet written (`outgoing` plus a write under way), whether a flush is
    /// scheduled or running, and whether the connection is shut.
    private struct Output {
        var pending = 0
        var outgoing: [UInt8] = []
        var flushing = false
        var closed = false
    }
    public let maxPendingBytes: Int

    public init(fd: Int32, label: String = "uploadmon.connection", maxPendingBytes: Int = 64 << 20) {
        self.fd = fd
        self.writer = DispatchQueue(label: label)
        self.maxPendingBytes = maxPendingBytes
    }

    deinit {
        close(fd)
    }

    /// The next line without its newline, or `nil` at end of stream. Blocks.
    public func readLine(limit: Int = AgentProtocol.maxLineBytes) throws(SocketError) -> [UInt8]? {
        // Where the search for a newline resumes: a long line arriving in many reads is
        // scanned once, not once per read.
        var searched = start
        while true {
            if let line = takeLine(searchingFrom: searched) { return line }
            searched = buffer.count
            guard buffer.count - start <= limit else {
                throw SocketError(operation: "read a message longer than \(limit) bytes from", path: "the socket", code: EMSGSIZE)
            }
            guard try receive() else { return nil }
        }
    }

    /// The next line when it has already been read whole from the socket; nil otherwise, without
    /// waiting. A reader takes every message one read brought before it hands them on, so a
    /// burst of events costs one hand-over, not one each.
    public func bufferedLine() -> [UInt8]? {
        takeLine(searchingFrom: start)
    }

    private func takeLine(searchingFrom searched: Int) -> [UInt8]? {
        guard let newline = buffer[searched...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = Array(buffer[start..<newline])
        start = newline + 1
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1 << 16, start * 2 > buffer.count {
            buffer.removeFirst(start)
            start = 0
        }
        return line
    }

    /// Reads what the socket has (up to 64 KiB) onto the end of the buffer; false at end of stream.
    private func receive() throws(SocketError) -> Bool {
        let chunk = 64 * 1024
        let old = buffer.count
        while true {
            var n = 0
            buffer.append(contentsOf: repeatElement(0, count: chunk))
            buffer.withUnsafeMutableBytes { n = recv(fd, $0.baseAddress! + old, chunk, 0) }
            let failure = errno
            buffer.removeLast(chunk - max(0, n))
            if n < 0 {
                if failure == EINTR { continue }
                if failure == ECONNRESET { return false }
                throw SocketError(operation: "read from", path: "the socket", code: failure)
            }
            return n > 0
        }
    }

    /// Queues `line` plus a newline for sending. Returns false when the connection is closed or
    /// the peer is too far behind (the connection is then shut down).
    ///
    /// Lines queued while a write is under way go out together in the next one: a subscriber's
    /// camera roll of events was one `send` and one dispatch per event.
    @discardableResult
    public func send(_ line: Data) -> Bool {
        let size = line.count + 1
        let (accepted, schedule) = state.withLockedValue { s -> (Bool, Bool) in
            guard !s.closed, s.pending + size <= maxPendingBytes else { return (false, false) }
            s.pending += size
            s.outgoing.append(contentsOf: line)
            s.outgoing.append(UInt8(ascii: "\n"))
            defer { s.flushing = true }
            return (true, !s.flushing)
        }
        guard accepted else {
            shutdown()
            return false
        }
        if schedule { writer.async { [self] in flush() } }
        return true
    }

    /// Writes what is queued until nothing is (lines queued meanwhile included).
    private func flush() {
        var bytes: [UInt8] = []
        while true {
            let more = state.withLockedValue { s -> Bool in
                guard !s.outgoing.isEmpty else {
                    s.flushing = false
                    return false
                }
                swap(&bytes, &s.outgoing)
                return true
            }
            guard more else { return }
            let ok = Self.writeAll(fd, bytes)
            state.withLockedValue { $0.pending -= bytes.count }
            bytes.removeAll(keepingCapacity: true)
            if !ok { shutdown() }
        }
    }

    /// Sends and waits until the bytes are written (for a last message before closing).
    public func sendAndWait(_ line: Data) {
        guard send(line) else { return }
        writer.sync {}
    }

    /// Waits until what was queued has been written, or until `deadline` (a peer that does not
    /// read cannot hold it longer); true when everything went out.
    public func drain(until deadline: DispatchTime) -> Bool {
        let done = DispatchSemaphore(value: 0)
        writer.async { done.signal() }
        return done.wait(timeout: deadline) == .success
    }

    /// Ends both directions; a blocked reader wakes up with end of stream.
    public func shutdown() {
        let first = state.withLockedValue { s -> Bool in
            defer { s.closed = true }
            return !s.closed
        }
        if first { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    public var isClosed: Bool { state.withLockedValue { $0.closed } }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}
