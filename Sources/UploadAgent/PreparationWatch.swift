import Foundation
import Glibc
import UploadClient
import UploadCore

/// The uploads whose files the agent is preparing (opening, checking, stripping the location,
/// sniffing the type: the work that reads a file's structure), written to a small file beside
/// the journal as each begins and ends. An agent that died in the middle of one (a crafted
/// file that stops a parser) finds it there at its next start: an upload whose preparation
/// stopped the agent `failAfter` times is failed with the reason, so the queue goes on, where
/// otherwise every later start would die on the same file before any other is sent.
///
/// A process that dies leaves what it wrote with the kernel, so no write waits for the disk.
public final class PreparationWatch: @unchecked Sendable {
    /// Stops during preparation after which an upload is left out.
    public static let failAfter = 2

    /// What the last agent left: each upload it was preparing when it stopped, and how many
    /// times (this one included) an agent has stopped while preparing it.
    public let stoppedDuring: [UploadID: Int]
    private let fd: Int32
    private let lock = NSLock()
    /// The uploads being prepared, each with how many times it stopped an agent before.
    private var preparing: [UploadID: Int] = [:]
    /// Stops counted at start for uploads not yet prepared again.
    private var earlier: [UploadID: Int]

    /// Opens (or makes, private to the user) the file at `path` and reads what it holds.
    public init(path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw PreparationWatchError(path: path, reason: String(cString: strerror(errno))) }
        self.fd = fd
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 20 {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got <= 0 { break }
            bytes += chunk[..<got]
        }
        stoppedDuring = Self.parse(bytes)
        earlier = stoppedDuring
        write()
    }

    deinit { close(fd) }

    /// The file's lines, `id stops`: each upload once, its stops counted one more (the agent
    /// that wrote it stopped). Lines that are not two numbers are skipped.
    static func parse(_ bytes: [UInt8]) -> [UploadID: Int] {
        var found: [UploadID: Int] = [:]
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count == 2, let id = Int(String(decoding: fields[0], as: UTF8.self)), id > 0,
                let stops = Int(String(decoding: fields[1], as: UTF8.self)), stops >= 0, stops < 1_000
            else { continue }
            found[UploadID(id)] = max(found[UploadID(id)] ?? 0, stops + 1)
        }
        return found
    }

    /// Why an upload that stopped the agent `stops` times while it was prepared is left out.
    public static func reason(stops: Int) -> String {
        "the agent stopped \(stops) times while preparing this file (it may be damaged, or made to stop a reader), "
            + "so it is left out and the other uploads go on (R in the monitor tries it again)"
    }

    /// What an upload whose file stalled twice as it was read says after the stall.
    static let stalledTwice = "; twice, so it is left out and the other uploads go on (R in the monitor tries it again)"

    /// The upload `id`'s preparation begins.
    public func begin(_ id: UploadID) {
        lock.lock()
        defer { lock.unlock() }
        preparing[id] = earlier[id] ?? 0
        write()
    }

    /// The upload `id`'s preparation ended, however it ended (a call for one not begun does nothing).
    public func end(_ id: UploadID) {
        lock.lock()
        defer { lock.unlock() }
        guard preparing.removeValue(forKey: id) != nil else { return }
        earlier[id] = nil
        write()
    }

    /// The set as it is now, over what the file held (called with the lock held).
    private func write() {
        var text = ""
        for (id, stops) in preparing { text += "\(id.rawValue) \(stops)\n" }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        _ = ftruncate(fd, off_t(bytes.count))
    }
}

extension AttemptResult {
    /// Whether the attempt ended as its file was read, on the preparation's limit.
    var stalledInPreparation: Bool {
        if case .failed(let failure) = outcome { return failure.kind == .preparationStalled }
        return false
    }
}

/// The watch's file could not be opened.
public struct PreparationWatchError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot open \(path): \(reason)" }
}

/// A transport that tells a `PreparationWatch` when the upload's file is being prepared: from
/// the attempt's start to its first request (`started`), or its end when it ends before one.
struct PreparationWatchedTransport: UploadTransport {
    let inner: any UploadTransport
    let id: UploadID
    let watch: PreparationWatch

    func perform(_ request: UploadRequest, observer: AttemptObserver) async -> AttemptResult {
        watch.begin(id)
        var watched = observer
        let (watch, id) = (watch, id)
        watched.started = { url, total in
            watch.end(id)
            observer.started(url, total)
        }
        var result = await inner.perform(request, observer: watched)
        if result.stalledInPreparation, !Task.isCancelled {
            // Once more: a network file system may be back. A second stall leaves it out
            // (failed with the reason, in the queue) and the other uploads go on.
            result = await inner.perform(request, observer: watched)
            if result.stalledInPreparation, case .failed(let failure) = result.outcome {
                result = AttemptResult(
                    outcome: .failed(UploadFailure(.preparationStalled, failure.message + PreparationWatch.stalledTwice)),
                    response: nil, bytesSent: 0)
            }
        }
        watch.end(id)
        return result
    }

    func beginAttempt() -> (any TaskExecutor)? { inner.beginAttempt() }
    func endAttempt(on executor: (any TaskExecutor)?) { inner.endAttempt(on: executor) }
    func discard(_ point: ResumePoint, of request: UploadRequest) async -> String { await inner.discard(point, of: request) }
}
