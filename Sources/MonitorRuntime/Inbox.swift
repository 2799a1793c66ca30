import Glibc
import Monitor
import NIOConcurrencyHelpers

/// What reaches the monitor's run loop from other threads: events for the reducer, and signals.
public enum LoopInput: Sendable {
    case event(MonitorEvent)
    case signal(Int32)
}

/// A locked list of inputs plus a self-pipe, so the run loop can sleep in `poll` on the
/// terminal and this at once, and uses no CPU while nothing happens.
public final class Inbox: Sendable {
    private let items = NIOLockedValueBox<[LoopInput]>([])
    public let readFD: Int32
    private let writeFD: Int32

    public init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "cannot create the run loop's wake pipe")
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        Glibc.close(readFD)
        Glibc.close(writeFD)
    }

    public func post(_ input: LoopInput) {
        items.withLockedValue { $0.append(input) }
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Everything posted so far, in order; empties the pipe too.
    public func take() -> [LoopInput] {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readFD, &buffer, buffer.count) > 0 {}
        return items.withLockedValue { items in
            defer { items.removeAll(keepingCapacity: true) }
            return items
        }
    }
}
