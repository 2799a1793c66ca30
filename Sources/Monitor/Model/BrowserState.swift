/// The directory browser: where it is, what it lists, what is marked and renamed.
public struct BrowserState: Sendable, Equatable {
    /// The file `u` was pressed on though it is sent (or on its way): a second `u` sends it.
    public var resendAsked: String?
    public var path: String
    public var home: String
    public private(set) var entries: [DirectoryEntry] = []
    /// Indexes into `entries` that are on show (after "show all" and the filter).
    public private(set) var visible: [Int] = []
    /// Index into `visible`.
    public var selected = 0
    public var offset = 0
    public var error: String?
    public var loading = true
    public var showAll = false {
        didSet { refreshVisible() }
    }
    public var filter = TextInput() {
        didSet { refreshVisible() }
    }
    public var isFiltering = false
    /// Marked files by full path.
    public var marks: Set<String> = []
    /// Upload names chosen with `r`, by full path.
    public var renames: [String: String] = [:]
    /// Files sent with or without their location against the monitor's setting (`L`), by full path.
    public var stripChoices: [String: Bool] = [:]

    public init(path: String, home: String) {
        self.path = path
        self.home = home
    }

    public var current: DirectoryEntry? {
        visible.indices.contains(selected) ? entries[visible[selected]] : nil
    }

    public func visibleEntry(_ row: Int) -> DirectoryEntry { entries[visible[row]] }

    public func fullPath(_ entry: DirectoryEntry) -> String { DirectoryReader.join(path, entry.name) }

    /// Whether an entry can be queued: a regular file that is an image, or any file when all are shown.
    public func isQueueable(_ entry: DirectoryEntry) -> Bool {
        entry.kind == .file && (entry.isImage || showAll)
    }

    mutating func load(_ listing: DirectoryListing) {
        let previous = current?.name
        let samePlace = listing.path == path
        path = listing.path
        entries = listing.entries
        error = listing.error
        loading = false
        if !samePlace { filter = TextInput() }
        isFiltering = false
        refreshVisible()
        let target = listing.select ?? (samePlace ? previous : nil)
        selected = target.flatMap { name in visible.firstIndex { entries[$0].name == name } } ?? 0
        offset = 0
    }

    /// The same folder read again: the cursor stays on its file (or where it was, when that
    /// file went), the filter and the scroll stay, marks and renames of files that left go.
    mutating func refresh(_ listing: DirectoryListing) {
        let previous = current?.name
        let previousIndex = selected
        let before = Set(entries.lazy.map(\.name))
        entries = listing.entries
        error = listing.error
        refreshVisible()
        selected = previous.flatMap { name in visible.firstIndex { entries[$0].name == name } } ?? min(previousIndex, max(0, visible.count - 1))
        let now = Set(entries.lazy.map(\.name))
        for gone in before.subtracting(now) {
            let full = DirectoryReader.join(path, gone)
            marks.remove(full)
            renames[full] = nil
            stripChoices[full] = nil
        }
    }

    mutating func refreshVisible() {
        let needle = filter.text.lowercased()
        var shown: [Int] = []
        shown.reserveCapacity(entries.count)
        for (i, entry) in entries.enumerated() {
            guard showAll || entry.isDirectory || entry.isImage else { continue }
            if !needle.isEmpty && !entry.name.lowercased().contains(needle) { continue }
            shown.append(i)
        }
        visible = shown
        selected = min(selected, max(0, visible.count - 1))
    }
}
