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

    public struct Lookup: Sendable {
        public var sha256: String
        public var size: Int64
        /// When and as what this content was sent to the endpoint before, if it was.
        public var earlier: SentContent?
    }

    /// Hashes `path` (blocking) and looks its content up for `endpoint`.
    public func lookup(path: String, endpoint: String, stripLocation: Bool) throws(UploadFailure) -> Lookup {
        let content = try ContentIdentity.sha256(of: path, stripLocation: stripLocation)
        let earlier = try? journal.sentBefore(sha256: content.hex, to: endpoint)
        return Lookup(sha256: content.hex, size: content.size, earlier: earlier ?? nil)
    }

    /// Remembers the uploads of `tracker` that succeeded and whose content digest is known.
    public func remember(_ tracker: TransferTracker, endpoint: String, at now: Date = Date()) {
        let sent = tracker.states.values.compactMap { state -> SentContent? in
            guard state.outcome?.isSuccess == true, let sha256 = state.record.contentSHA256 else { return nil }
            return SentContent(endpoint: endpoint, sha256: sha256, size: state.record.fileSize ?? 0, name: state.name, sentAt: now)
        }
        try? journal.rememberSent(sent)
    }

    /// `moved/cat.jpg: skipped, already sent to http://host/photo on 2026-11-25 14:02 as holiday.jpg (same content)`.
    public static func skippedText(_ path: String, _ earlier: SentContent) -> String {
        "\(path): skipped, " + sentText(earlier, name: (path as NSString).lastPathComponent)
    }

    /// `already sent to http://host/photo on 2026-11-25 14:02 as holiday.jpg (same content)`.
    public static func sentText(_ earlier: SentContent, name: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        let alias = earlier.name == name ? "" : " as \(earlier.name)"
        return "already sent to \(earlier.endpoint) on \(formatter.string(from: earlier.sentAt))\(alias) (same content)"
    }
}
