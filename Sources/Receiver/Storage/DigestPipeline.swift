import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import UploadCore

/// Digests of a body worked out on a thread of their own while the receiving thread goes on
/// parsing and writing it: SHA-256 of a large upload once doubled the time the receiver spent on
/// each byte, all of it on the thread that writes. The buffers are hashed in the order given,
/// at most `window` of them behind (the caller waits beyond that, so a slow hash bounds the
/// memory held rather than letting the body pile up). Empty (no algorithm): nothing is done.
final class DigestPipeline: Sendable {
    private let digester: NIOLockedValueBox<Digester>
    private let queue = DispatchQueue(label: "uploadmon-receiver-digest", qos: .userInitiated)
    private let room: DispatchSemaphore
    let isEmpty: Bool

    /// At most this many buffers wait to be hashed.
    static let window = 16

    init(_ algorithms: Set<DigestFields.Algorithm>) {
        digester = NIOLockedValueBox(Digester(algorithms))
        isEmpty = algorithms.isEmpty
        room = DispatchSemaphore(value: Self.window)
    }

    /// Hands `buffer` over to be hashed; blocks while `window` buffers wait (call it from the
    /// file-writing threads, which block anyway, never from an event loop).
    func feed(_ buffer: ByteBuffer) {
        guard !isEmpty else { return }
        room.wait()
        queue.async { [digester, room] in
            digester.withLockedValue { digester in buffer.withUnsafeReadableBytes { digester.update($0) } }
            room.signal()
        }
    }

    /// Hands bytes over that are read now (a stream read back from disk).
    func feed(_ bytes: UnsafeRawBufferPointer) {
        feed(ByteBuffer(bytes: bytes))
    }

    /// The digests, once every buffer fed was hashed.
    func finalize() -> [DigestFields.Algorithm: [UInt8]] {
        guard !isEmpty else { return [:] }
        return queue.sync { digester.withLockedValue { $0.finalize() } }
    }
}
