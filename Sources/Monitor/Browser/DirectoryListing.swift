/// One entry of a directory as the browser shows it.
public struct DirectoryEntry: Sendable, Hashable {
    /// What the entry is, as the browser treats it.
    public enum Kind: Sendable, Hashable {
        case directory
        case file
        /// A symlink whose target is missing or loops; listed so the user sees why it is skipped.
        case brokenLink(reason: String)
        /// Devices, sockets, fifos: listed with "show all" only, never queued. `what` says
        /// which ("a FIFO", "a character device"…).
        case other(what: String)
    }

    public var name: String
    public var kind: Kind
    public var size: Int64
    public var isImage: Bool
    /// Modification time in nanoseconds since 1970 (0 when not known).
    public var modified: Int64
    /// The inode's change time in nanoseconds since 1970 (0 when not known): unlike the
    /// modification time, no tool can set it back, so it tells an edited photo from the one sent.
    public var changed: Int64

    public init(name: String, kind: Kind, size: Int64 = 0, isImage: Bool = false, modified: Int64 = 0, changed: Int64 = 0) {
        self.name = name
        self.kind = kind
        self.size = size
        self.isImage = isImage
        self.modified = modified
        self.changed = changed
    }

    public var isDirectory: Bool { kind == .directory }
}

/// A directory read from disk: its entries sorted directories first, or why it could not be read.
public struct DirectoryListing: Sendable, Equatable {
    public var path: String
    public var entries: [DirectoryEntry]
    public var error: String?
    /// The entry to put the cursor on (the directory we came up from).
    public var select: String?

    public init(path: String, entries: [DirectoryEntry], error: String? = nil, select: String? = nil) {
        self.path = path
        self.entries = entries
        self.error = error
        self.select = select
    }
}
