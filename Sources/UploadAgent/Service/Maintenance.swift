import Foundation
import Glibc
import UploadCore
import UploadJournal

/// The maintenance job: keeps the state directory from growing without bound.
enum Maintenance {
    /// The agent log is rotated (to `agent.log.1`, replacing the previous one) past this size.
    static let logRotateBytes: Int64 = 8 << 20

    struct Report: Sendable {
        var pruned = PruneResult(uploads: 0, events: 0)
        var temporaryFiles: [String] = []
        var rotatedLog = false
        var vacuumed = false
        var sizeBefore: Int64 = 0
        var sizeAfter: Int64 = 0

        var summary: String {
            var parts = ["pruned \(pruned.uploads) upload(s) and \(pruned.events) event(s)"]
            if !temporaryFiles.isEmpty { parts.append("removed \(temporaryFiles.count) leftover temporary file(s)") }
            if rotatedLog { parts.append("rotated agent.log") }
            parts.append(
                vacuumed
                    ? "vacuumed (journal \(ByteFormat.bytes(sizeBefore)) → \(ByteFormat.bytes(sizeAfter)))"
                    : "journal \(ByteFormat.bytes(sizeAfter))")
            return parts.joined(separator: ", ")
        }
    }

    static func run(journal: Journal, spec: MaintenanceSpec, paths: StatePaths, now: Date) throws -> Report {
        var report = Report()
        report.sizeBefore = journal.sizeOnDisk()
        // A journal written before keep had a range may hold any number: stay within it.
        let range = DurationRule.history.range
        let keep = spec.keepSeconds.isFinite ? min(max(spec.keepSeconds, range.lowerBound), range.upperBound) : range.upperBound
        report.pruned = try journal.prune(finishedBefore: now.addingTimeInterval(-keep))
        report.temporaryFiles = removeLeftovers(in: paths)
        report.rotatedLog = rotateLog(paths.agentLog)
        report.vacuumed = try journal.vacuumIfWorthwhile()
        report.sizeAfter = journal.sizeOnDisk()
        return report
    }

    /// Files uploadmon writes under a temporary name and renames (`FileReplacement`:
    /// `<name>.<pid>.tmp`; earlier versions wrote the monitor's cursor as `monitor-seen.<pid>`);
    /// one whose writer is gone was left by a crash. Returns what it removed.
    static func removeLeftovers(in paths: StatePaths) -> [String] {
        let cursorName = (paths.monitorCursor as NSString).lastPathComponent
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: paths.stateDirectory) else { return [] }
        var removed: [String] = []
        for name in names {
            let earlier = name.hasPrefix(cursorName + ".") ? Int32(name.dropFirst(cursorName.count + 1)) : nil
            guard let pid = FileReplacement.writer(ofTemporary: name) ?? earlier, !isAlive(pid) else { continue }
            let path = paths.stateDirectory + "/" + name
            if unlink(path) == 0 { removed.append(path) }
        }
        return removed
    }

    static func isAlive(_ pid: Int32) -> Bool {
        pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)
    }

    /// Moves a large log aside. When this process writes its output to that log (the agent as
    /// started in the background), its output is reopened on a fresh file.
    static func rotateLog(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, Int64(st.st_size) > logRotateBytes else { return false }
        let writesHere = [STDOUT_FILENO, STDERR_FILENO].filter { fd in
            var out = stat()
            return fstat(fd, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino
        }
        guard rename(path, path + ".1") == 0 else { return false }
        if !writesHere.isEmpty {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            if fd >= 0 {
                for target in writesHere { dup2(fd, target) }
                close(fd)
            }
        }
        return true
    }
}
