import UploadCore

/// One file to hash: its path and the size, modification and inode change times it was
/// listed with (a file that changed since is hashed again; 0: not known).
public struct ContentHashRequest: Sendable, Hashable {
    public var path: String
    public var size: Int64
    public var modified: Int64
    public var changed: Int64

    public init(path: String, size: Int64, modified: Int64, changed: Int64 = 0) {
        self.path = path
        self.size = size
        self.modified = modified
        self.changed = changed
    }
}

/// The browser's files by content: their SHA-256 (as they would be sent), worked out off the
/// loop, so that a photo sent before under another name or path shows as sent. Hashes are kept
/// by path with the size and modification time they were made for.
public struct ContentState: Sendable, Equatable {
    struct Hashed: Sendable, Equatable {
        var size: Int64
        var modified: Int64
        var changed: Int64
        var sha256: String
    }

    var hashes: [String: Hashed] = [:]
    /// Content sent to this endpoint that the rows do not show (a `send` from a shell, uploads
    /// the agent has pruned): from the journal's record of what was sent.
    public var sentElsewhere: Set<String> = []
    /// Files of the current list still to hash, and how many the list had.
    public var remaining = 0
    public var total = 0
    /// From this many files on, the browser's title says how far the hashing got (a few are
    /// done before anyone could read it).
    public static let progressFrom = 100

    /// `checking 120/10000` while a large folder is hashed, else nil.
    public var progressText: String? {
        guard remaining > 0, total >= Self.progressFrom else { return nil }
        return "checking \(total - remaining)/\(total)"
    }

    public init() {}

    /// The file's SHA-256 if it was hashed as it is now.
    public func sha256(of path: String, size: Int64, modified: Int64, changed: Int64) -> String? {
        guard let hashed = hashes[path], hashed.size == size, hashed.modified == modified, hashed.changed == changed else { return nil }
        return hashed.sha256
    }

    /// Whether the listed folder's images were asked for already (once per listing: a new
    /// listing asks afresh).
    var listingAsked = false

    /// Of `files`, those not hashed as they are now.
    func unhashed(_ files: [ContentHashRequest]) -> [ContentHashRequest] {
        files.filter { sha256(of: $0.path, size: $0.size, modified: $0.modified, changed: $0.changed) == nil }
    }

    mutating func hashed(_ request: ContentHashRequest, sha256: String?, remaining: Int) {
        if let sha256 { hashes[request.path] = Hashed(size: request.size, modified: request.modified, changed: request.changed, sha256: sha256) }
        self.remaining = remaining
        if remaining == 0 { total = 0 }
    }
}

extension MonitorState {
    /// Asks for the listed folder's images to be hashed, once there is anything sent here to
    /// match them with (a first look at a folder of 10,000 photos reads nothing when nothing
    /// was ever sent to this endpoint).
    mutating func hashListedImages() -> [MonitorEffect] {
        // Not while uploads run: reading and hashing a folder of 20,000 photos competes with
        // the uploads for the disk and the cores, and which photos went under other names can
        // wait until they are done (the last upload's end asks).
        guard !contents.listingAsked, queue.activeCount == 0, !queue.sentContents.isEmpty || !contents.sentElsewhere.isEmpty else { return [] }
        contents.listingAsked = true
        let browser = self.browser
        // A file the queue already has a status for, as it is now, shows that status whatever
        // its content: hashing it would change nothing (after a camera roll, 100,000 files
        // read again for nothing, a third of a core for half a minute).
        let files = browser.entries.filter { $0.kind == .file && $0.isImage }
            .map { ContentHashRequest(path: browser.fullPath($0), size: $0.size, modified: $0.modified, changed: $0.changed) }
            .filter { queue.status(ofFile: $0.path, size: $0.size, modified: $0.modified, changed: $0.changed) == nil }
        let wanted = contents.unhashed(files)
        guard !wanted.isEmpty else { return [] }
        contents.remaining = wanted.count
        contents.total = wanted.count
        return [.hashContents(wanted)]
    }

    /// What has happened to the file at `path` at this endpoint: by its path (queued, sending,
    /// sent, failed, as the rows say), else by its content (sent under another name or path).
    public func fileStatus(_ path: String, size: Int64, modified: Int64, changed: Int64) -> FileUploadStatus? {
        if let status = queue.status(ofFile: path, size: size, modified: modified, changed: changed) { return status }
        guard let sha256 = contents.sha256(of: path, size: size, modified: modified, changed: changed),
            queue.sentContents.contains(sha256) || contents.sentElsewhere.contains(sha256)
        else { return nil }
        return FileUploadStatus.sentByContent
    }

    /// The status of the listed file `entry` at `path`, as it is listed now.
    public func fileStatus(_ path: String, entry: DirectoryEntry) -> FileUploadStatus? {
        fileStatus(path, size: entry.size, modified: entry.modified, changed: entry.changed)
    }
}
