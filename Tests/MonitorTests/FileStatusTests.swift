import UploadTesting
import Foundation
import Monitor
import TerminalCanvas
import Testing
import UploadCore

/// The browser says what has happened to each file at this endpoint, and `*` marks first the
/// images not yet sent there.
@Suite struct FileStatusTests {
    let cat = UploadID(1), dog = UploadID(2)

    /// cat.jpg sent, dog.png failed, both queued from this monitor.
    func sentAndFailed() -> MonitorState {
        var state = Fixtures.state()
        let items = Fixtures.enqueued(Fixtures.press(&state, .down, .character(" "), .character(" "), .character("u")))
        Fixtures.upload(&state, Fixtures.queued(cat, items[0], totalBytes: 2_100_000))
        Fixtures.upload(&state, Fixtures.queued(dog, items[1], totalBytes: 512_000))
        Fixtures.upload(&state, .started(cat, attempt: 1, url: state.endpoint, totalBytes: 2_100_200))
        Fixtures.upload(&state, .finished(cat, .answered(status: 200)))
        Fixtures.upload(&state, .started(dog, attempt: 1, url: state.endpoint, totalBytes: 512_200))
        Fixtures.upload(&state, .finished(dog, .failed(UploadFailure(.connectionLost, "reset"))))
        return state
    }

