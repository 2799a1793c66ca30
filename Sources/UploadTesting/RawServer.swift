import Foundation
import Glibc

/// A bare TCP server on 127.0.0.1 and an ephemeral port that misbehaves on purpose: each
/// accepted connection is handed to `behaviour` on its own thread. For tests of resets,
/// stalls and missing answers that a well-behaved HTTP server cannot produce.
public final class RawServer: @unchecked Sendable {
    public let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var stopped = false

    public init(behaviour: @escaping @Sendable (RawConnection) -> Void) throws {
        let (fd, port) = try LoopbackSocket.listen(backlog: 16)
        self.port = port
        self.listener = fd
        let thread = Thread { [self] in
            // The listener is closed here, by the only thread that uses it: were `stop` to
            // close it, an `accept` between two turns of this loop could take a connection
            // meant for another test's listener that got the same descriptor number.
            defer { Glibc.close(fd) }
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                lock.lock()
                if stopped {
                    lock.unlock()
                    Glibc.close(client)
                    return
                }
                lock.unlock()
                Thread.detachNewThread { behaviour(RawConnection(fd: client)) }
            }
        }
        thread.start()
    }

    public var url: String { "http://127.0.0.1:\(port)/photo" }

    /// Stops accepting (once; a second call does nothing). Accepted connections belong to
    /// their behaviour, which closes them: touching their descriptors here could hit a number
    /// the process has since reused.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        // Wakes the accept thread, which closes the listener as it leaves.
        shutdown(listener, Int32(SHUT_RDWR))
    }
}

/// One accepted connection of a `RawServer`, or a raw client connection (`connect(to:)`).
public final class RawConnection: @unchecked Sendable {
    /// The descriptor, for reads and writes of a test's own; close it with `close()`, never
    /// directly, so it is closed once (a second close could hit a number since reused).
    public let fd: Int32
    private let closing = NSLock()
    private var closed = false

    public init(fd: Int32) {
        self.fd = fd
    }

    /// Closes the descriptor the first time only.
    private func closeOnce() {
        closing.lock()
        defer { closing.unlock() }
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    /// Connects to 127.0.0.1:`port`, for tests that speak HTTP byte by byte.
    public static func connect(to port: Int) throws -> RawConnection {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED)
            Glibc.close(fd)
            throw error
        }
        return RawConnection(fd: fd)
    }

    /// Sends every byte, or stops at the first failure (the peer closed or reset); never raises SIGPIPE.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Reads until the peer closes (`closed` true) or sends nothing for `timeout` seconds.
    public func readUntilClosed(timeout: Double) -> (text: String, closed: Bool) {
        let (bytes, closed) = readToEnd(idle: timeout)
        return (String(decoding: bytes, as: UTF8.self), closed)
    }

    /// Reads until `marker` has arrived, the peer closed, or `timeout` seconds pass without a byte.
    public func read(until marker: String, timeout: Double) -> String {
        setReceiveTimeout(timeout)
        let wanted = Array(marker.utf8)
        var out: [UInt8] = []
        var byte: UInt8 = 0
        while !out.reversed().starts(with: wanted.reversed()) {
            let n = Glibc.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            out.append(byte)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads until `count` bytes arrived or the peer closed; returns how many were read.
    @discardableResult
    public func read(atLeast count: Int) -> Int {
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while total < count {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            total += n
        }
        return total
    }

    /// Reads exactly `count` bytes, or fewer when the peer closes or is silent for `timeout`
    /// seconds: for protocols whose messages say their own length.
    public func read(exactly count: Int, timeout: Double = 10) -> [UInt8] {
        setReceiveTimeout(timeout)
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = out.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, count - filled) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            filled += n
        }
        return Array(out[0..<filled])
    }

    /// Reads until the peer stops sending for `idle` seconds or closes; returns the bytes read.
    public func readAll(idle: Double) -> [UInt8] {
        readToEnd(idle: idle).bytes
    }

    /// The bytes until the peer closes (or resets: `closed` true) or is silent for `idle` seconds.
    private func readToEnd(idle: Double) -> (bytes: [UInt8], closed: Bool) {
        setReceiveTimeout(idle)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return (out, errno == ECONNRESET) }
            if n == 0 { return (out, true) }
            out.append(contentsOf: buffer[0..<n])
        }
    }

    private func setReceiveTimeout(_ seconds: Double) {
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    public func write(_ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
    }

    /// Closes with a TCP reset (SO_LINGER 0), as a crashed or killed server would.
    public func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        closeOnce()
    }

    public func close() {
        closeOnce()
    }

    /// Keeps the connection open without reading, so the client's writes stall.
    public func hold(seconds: Double) {
        Thread.sleep(forTimeInterval: seconds)
        closeOnce()
    }
}
