import Foundation
import Glibc
import NIOConcurrencyHelpers
import UploadCore

/// A TCP relay on 127.0.0.1 in front of a server that cuts connections on purpose: the client
/// side of the first `cuts.count` connections that carry at least the given number of bytes
/// is reset (as a dropped link looks to the client) once that many bytes have gone towards
/// the server. The server gets every byte relayed, then the end of the connection, and what it
/// answers after the cut is dropped: what it keeps does not depend on how fast it read (a
/// reset would discard what it had not read yet, more on a busy machine). It counts every byte the client sent, so a test can tell how much of a
/// file went over the wire in all.
///
/// Before a cut, the server's answers so far reach the client (waiting a second at most for
/// the first byte of one):
/// on a real link an interim answer (a `104` naming the upload resource) travels back while
/// megabytes go out, whereas here a client can push megabytes before the server has read
/// the request's head.
public final class CuttingRelay: @unchecked Sendable {
    public let port: Int
    private let listener: Int32
    private let target: Int

    private struct State {
        var cuts: [Int64]
        /// Connections reaching the next cut's size that are let through first.
        var sparing = 0
        var bytesToServer: Int64 = 0
        var connections = 0
        var open = 0
        var mostOpen = 0
        var cutsDone = 0
        var stopped = false
    }
    private let state: NIOLockedValueBox<State>

    /// Bytes the clients sent towards the server, over all connections.
    public var bytesToServer: Int64 { state.withLockedValue { $0.bytesToServer } }
    public var connections: Int { state.withLockedValue { $0.connections } }
    public var cutsDone: Int { state.withLockedValue { $0.cutsDone } }
    /// The most connections that were open at once.
    public var mostOpenAtOnce: Int { state.withLockedValue { $0.mostOpen } }

    /// `sparing`: the first so many connections that reach the first cut's size go through
    /// whole (a server that closes every connection after its answer gets one request each:
    /// this cuts the second large request, not the first).
    public init(to targetPort: Int, cutAfter cuts: [Int64], sparing: Int = 0) throws {
        target = targetPort
        state = NIOLockedValueBox(State(cuts: cuts, sparing: sparing))
        let (fd, port) = try LoopbackSocket.listen(backlog: 64)
        self.port = port
        listener = fd
        let thread = Thread { [self] in
            // Only this thread closes the listener (see `RawServer`): a descriptor closed under
            // a running accept loop can be reused by another test's listener.
            defer { Glibc.close(fd) }
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                if state.withLockedValue({ $0.stopped }) {
                    Glibc.close(client)
                    return
                }
                Thread.detachNewThread { self.relay(client) }
            }
        }
        thread.start()
    }

    public func url(_ path: String = "/photo") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Stops accepting (once); the accept thread closes the listener as it leaves.
    public func stop() {
        let first = state.withLockedValue { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        if first { shutdown(listener, Int32(SHUT_RDWR)) }
    }

    private func relay(_ client: Int32) {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = LoopbackSocket.address(port: target)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(server)
            Self.reset(client)
            return
        }
        state.withLockedValue { state in
            state.connections += 1
            state.open += 1
            state.mostOpen = max(state.mostOpen, state.open)
        }
        defer { state.withLockedValue { $0.open -= 1 } }
        let backDone = DispatchSemaphore(value: 0)
        let back = NIOLockedValueBox<Int64>(0)
        let cut = NIOLockedValueBox(false)
        // Server to client: as it comes; after a cut, read to the server's end and dropped.
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(server, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                if cut.withLockedValue({ $0 }) { continue }
                if !Self.writeAll(client, buffer, n) { break }
                back.withLockedValue { $0 += Int64(n) }
            }
            if !cut.withLockedValue({ $0 }) { shutdown(client, Int32(SHUT_WR)) }
            backDone.signal()
        }
        // Client to server: counted, and cut when this connection's budget is spent.
        var sent: Int64 = 0
        var spared = false
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            let limit =
                spared
                ? nil
                : state.withLockedValue { state -> Int64? in
                    guard let first = state.cuts.first, sent + Int64(n) >= first, state.sparing > 0 else { return state.cuts.first }
                    state.sparing -= 1
                    spared = true
                    return nil
                }
            var count = n
            if let limit, sent + Int64(n) >= limit { count = Int(limit - sent) }
            if count > 0, !Self.writeAll(server, buffer, count) { break }
            sent += Int64(count)
            state.withLockedValue { $0.bytesToServer += Int64(count) }
            if let limit, sent >= limit {
                state.withLockedValue { state in
                    state.cuts.removeFirst()
                    state.cutsDone += 1
                }
                // What the server has answered so far reaches the client first.
                var settled = 0
                for _ in 0..<1000 where settled < 20 {
                    if back.withLockedValue({ $0 }) > 0 { settled += 1 }
                    usleep(1000)
                }
                // The link drops: the server reads what was relayed, then its end (it is given
                // 5 s to finish with it); the client sees a reset.
                cut.withLockedValue { $0 = true }
                shutdown(server, Int32(SHUT_WR))
                if backDone.wait(timeout: HouseClock.waitDeadline(after: 5)) == .timedOut {
                    shutdown(server, Int32(SHUT_RDWR))
                    backDone.wait()
                }
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                Glibc.close(client)
                Glibc.close(server)
                return
            }
        }
        shutdown(server, Int32(SHUT_WR))
        backDone.wait()
        Glibc.close(client)
        Glibc.close(server)
    }

    private static func writeAll(_ fd: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
        var offset = 0
        while offset < count {
            let n = buffer.withUnsafeBytes { send(fd, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    static func reset(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        Glibc.close(fd)
    }
}
