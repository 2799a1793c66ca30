import Monitor
import TerminalCanvas
import Testing
import UploadCore

/// The open folder read again (a file arrived or left, or Ctrl-R): the cursor, the marks and
/// the filter stay; marks of files that left go.
@Suite struct LiveFolderTests {
    func listing(_ names: [String], path: String = "/photos") -> DirectoryListing {
        DirectoryListing(path: path, entries: names.map { DirectoryEntry(name: $0, kind: .file, size: 1000, isImage: true) })
    }

    @Test func aFileArrivingKeepsTheCursorAndMarks() {
        var state = Fixtures.state()
        _ = MonitorReducer.reduce(&state, .directoryLoaded(listing(["b.jpg", "d.jpg", "f.jpg"])))
        Fixtures.press(&state, .character(" "), .character("j"))  // b marked, cursor on f
        #expect(state.browser.current?.name == "f.jpg")
        _ = MonitorReducer.reduce(&state, .directoryChanged(listing(["a.jpg", "b.jpg", "c.jpg", "d.jpg", "e.jpg", "f.jpg"])))
        #expect(state.browser.current?.name == "f.jpg", "the cursor stays on its file")
        #expect(state.browser.marks == ["/photos/b.jpg"])
        #expect(state.browser.visible.count == 6)
    }

    @Test func aFileLeavingTakesItsMarkAndTheCursorStaysInPlace() {
        var state = Fixtures.state()
        _ = MonitorReducer.reduce(&state, .directoryLoaded(listing(["a.jpg", "b.jpg", "c.jpg", "d.jpg"])))
        Fixtures.press(&state, .character("j"), .character(" "), .character("k"))  // b marked, cursor on b
        #expect(state.browser.current?.name == "b.jpg")
        _ = MonitorReducer.reduce(&state, .directoryChanged(listing(["a.jpg", "c.jpg", "d.jpg"])))
        #expect(state.browser.current?.name == "c.jpg", "where the cursor was: the next file")
        #expect(state.browser.marks.isEmpty, "a mark of a file that left would queue nothing")
    }

    @Test func theFilterStaysAndAStaleListingIsIgnored() {
        var state = Fixtures.state()
        _ = MonitorReducer.reduce(&state, .directoryLoaded(listing(["cat1.jpg", "dog.jpg", "cat2.jpg"])))
        Fixtures.press(&state, .character("/"), .character("c"), .character("a"), .enter)
        #expect(state.browser.visible.count == 2)
        _ = MonitorReducer.reduce(&state, .directoryChanged(listing(["cat1.jpg", "dog.jpg", "cat2.jpg", "cat3.jpg"])))
        #expect(state.browser.filter.text == "ca" && state.browser.visible.count == 3)
        // A listing of a folder the browser has left changes nothing.
        _ = MonitorReducer.reduce(&state, .directoryChanged(listing(["x.jpg"], path: "/elsewhere")))
        #expect(state.browser.path == "/photos" && state.browser.visible.count == 3)
    }

    @Test func controlRReadsTheFolderAgain() {
        var state = Fixtures.state()
        #expect(Fixtures.press(&state, .control("r")) == [.refreshDirectory(path: "/photos")])
        #expect(state.message?.text == "Reading photos again")
    }
}
