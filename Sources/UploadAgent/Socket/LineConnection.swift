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
    private let state = NIOLockedValueBox((pending: 0, closed: false))
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
            if let newline = buffer[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                if start > 1 << 16, start * 2 > buffer.count {
                    buffer.removeFirst(start)
                    start = 0
                }
                return line
            }
            searched = buffer.count
            guard buffer.count - start <= limit else {
                throw SocketError(operation: "read a message longer than \(limit) bytes from", path: "the socket", code: EMSGSIZE)
            }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { return nil }
                throw SocketError(operation: "read from", path: "the socket", code: errno)
            }
            if n == 0 { return nil }
            buffer.append(contentsOf: chunk[..<n])
        }
    }

    /// Queues `line` plus a newline for sending. Returns false when the connection is closed or
    /// the peer is too far behind (the connection is then shut down).
    @discardableResult
    public func send(_ line: Data) -> Bool {
        let size = line.count + 1
        let accepted = state.withLockedValue { s -> Bool in
            guard !s.closed, s.pending + size <= maxPendingBytes else { return false }
            s.pending += size
            return true
        }
        guard accepted else {
            shutdown()
            return false
        }
        writer.async { [self] in
            var bytes = [UInt8](line)
            bytes.append(UInt8(ascii: "\n"))
            let ok = Self.writeAll(fd, bytes)
            state.withLockedValue { $0.pending -= size }
            if !ok { shutdown() }
        }
        return true
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
