import Glibc

/// A pipe a process writes one byte into to wake a reader: from another thread (the monitor's
/// inbox) or from a signal handler, where `write(2)` is one of the few calls allowed. Both ends
/// close on exec; the ends that must not block (`nonBlocking`) do not.
public final class SelfPipe: Sendable {
    public let readFD: Int32
    public let writeFD: Int32

    public init(nonBlocking: Bool) {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "cannot make a pipe: \(String(cString: strerror(errno)))")
        for fd in fds {
            if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        (readFD, writeFD) = (fds[0], fds[1])
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Wakes the reader with `byte`; safe in a signal handler (the descriptor must be read
    /// from a global there: see `Interruption`).
    public func post(_ byte: UInt8 = 1) {
        Self.post(byte, to: writeFD)
    }

    public static func post(_ byte: UInt8, to fd: Int32) {
        var value = byte
        _ = write(fd, &value, 1)
    }

    /// Everything written so far, read without waiting (the ends are non-blocking).
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readFD, &buffer, buffer.count) > 0 {}
    }

    /// The next byte, waiting for it; nil once every write end is closed.
    public func next() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let n = read(readFD, &byte, 1)
            if n == 1 { return byte }
            if n < 0 && errno == EINTR { continue }
            return nil
        }
    }
}