    @Test func eachFileSaysWhetherItIsSentFailedOrUnderWay() {
        let state = sentAndFailed()
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000)?.kind == .sent)
        #expect(state.queue.status(ofFile: "/photos/dog.png", size: 512_000)?.kind == .failed)
        #expect(state.queue.status(ofFile: "/photos/夕焼け.png", size: 204_000_000) == nil)
        // A file that changed since (another size) is not the one sent.
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_001) == nil)
        let lines = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode)).text.split(separator: "\n")
        #expect(lines.contains { $0.contains("cat.jpg") && $0.contains("✓ 2.10 MB") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.contains("dog.png") && $0.contains("✗ 512 kB") })
    }

    @Test func starMarksTheImagesNotYetSentThenAll() {
        var state = sentAndFailed()
        Fixtures.press(&state, .tab, .tab)  // back in the browser, marks cleared by queueing
        #expect(state.browser.marks.isEmpty)
        Fixtures.press(&state, .character("*"))
        // dog.png failed: not sent, so it is marked with 夕焼け.png; cat.jpg is up already.
        #expect(state.browser.marks == ["/photos/dog.png", "/photos/夕焼け.png"])
        #expect(state.message?.text == "Marked 2 not yet sent (1 already are; * again marks all)")
        Fixtures.press(&state, .character("*"))
        #expect(state.browser.marks == ["/photos/cat.jpg", "/photos/dog.png", "/photos/夕焼け.png"])
        Fixtures.press(&state, .character("*"))
        #expect(state.browser.marks.isEmpty)
    }

    /// The browser's cursor on `name` (from the top, a row at a time).
    static func select(_ name: String, _ state: inout MonitorState) {
        for _ in 0..<20 { Fixtures.press(&state, .up) }
        for _ in 0..<20 where state.browser.current?.name != name { Fixtures.press(&state, .down) }
        #expect(state.browser.current?.name == name, "\(state.browser.entries.map(\.name))")
    }

    /// `u` on a photo already sent asks first; a second `u` sends it; another key lets it go.
    @Test func uOnAPhotoAlreadySentAsksBeforeSendingItAgain() {
        var state = sentAndFailed()
        Fixtures.press(&state, .tab, .tab)
        Self.select("cat.jpg", &state)
        #expect(Fixtures.enqueued(Fixtures.press(&state, .character("u"))).isEmpty)
        #expect(state.message?.text == "cat.jpg was sent to this endpoint already: u again sends it again")
        #expect(Fixtures.enqueued(Fixtures.press(&state, .character("u"))).map(\.path) == ["/photos/cat.jpg"])
        // Asked, then another key: the next u asks again.
        #expect(Fixtures.enqueued(Fixtures.press(&state, .character("u"), .character("j"), .character("k"), .character("u"))).isEmpty)
        // A failed one goes at the first u.
        Self.select("dog.png", &state)
        #expect(Fixtures.enqueued(Fixtures.press(&state, .character("u"))).map(\.path) == ["/photos/dog.png"])
    }

    @Test func theAgentsUploadsCountByPathAndOnlyForThisEndpoint() {
        var state = Fixtures.state()
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        func record(_ id: Int, _ name: String, url: String) -> UploadRecord {
            var record = UploadRecord(
                id: UploadID(id), name: name, path: "/photos/\(name)", url: url, origin: "watch /photos",
                fileSize: name == "cat.jpg" ? 2_100_000 : 512_000, createdAt: date)
            record.apply(.started(UploadID(id), attempt: 1, url: url, totalBytes: 10), at: date)
            record.apply(.finished(UploadID(id), .answered(status: 200)), at: date)
            return record
        }
        _ = MonitorReducer.reduce(
            &state,
            .attached(
                Reattachment(
                    records: [
                        record(1, "cat.jpg", url: state.endpoint), record(2, "dog.png", url: "https://elsewhere.example/upload"),
                    ], at: date, finishedWhileAway: []), Fixtures.time))
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000)?.kind == .sent)
        #expect(state.queue.status(ofFile: "/photos/dog.png", size: 512_000) == nil, "sent to another endpoint")
    }

    /// Uploads run by the monitor itself (`--no-agent`) carry the modification time the file was
    /// listed with when it was queued, in the record their `queued` event carries.
    @Test func aFileQueuedFromThisMonitorAndRewrittenSinceIsNotSent() {
        var state = Fixtures.state()
        let listed: Int64 = 1_700_000_000_123_456_789
        var entries = Fixtures.listing.entries
        entries[1].modified = listed
        _ = MonitorReducer.reduce(&state, .directoryLoaded(DirectoryListing(path: "/photos", entries: entries)))
        let items = Fixtures.enqueued(Fixtures.press(&state, .down, .character("u")))
        Fixtures.upload(&state, Fixtures.queued(cat, items[0], totalBytes: 2_100_000))
        Fixtures.upload(&state, .started(cat, attempt: 1, url: state.endpoint, totalBytes: 2_100_200))
        Fixtures.upload(&state, .finished(cat, .answered(status: 200)))
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000, modified: listed)?.kind == .sent)
        #expect(
            state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000, modified: listed + 1) == nil,
            "rewritten since, same size: not the file that was sent")
        // Listed again after the rewrite: the browser no longer ticks it.
        entries[1].modified = listed + 1_000_000_000
        _ = MonitorReducer.reduce(&state, .directoryLoaded(DirectoryListing(path: "/photos", entries: entries)))
        let lines = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode)).text.split(separator: "\n")
        #expect(lines.contains { $0.contains("cat.jpg") && !$0.contains("✓") }, "\(lines.joined(separator: "\n"))")
    }

    /// A photo edited with its modification time put back (`touch -r`, `cp -p`, an editor that
    /// keeps it) has the same path, size and mtime as the one sent; its inode's change time
    /// moved, and `*` offers it again.
    @Test func aFileEditedWithItsModificationTimePutBackIsNotSent() {
        var state = Fixtures.state()
        let listed: Int64 = 1_700_000_000_123_456_789
        var entries = Fixtures.listing.entries
        entries[1].modified = listed
        entries[1].changed = listed + 5
        _ = MonitorReducer.reduce(&state, .directoryLoaded(DirectoryListing(path: "/photos", entries: entries)))
        let items = Fixtures.enqueued(Fixtures.press(&state, .down, .character("u")))
        #expect(items[0].changed == listed + 5)
        Fixtures.upload(&state, Fixtures.queued(cat, items[0], totalBytes: 2_100_000))
        Fixtures.upload(&state, .started(cat, attempt: 1, url: state.endpoint, totalBytes: 2_100_200))
        Fixtures.upload(&state, .finished(cat, .answered(status: 200)))
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000, modified: listed, changed: listed + 5)?.kind == .sent)
        entries[1].changed = listed + 9_000_000_000
        _ = MonitorReducer.reduce(&state, .directoryLoaded(DirectoryListing(path: "/photos", entries: entries)))
        #expect(state.fileStatus("/photos/cat.jpg", entry: entries[1]) == nil)
        let lines = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode)).text.split(separator: "\n")
        #expect(lines.contains { $0.contains("cat.jpg") && !$0.contains("✓") }, "\(lines.joined(separator: "\n"))")
        // `*` marks it among the files not yet sent.
        _ = Fixtures.press(&state, .character("*"))
        #expect(state.browser.marks.contains("/photos/cat.jpg"))
    }

    /// A monitor attached to a journal in which cat.jpg (modified at 1_700_000_000 s) was sent.
    static func attachedSentCat() -> (MonitorState, UploadRecord, Date) {
        var state = Fixtures.state()
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        var record = UploadRecord(
            id: UploadID(1), name: "cat.jpg", path: "/photos/cat.jpg", url: state.endpoint, origin: "send",
            fileSize: 2_100_000, createdAt: date)
        record.fileModified = 1_700_000_000_000_000_000
        record.apply(.finished(UploadID(1), .answered(status: 200)), at: date)
        _ = MonitorReducer.reduce(&state, .attached(Reattachment(records: [record], at: date, finishedWhileAway: []), Fixtures.time))
        return (state, record, date)
    }

    /// A row sent before change times were kept proves nothing of a file listed with one (its
    /// content may prove it); a row still on its way still shows.
    @Test func aSentRowWithoutAChangeTimeDoesNotProveTheFile() {
        var (state, record, date) = Self.attachedSentCat()
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000, modified: 1_700_000_000_000_000_000, changed: 42) == nil)
        record.fileChanged = 42
        let decoded = try? JSONDecoder().decode(UploadRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded?.fileChanged == 42, "the change time survives the trip from the agent")
        _ = MonitorReducer.reduce(&state, .attached(Reattachment(records: [decoded!], at: date, finishedWhileAway: []), Fixtures.time))
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000, modified: 1_700_000_000_000_000_000, changed: 42)?.kind == .sent)
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000, modified: 1_700_000_000_000_000_000, changed: 43) == nil)
    }

    /// The journal knows when the file was last modified: a file rewritten since (same size)
    /// is not the one that was sent.
    @Test func aFileModifiedSinceItWasSentIsNotSent() {
        let (state, record, _) = Self.attachedSentCat()
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000, modified: 1_700_000_000_000_000_000)?.kind == .sent)
        #expect(state.queue.status(ofFile: "/photos/cat.jpg", size: 2_100_000, modified: 1_700_000_000_000_000_001) == nil)
        // The record survives the trip from the agent as JSON with its modification time.
        let decoded = try? JSONDecoder().decode(UploadRecord.self, from: JSONEncoder().encode(record))
        #expect(decoded?.fileModified == record.fileModified)
    }
}

