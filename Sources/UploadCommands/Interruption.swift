import Foundation
import Glibc
import NIOConcurrencyHelpers
import UploadCore

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
public final class Interruption: @unchecked Sendable {
    private let received = NIOLockedValueBox<Int32?>(nil)
    private let pipe = SelfPipe(nonBlocking: false)
    private let stopped = NIOLockedValueBox(false)
    private let thread: Thread

    public init(onFirst: @escaping @Sendable (Int32) -> Void) {
        precondition(interruptionPipe < 0, "one Interruption at a time")
        interruptionPipe = pipe.writeFD
        let handler: @convention(c) (Int32) -> Void = { number in
            SelfPipe.post(UInt8(truncatingIfNeeded: number), to: interruptionPipe)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        thread = Thread { [received, pipe] in
            // A zero byte is `stop()`'s: the end.
            while let byte = pipe.next(), byte != 0 {
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
        }
        thread.start()
    }

    /// The signal that interrupted the run, if one did.
    public var signalNumber: Int32? { received.withLockedValue { $0 } }

    /// Gives the signals their default meaning back and ends the reading thread.
    public func stop() {
        let already = stopped.withLockedValue { value -> Bool in
            defer { value = true }
            return value
        }
        guard !already else { return }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
        interruptionPipe = -1
        pipe.post(0)
    }
}
