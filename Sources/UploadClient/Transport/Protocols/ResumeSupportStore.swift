import Foundation
import Glibc
import NIOConcurrencyHelpers
import UploadCore
import UploadProtocols

/// Which origins resume uploads, and how (the draft's interop version, or tus and what it
/// offers), remembered across processes (every `send`, the monitor and the
/// agent share one file in the state folder): an `OPTIONS` costs a round trip, which on a
/// distant link is a fifth of a second per process. An answer is trusted for a day when the
/// origin resumes and for an hour when it does not; a remembered "resumes" that the origin then
/// refuses (it no longer creates upload resources) is forgotten at once and the upload goes the
/// ordinary way, so being wrong costs one request, never an upload. Loopback origins are not
/// remembered: asking there costs nothing, and a port is soon another server's.
public final class ResumeSupportStore: Sendable {
    /// The process's store; nil (the default, and in tests) remembers nothing beyond the process.
    public static let shared = NIOLockedValueBox<ResumeSupportStore?>(nil)

    public static let positiveAge: Double = 86_400
    public static let negativeAge: Double = 3_600

    struct Entry: Codable, Equatable {
        /// The interop version to speak, or nil: the origin does not resume uploads.
        var version: Int?
        /// What the origin said as a tus server (then `version` is nil).
        var tus: TusCapabilities?
        /// When the resume question was answered (0: never; only `verifiesAt` is known).
        var checkedAt: Double
        /// When the origin last showed it verifies digests (an answer with `Repr-Digest`).
        var verifiesAt: Double?

        /// The newest thing known of the origin.
        var newest: Double { max(checkedAt, verifiesAt ?? 0) }
    }

    let path: String
    private let lock = NIOLock()

    public init(path: String) {
        self.path = path
    }

    /// What is remembered of `origin` and still fresh at `now` (seconds since 1970).
    func lookup(_ origin: String, now: Double) -> ResumeSupport.Answer? {
        guard !Self.isLoopback(origin), let entry = lock.withLock({ read()[origin] }) else { return nil }
        let age = now - entry.checkedAt
        guard age >= 0 else { return nil }
        if let tus = entry.tus {
            return age < Self.positiveAge ? .tus(tus) : nil
        }
        if let version = entry.version {
            return age < Self.positiveAge ? .supported(version: version) : nil
        }
        return age < Self.negativeAge ? .unsupported : nil
    }

    /// Remembers what `origin` answered (nothing for an origin that gave no answer).
    func remember(_ origin: String, _ answer: ResumeSupport.Answer, now: Double) {
        var version: Int?
        var tus: TusCapabilities?
        switch answer {
        case .supported(let v): version = v
        case .tus(let capabilities): tus = capabilities
        case .unsupported: break
        case .unknown, .silent: return
        }
        guard !Self.isLoopback(origin) else { return }
        update(now: now) { entries in
            entries[origin] = Entry(version: version, tus: tus, checkedAt: now, verifiesAt: entries[origin]?.verifiesAt)
        }
    }

    /// Whether `origin` showed it verifies digests within the last day (then uploads there hash
    /// the body as it goes, rather than once more after the answer).
    func verifies(_ origin: String, now: Double) -> Bool {
        guard !Self.isLoopback(origin), let at = lock.withLock({ read()[origin]?.verifiesAt }) else { return false }
        return now - at >= 0 && now - at < Self.positiveAge
    }

    /// Remembers that `origin` answered with a digest of what it received.
    func rememberVerifies(_ origin: String, now: Double) {
        guard !Self.isLoopback(origin) else { return }
        update(now: now) { entries in
            // An origin never asked whether it resumes keeps no answer to that (checked at 0).
            var entry = entries[origin] ?? Entry(version: nil, tus: nil, checkedAt: 0)
            entry.verifiesAt = now
            entries[origin] = entry
        }
    }

    /// Changes the file under the lock. Old knowledge goes: the file stays as small as the
    /// origins in use, and no larger than the newest `maxEntries` of them.
    private func update(now: Double, _ change: (inout [String: Entry]) -> Void) {
        lock.withLock {
            var entries = read()
            change(&entries)
            entries = entries.filter { now - $0.value.newest < Self.positiveAge }
            if entries.count > Self.maxEntries {
                entries = Dictionary(
                    uniqueKeysWithValues: entries.sorted { $0.value.newest > $1.value.newest }.prefix(Self.maxEntries).map { ($0.key, $0.value) })
            }
            write(entries)
        }
    }

    /// Whether `origin` (`scheme://host:port`) is this machine's own: a loopback or unspecified
    /// address in any form the resolver takes (`127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`,
    /// `::1`, `::ffff:127.0.0.1`, `0.0.0.0`) or `localhost`.
    static func isLoopback(_ origin: String) -> Bool {
        guard let host = Endpoint(origin)?.host else { return true }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        var v4 = in_addr()
        if inet_aton(host, &v4) != 0 {
            let first = UInt32(bigEndian: v4.s_addr) >> 24
            return first == 127 || first == 0
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) { return bytes[15] <= 1 }  // :: and ::1
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return bytes[12] == 127 || bytes[12] == 0 }
        }
        return false
    }

    /// The file is kept small (at most `maxEntries` origins); a larger one, however it came
    /// about, is not read (400,000 entries once cost every `send` 10 s and 465 MB) and is
    /// replaced by the next answer remembered.
    static let maxEntries = 512
    static let maxFileBytes = 256 * 1024

    private func read() -> [String: Entry] {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size <= Self.maxFileBytes,
            let data = FileManager.default.contents(atPath: path), data.count <= Self.maxFileBytes,
            let entries = try? JSONDecoder().decode([String: Entry].self, from: data)
        else { return [:] }
        return entries
    }

    /// Replaces the file whole (written aside, then renamed), mode 0600; best effort.
    private func write(_ entries: [String: Entry]) {
        guard let data = try? JSONWriter.data(entries) else { return }
        try? FileReplacement.write(data, to: path, mode: 0o600)
    }
}
