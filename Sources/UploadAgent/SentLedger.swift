import Foundation
import UploadClient
import UploadCore
import UploadJournal

/// "Already sent" by content: the SHA-256 of a file's bytes as they would be sent, looked up
/// among what was sent to an endpoint before (the journal's `sentContent`, written by the agent
/// as its uploads succeed and by a foreground `send`), so a renamed or moved photo is known.
public struct SentLedger: Sendable {
    public let journal: Journal

    public init(journal: Journal) {
        self.journal = journal
    }

    /// The ledger in the user's state folder, or nil when it cannot be opened (nothing is then
    /// skipped, and nothing remembered).
    public static func open(paths: StatePaths = .resolve()) -> SentLedger? {
        try? paths.prepare()
        return (try? Journal(path: paths.journal)).map(SentLedger.init)
    }

    /// A file whose content already went to the endpoint.
    public struct Skip: Sendable {
        public var path: String
        public var sha256: String
        /// When and as what this content was sent before.
        public var earlier: SentContent

        /// `moved/cat.jpg: skipped, already sent to … (same content)`.
        public var text: String { SentLedger.skippedText(path, earlier) }

        /// The `--json` object saying it.
        public var jsonLine: String {
            var line = JSONLine()
            line["event"] = .string("skipped")
            line["file"] = .string(path)
            line["sha256"] = .string(sha256)
            line["sentTo"] = .string(earlier.endpoint)
            line["sentAs"] = .string(earlier.name)
            line["sentAt"] = .string(ISO8601DateFormatter().string(from: earlier.sentAt))
            return InvisibleCharacters.jsonEscaped(line.text)
        }
    }

    /// Of `paths`, those whose content (as it would be sent) already went to `endpoint`, by
    /// path. Blocking: reads every file once; one that cannot be read is not skipped (sending it
    /// says why it cannot go). With a `conversion`, a photo is known by its original and the
    /// settings (`ContentIdentity.converted`): sent converted the same way before, it is skipped
    /// without being converted again.
    public func alreadySent(_ paths: [String], to endpoint: String, stripLocation: Bool, conversion: PhotoConversion? = nil) -> [String: Skip] {
        resolvePending(to: endpoint)
        var skips: [String: Skip] = [:]
        for path in paths {
            guard let content = try? ContentIdentity.sha256(of: path, stripLocation: stripLocation, conversion: conversion),
                let earlier = try? journal.sentBefore(sha256: content.hex, to: endpoint)
            else { continue }
            skips[path] = Skip(path: path, sha256: content.hex, earlier: earlier)
        }
        return skips
    }

    /// Remembers the uploads of `tracker` that succeeded: by their content digest when it is
    /// known, else by path and the file's stamps from before it was sent, to be hashed when
    /// "already sent" is asked (`resolvePending`). Relative paths are taken from the working
    /// directory, as the uploads opened them.
    /// `endpoint`: where every upload went; nil: each upload's own URL.
    public func remember(_ tracker: TransferTracker, endpoint: String?, at now: Date) {
        let (sent, pending) = Self.records(of: tracker, endpoint: endpoint, at: now)
        try? journal.remember(sent: sent, pending: pending)
    }

    /// As `remember`, appended to the journal's `SentLog` (a foreground `send`: the journal is
    /// not opened for it, unless the log is due to be taken in or cannot be written).
    public static func rememberInLog(_ tracker: TransferTracker, endpoint: String, at now: Date, paths: StatePaths = .resolve()) {
        let (sent, pending) = records(of: tracker, endpoint: endpoint, at: now)
        guard !sent.isEmpty || !pending.isEmpty else { return }
        try? paths.prepare()
        do {
            if try SentLog(journal: paths.journal).append(sent: sent, pending: pending) {
                _ = try? Journal(path: paths.journal)  // opening it takes the log in
            }
        } catch {
            try? open(paths: paths)?.journal.remember(sent: sent, pending: pending)
        }
    }

    /// The uploads of `tracker` that succeeded, by content digest where it is known, else by
    /// path and stamps.
    static func records(of tracker: TransferTracker, endpoint given: String?, at now: Date) -> (sent: [SentContent], pending: [PendingSent]) {
        var sent: [SentContent] = []
        var pending: [PendingSent] = []
        for state in tracker.states.values where state.outcome?.isSuccess == true {
            let record = state.record
            let endpoint = given ?? record.url
            if let sha256 = record.sentIdentity {
                sent.append(SentContent(endpoint: endpoint, sha256: sha256, size: record.fileSize ?? 0, name: record.sentName ?? state.name, sentAt: now))
            } else if let path = record.path, let size = record.fileSize, let mtime = record.fileModified, let ctime = record.fileChanged {
                let absolute = path.hasPrefix("/") ? path : URL(fileURLWithPath: path).standardizedFileURL.path
                pending.append(
                    PendingSent(
                        endpoint: endpoint, path: absolute, size: size, mtimeNs: mtime, ctimeNs: ctime,
                        stripped: record.withoutLocation, name: state.name, sentAt: now))
            }
        }
        return (sent, pending)
    }

    /// Hashes the files sent to `endpoint` whose content is not known yet, while each is still
    /// as it was sent (size, modification and change time, before and after the read): what a
    /// file became since it was sent was not sent, and is dropped. Blocking: reads the files.
    public func resolvePending(to endpoint: String) {
        guard let pending = try? journal.pendingSent(to: endpoint), !pending.isEmpty else { return }
        var sent: [SentContent] = []
        for one in pending where one.matches(FileFingerprint.of(path: one.path)) {
            guard let content = try? ContentIdentity.sha256(of: one.path, stripLocation: one.stripped),
                one.matches(FileFingerprint.of(path: one.path))
            else { continue }
            sent.append(SentContent(endpoint: endpoint, sha256: content.hex, size: one.size, name: one.name, sentAt: one.sentAt))
        }
        try? journal.resolvePending(pending, sent: sent)
    }

    /// Every content sent to `endpoint`, the files sent and not hashed yet hashed first.
    public func sentContents(to endpoint: String) -> Set<String> {
        resolvePending(to: endpoint)
        return (try? journal.sentContents(to: endpoint)) ?? []
    }

    /// `moved/cat.jpg: skipped, already sent to http://host/photo on 2026-11-25 14:02 as holiday.jpg (same content)`.
    /// The path and every name escaped as the reporters escape them: a name with a bidi
    /// override or an escape sequence is shown, not obeyed.
    public static func skippedText(_ path: String, _ earlier: SentContent) -> String {
        "\(InvisibleCharacters.escaped(path)): skipped, " + sentText(earlier, name: (path as NSString).lastPathComponent)
    }

    /// `already sent to http://host/photo on 2026-11-25 14:02 as holiday.jpg (same content)`.
    public static func sentText(_ earlier: SentContent, name: String) -> String {
        let alias = earlier.name == name ? "" : " as \(InvisibleCharacters.escaped(earlier.name))"
        return "already sent to \(InvisibleCharacters.escaped(earlier.endpoint)) on \(LocalTime.format(earlier.sentAt, .minutes))\(alias) (same content)"
    }
}
