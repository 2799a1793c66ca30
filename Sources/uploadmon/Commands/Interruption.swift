import Foundation
import Glibc
import NIOConcurrencyHelpers

/// The write end of the pipe `Interruption`'s signal handler reports through: one `write(2)`,
/// which is safe inside a signal handler.
nonisolated(unsafe) private var interruptionPipe: Int32 = -1

/// Ctrl-C (SIGINT) or SIGTERM while `send` runs. The first one calls `onFirst`, which cancels
/// the uploads politely: each running request is cancelled (its connection closed, so the
/// server discards the partial file), every line turns into "cancelled (interrupted)" and the
/// summary is printed. A second Ctrl-C, for when that is not fast enough, ends the process at once.
///
/// A real handler, installed before `init` returns, writes the signal number to a pipe that a
/// thread reads. (A dispatch signal source needs the signal ignored first and arms itself
/// asynchronously: a Ctrl-C in between would be lost.) One at a time per process.
final class Interruption: @unchecked Sendable {
    private let received = NIOLockedValueBox<Int32?>(nil)
    private let readEnd: Int32
    private let writeEnd: Int32

    init(onFirst: @escaping @Sendable (Int32) -> Void) {
        precondition(interruptionPipe < 0, "one Interruption at a time")
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "cannot make a pipe: \(String(cString: strerror(errno)))")
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        (readEnd, writeEnd) = (fds[0], fds[1])
        interruptionPipe = writeEnd
        let handler: @convention(c) (Int32) -> Void = { number in
            var byte = UInt8(truncatingIfNeeded: number)
            _ = write(interruptionPipe, &byte, 1)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        let thread = Thread { [received, readEnd] in
            var byte: UInt8 = 0
            while read(readEnd, &byte, 1) == 1 {
                let number = Int32(byte)
                let first = received.withLockedValue { value -> Bool in
                    guard value == nil else { return false }
                    value = number
                    return true
                }
                if first {
                    onFirst(number)
                } else {
                    FileHandle.standardError.write(Data("\nuploadmon: interrupted again; stopping at once\n".utf8))
                    signal(number, SIG_DFL)
                    kill(getpid(), number)
                }
            }
            close(readEnd)
        }
        thread.start()
    }

    /// The signal that interrupted the run, if one did.
    var signalNumber: Int32? { received.withLockedValue { $0 } }

    /// Gives the signals their default meaning back and ends the reading thread.
    func stop() {
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        interruptionPipe = -1
        close(writeEnd)
    }
}
