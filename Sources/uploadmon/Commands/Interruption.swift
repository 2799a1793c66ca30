import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// Ctrl-C (SIGINT) or SIGTERM while `send` runs. The first one calls `onFirst`, which cancels
/// the uploads politely: each running request is cancelled (its connection closed, so the
/// server discards the partial file), every line turns into "cancelled (interrupted)" and the
/// summary is printed. A second Ctrl-C, for when that is not fast enough, ends the process at once.
final class Interruption: @unchecked Sendable {
    /// Set once in `init`, read by `stop`.
    private var sources: [any DispatchSourceSignal] = []
    private let received = NIOLockedValueBox<Int32?>(nil)

    init(onFirst: @escaping @Sendable (Int32) -> Void) {
        let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [received] in
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
            source.resume()
            return source
        }
        self.sources = sources
    }

    /// The signal that interrupted the run, if one did.
    var signalNumber: Int32? { received.withLockedValue { $0 } }

    /// Stops listening and gives the signals their default meaning back.
    func stop() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
