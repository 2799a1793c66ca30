import Foundation
import Glibc
import UploadCore
import UploadJournal

/// Looks at a watched folder and decides which files are new and fully written.
///
/// A file is queued once it was seen with the same size and modification time on two scans in a
/// row (one interval apart) and is not empty: a file still being copied or downloaded changes
/// between scans and waits. Hidden files and the names downloaders and editors use while writing
/// (`.part`, `.crdownload`, `~`…) are never looked at; they become candidates when renamed to
/// their final name. A file queued (or passed over) once is never queued again while it stays
/// in the folder; one that leaves the folder is forgotten, so a new file under the same name is new.
/// A file that fails the same way `parkAfter` looks in a row (it cannot be read, say) is parked
/// with its reason and looked at again only when its size, modification time or permissions
/// change — not at every look for ever.
public enum WatchScanner {
    public static let parkAfter = 3

    /// A file of the watched folder as one scan saw it.
    public struct Entry: Sendable, Hashable {
        public var name: String
        public var fingerprint: FileFingerprint
        /// Permissions and owner: `0644 1000:1000`.
        public var access: String?

        public init(name: String, fingerprint: FileFingerprint, access: String? = nil) {
            self.name = name
            self.fingerprint = fingerprint
            self.access = access
        }
    }

    /// What one scan decided: what the journal must note, and the files settled enough to check and queue.
    public struct Plan: Sendable {
        /// New or changed files, to be looked at again next scan.
        public var changes = WatchScanChanges()
        /// Files that have settled: to be checked (an image?) and queued.
        public var settled: [Entry] = []
    }

    /// Suffixes of files that are still being written under a temporary name.
    static let partialSuffixes = [".part", ".partial", ".crdownload", ".download", ".tmp", ".temp", ".swp", ".filepart", "~"]

    /// Whether a name is worth looking at.
    static func isCandidate(_ name: String) -> Bool {
        guard !name.hasPrefix(".") else { return false }
        let lower = name.lowercased()
        return !partialSuffixes.contains { lower.hasSuffix($0) }
    }

    /// The regular files of `directory` (symbolic links followed), by name; not its subfolders.
    public static func list(_ directory: String) throws(WatchFolderError) -> [Entry] {
        guard let dir = PathText.withCString(directory, { opendir($0) }) else {
            throw WatchFolderError(directory: directory, reason: String(cString: strerror(errno)))
        }
        defer { closedir(dir) }
        var entries: [Entry] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in PathText.decode(raw.prefix { $0 != 0 }) }
            guard isCandidate(name) else { continue }
            var st = stat()
            guard PathText.withCString(directory + "/" + name, { stat($0, &st) }) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            entries.append(Entry(name: name, fingerprint: FileFingerprint(st), access: access(st)))
        }
        return entries.sorted { $0.name < $1.name }
    }

    static func access(_ st: stat) -> String {
        String(st.st_mode & 0o7777, radix: 8).leftPadded(to: 4) + " \(st.st_uid):\(st.st_gid)"
    }

    /// Compares a listing with what the job saw before.
    public static func plan(jobID: Int64, listing: [Entry], known: [String: WatchFile], at now: Date) -> Plan {
        var plan = Plan()
        let present = Set(listing.map(\.name))
        plan.changes.forgotten = known.keys.filter { !present.contains($0) }.sorted()
        for entry in listing {
            guard let seen = known[entry.name] else {
                plan.changes.pending.append(WatchFile(jobID: jobID, name: entry.name, fingerprint: entry.fingerprint, state: .pending, at: now))
                continue
            }
            switch seen.state {
            case .pending:
                if seen.fingerprint == entry.fingerprint && entry.fingerprint.size > 0 {
                    plan.settled.append(entry)
                } else if seen.fingerprint != entry.fingerprint {
                    var changed = seen
                    changed.size = entry.fingerprint.size
                    changed.mtimeNs = entry.fingerprint.modificationNanoseconds
                    changed.failures = 0
                    changed.note = nil
                    plan.changes.pending.append(changed)
                }
            case .parked where seen.fingerprint != entry.fingerprint || (entry.access != nil && seen.access != entry.access):
                // Changed since it was parked: looked at afresh (and it settles first).
                var woken = WatchFile(jobID: jobID, name: entry.name, fingerprint: entry.fingerprint, state: .pending, access: entry.access, at: now)
                woken.firstSeenAt = seen.firstSeenAt
                plan.changes.pending.append(woken)
            case .parked, .queued, .skipped:
                continue
            }
        }
        return plan
    }
}

extension WatchScanner {
    /// A settled file that could not be taken, for a reason that may pass (it cannot be read
    /// yet): one failure more, and parked once it failed the same way `parkAfter` times in a
    /// row. A different reason starts the count again.
    public static func failed(_ entry: Entry, seen: WatchFile?, reason: String, jobID: Int64, at now: Date) -> WatchFile {
        let same = seen?.note == reason && seen?.fingerprint == entry.fingerprint
        let failures = same ? (seen?.failures ?? 0) + 1 : 1
        var file = WatchFile(
            jobID: jobID, name: entry.name, fingerprint: entry.fingerprint, state: failures >= parkAfter ? .parked : .pending,
            note: reason, access: entry.access, failures: failures, at: now)
        if let seen { file.firstSeenAt = seen.firstSeenAt }
        return file
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// Why a watched folder cannot be read.
public struct WatchFolderError: Error, Sendable, CustomStringConvertible {
    public let directory: String
    public let reason: String
    public var description: String { "cannot read \(directory): \(reason)" }
}
