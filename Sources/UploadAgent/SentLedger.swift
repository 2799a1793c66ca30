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
    /// says why it cannot go).
    public func alreadySent(_ paths: [String], to endpoint: String, stripLocation: Bool) -> [String: Skip] {
        var skips: [String: Skip] = [:]
        for path in paths {
            guard let content = try? ContentIdentity.sha256(of: path, stripLocation: stripLocation),
                  let earlier = try? journal.sentBefore(sha256: content.hex, to: endpoint)
            else { continue }
            skips[path] = Skip(path: path, sha256: content.hex, earlier: earlier)
        }
        return skips
    }

    /// Remembers the uploads of `tracker` that succeeded and whose content digest is known.
    public func remember(_ tracker: TransferTracker, endpoint: String, at now: Date) {
        let sent = tracker.states.values.compactMap { state -> SentContent? in
            guard state.outcome?.isSuccess == true, let sha256 = state.record.contentSHA256 else { return nil }
            return SentContent(endpoint: endpoint, sha256: sha256, size: state.record.fileSize ?? 0, name: state.name, sentAt: now)
        }
        try? journal.rememberSent(sent)
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