/// A photo sent before under another name or path shows as sent: the browser's images are
/// hashed off the loop (`hashContents`) and matched by content with what was sent here.
@Suite struct ContentStatusTests {
    func hashed(_ state: inout MonitorState, _ name: String, size: Int64, _ sha256: String, remaining: Int = 0) {
        _ = MonitorReducer.reduce(
            &state,
            .contentHashed(
                ContentHashRequest(path: "/photos/" + name, size: size, modified: 0),
                sha256: sha256, remaining: remaining))
    }

    @Test func aFolderListedAsksForItsImagesToBeHashedOnce() {
        var state = MonitorState(width: 120, height: 40, endpoint: "http://127.0.0.1:3000/photo", directory: "/photos", home: "/home/me")
        // Nothing was ever sent here: nothing to match, nothing read.
        #expect(MonitorReducer.reduce(&state, .directoryLoaded(Fixtures.listing)).isEmpty)
        let effects = MonitorReducer.reduce(&state, .sentContentsKnown(["elsewhere"]))
        let asked: [ContentHashRequest] =
            effects.compactMap { effect -> [ContentHashRequest]? in
                if case .hashContents(let files) = effect { files } else { nil }
            }.first ?? []
        // Images only (not notes.txt, not the broken link, not the folder).
        #expect(asked.map(\.path) == ["/photos/cat.jpg", "/photos/dog.png", "/photos/夕焼け.png"])
        #expect(state.contents.remaining == 3)
        hashed(&state, "cat.jpg", size: 2_100_000, "aa", remaining: 2)
        #expect(!MonitorView.render(state, theme: Theme(colors: false, glyphs: .unicode)).line(1).contains("checking"), "a few: no progress")
        hashed(&state, "dog.png", size: 512_000, "bb", remaining: 1)
        hashed(&state, "夕焼け.png", size: 204_000_000, "cc", remaining: 0)
        // Listed again: nothing new to hash.
        let again = MonitorReducer.reduce(&state, .directoryLoaded(Fixtures.listing))
        #expect(!again.contains { if case .hashContents = $0 { true } else { false } })

        // A large folder: how far the hashing got, in the title, while it runs.
        let many = (0..<500).map { DirectoryEntry(name: "p\($0).jpg", kind: .file, size: 1000, isImage: true) }
        _ = MonitorReducer.reduce(&state, .directoryLoaded(DirectoryListing(path: "/photos", entries: many)))
        hashed(&state, "p0.jpg", size: 1000, "00", remaining: 499)
        let title = MonitorView.render(state, theme: Theme(colors: false, glyphs: .unicode)).line(1)
        #expect(title.contains("checking 1/500"), "\(title)")
    }

