import TerminalCanvas
import UploadCore

extension MonitorReducer {
    static func handleBrowserKey(_ key: Key, at time: EventTime, _ state: inout MonitorState) -> [MonitorEffect] {
        var browser = state.browser
        defer { state.browser = browser }
        // "u again" is asked for one key: any other lets it go.
        if key != .character("u") && key != .enter { browser.resendAsked = nil }
        if let moved = ListNavigation.move(browser.selected, count: browser.visible.count, key: key, page: state.listPageSize) {
            browser.selected = moved
            return []
        }
        switch key {
        case .right, .character("l"), .enter:
            guard let entry = browser.current else { return [] }
            if entry.isDirectory { return [.loadDirectory(path: browser.fullPath(entry), select: nil)] }
            if key == .enter { return enqueue(&browser, &state, at: time) }
            return []
        case .left, .character("h"), .backspace:
            let parent = DirectoryReader.parent(of: browser.path)
            guard parent != browser.path else { return [] }
            return [.loadDirectory(path: parent, select: UploadName.baseName(of: browser.path))]
        case .character("~"):
            return [.loadDirectory(path: browser.home, select: nil)]
        case .control("r"):
            state.message = StatusMessage("Reading \(UploadName.baseName(of: browser.path)) again")
            return [.refreshDirectory(path: browser.path)]
        case .character("a"):
            browser.showAll.toggle()
            state.message = StatusMessage(browser.showAll ? "Showing all files" : "Showing images only")
        case .character(" "):
            guard let entry = browser.current else { return [] }
            guard browser.isQueueable(entry) else {
                state.message = StatusMessage(markRefusal(entry), isError: true)
                return []
            }
            let path = browser.fullPath(entry)
            if browser.marks.remove(path) == nil { browser.marks.insert(path) }
            browser.selected = min(browser.selected + 1, max(0, browser.visible.count - 1))
        case .character("*"):
            // First the images not yet sent to this endpoint (nor on their way); again, all.
            let entries = browser.visible.map { browser.entries[$0] }.filter { browser.isQueueable($0) }
            let images = entries.map(browser.fullPath)
            let unsent = entries.filter {
                state.fileStatus(browser.fullPath($0), entry: $0)?.isSentOrUnderWay != true
            }
            .map(browser.fullPath)
            if !images.isEmpty, images.allSatisfy(browser.marks.contains) {
                browser.marks.subtract(images)
                state.message = StatusMessage("Unmarked \(images.count) files")
            } else if !unsent.isEmpty, unsent.count < images.count, !unsent.allSatisfy(browser.marks.contains) {
                browser.marks.formUnion(unsent)
                state.message = StatusMessage("Marked \(unsent.count) not yet sent (\(images.count - unsent.count) already are; * again marks all)")
            } else {
                browser.marks.formUnion(images)
                state.message = StatusMessage(images.isEmpty ? "No images here to mark" : "Marked \(images.count) files")
            }
        case .character("/"):
            browser.isFiltering = true
        case .escape:
            if !browser.filter.text.isEmpty { browser.filter = TextInput() }
        case .character("r"):
            guard let entry = browser.current, entry.kind == .file else {
                state.message = StatusMessage("Only files can be renamed", isError: true)
                return []
            }
            let path = browser.fullPath(entry)
            let current = browser.renames[path] ?? entry.name
            state.modal = .rename(path: path, original: entry.name, input: TextInput(current))
        case .character("u"):
            return enqueue(&browser, &state, at: time)
        case .character("L"):
            toggleLocation(&browser, &state)
        default:
            break
        }
        return []
    }

    static func markRefusal(_ entry: DirectoryEntry) -> String {
        switch entry.kind {
        case .directory: "\(entry.name) is a directory: enter it with → and mark files inside"
        case .brokenLink(let reason): "\(entry.name) cannot be sent: \(reason)"
        case .other(let what): "\(entry.name) cannot be sent: it is \(what), not a regular file"
        case .file: "\(entry.name) is not named like an image (start uploadmon with --any-file to send other files)"
        }
    }

    /// `L`: the marked files (or the current one) go without their location, or with it again
    /// when they all would go without.
    static func toggleLocation(_ browser: inout BrowserState, _ state: inout MonitorState) {
        var paths = browser.marks.sorted()
        if paths.isEmpty, let entry = browser.current, browser.isQueueable(entry) { paths = [browser.fullPath(entry)] }
        guard !paths.isEmpty else { return }
        let current = browser
        let strip = !paths.allSatisfy { current.stripChoices[$0] ?? state.stripLocation }
        for path in paths { browser.stripChoices[path] = strip }
        let what = paths.count == 1 ? String(paths[0].split(separator: "/").last ?? "") : "\(paths.count) files"
        state.message = StatusMessage(
            strip
                ? "\(what) will be sent without where \(paths.count == 1 ? "it was" : "they were") taken (GPS and XMP location removed; JPEG, PNG, WebP, HEIC and AVIF only)"
                : "\(what) will be sent with \(paths.count == 1 ? "its" : "their") location as it is")
    }

    /// Queues the marked files, or the current one when nothing is marked.
    static func enqueue(_ browser: inout BrowserState, _ state: inout MonitorState, at time: EventTime) -> [MonitorEffect] {
        var paths = browser.marks.sorted()
        if paths.isEmpty {
            guard let entry = browser.current else { return [] }
            guard browser.isQueueable(entry) else {
                // Said in the log too, as `send` says it: the status line alone goes by unseen.
                state.message = StatusMessage(markRefusal(entry), isError: true)
                appendLog(&state, LogEntry(clock: time.clock, text: "✗ " + markRefusal(entry), kind: .failed))
                return []
            }
            let path = browser.fullPath(entry)
            // A photo already up (or on its way) is not sent twice by one key, as `*` leaves it out.
            if let status = state.fileStatus(path, entry: entry), status.isSentOrUnderWay, browser.resendAsked != path {
                browser.resendAsked = path
                let already = status.kind == .sent ? "was sent to this endpoint already" : "is on its way already"
                state.message = StatusMessage("\(entry.name) \(already): u again sends it again")
                return []
            }
            browser.resendAsked = nil
            paths = [path]
        }
        let listed = Dictionary(browser.entries.map { (browser.fullPath($0), $0) }, uniquingKeysWith: { a, _ in a })
        let items = paths.map {
            QueueItem(
                path: $0, uploadName: browser.renames[$0] ?? UploadName.uploadName(ofPath: $0),
                stripLocation: browser.stripChoices[$0] ?? state.stripLocation,
                modified: listed[$0].flatMap { $0.modified == 0 ? nil : $0.modified },
                changed: listed[$0].flatMap { $0.changed == 0 ? nil : $0.changed },
                conversion: state.conversionChoice)
        }
        browser.marks.removeAll()
        state.message = StatusMessage(items.count == 1 ? "Queued \(items[0].uploadName)" : "Queued \(items.count) files")
        return [.enqueue(items)]
    }
}