    @Test func theFolderIsHashedOnlyOnceTheUploadsAreDone() {
        var state = Fixtures.state()
        let items = Fixtures.enqueued(Fixtures.press(&state, .character("j"), .character("u")))
        let size = state.browser.entries.first { state.browser.fullPath($0) == items[0].path }?.size
        _ = MonitorReducer.reduce(&state, .upload(Fixtures.queued(UploadID(1), items[0], totalBytes: size), Fixtures.time))
        func asks(_ effects: [MonitorEffect]) -> Bool { effects.contains { if case .hashContents = $0 { true } else { false } } }
        // Something to match with, but an upload runs: the folder is not read now.
        #expect(!asks(MonitorReducer.reduce(&state, .sentContentsKnown(["elsewhere"]))))
        // Its end leaves the queue idle: now.
        let effects = MonitorReducer.reduce(&state, .upload(.finished(UploadID(1), .answered(status: 200)), Fixtures.time))
        #expect(asks(effects))
        // Not the file just sent: its row says what it is, whatever its content.
        let asked = effects.flatMap { effect -> [ContentHashRequest] in if case .hashContents(let files) = effect { files } else { [] } }
        #expect(!asked.isEmpty && !asked.contains { $0.path == items[0].path }, "\(asked.map(\.path)) \(items[0].path)")
    }

    @Test func contentSentUnderAnotherNameShowsAsSentAndStarSkipsIt() {
        var state = Fixtures.state()
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        // The agent sent /old/holiday.jpg, whose content is dog.png's.
        var record = UploadRecord(
            id: UploadID(1), name: "holiday.jpg", path: "/old/holiday.jpg", url: state.endpoint, origin: "send",
            fileSize: 512_000, createdAt: date)
        record.apply(.content(UploadID(1), sha256: "d06"), at: date)
        record.apply(.finished(UploadID(1), .answered(status: 200)), at: date)
        _ = MonitorReducer.reduce(&state, .attached(Reattachment(records: [record], at: date, finishedWhileAway: []), Fixtures.time))
        #expect(state.fileStatus("/photos/dog.png", size: 512_000, modified: 0, changed: 0) == nil, "not hashed yet")
        hashed(&state, "dog.png", size: 512_000, "d06")
        hashed(&state, "cat.jpg", size: 2_100_000, "ca7")
        #expect(state.fileStatus("/photos/dog.png", size: 512_000, modified: 0, changed: 0)?.kind == .sent)
        #expect(state.fileStatus("/photos/dog.png", size: 512_001, modified: 0, changed: 0) == nil, "changed since it was hashed")
        #expect(state.fileStatus("/photos/cat.jpg", size: 2_100_000, modified: 0, changed: 0) == nil)
        // What the journal says was sent from a shell counts too.
        _ = MonitorReducer.reduce(&state, .sentContentsKnown(["ca7"]))
        #expect(state.fileStatus("/photos/cat.jpg", size: 2_100_000, modified: 0, changed: 0)?.kind == .sent)
        let lines = MonitorView.render(state, theme: Theme(colors: true, glyphs: .unicode)).text.split(separator: "\n")
        #expect(lines.contains { $0.contains("dog.png") && $0.contains("✓") }, "\(lines.joined(separator: "\n"))")
        Fixtures.press(&state, .character("*"))
        #expect(state.browser.marks == ["/photos/夕焼け.png"])
    }
}
