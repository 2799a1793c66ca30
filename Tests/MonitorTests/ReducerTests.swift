import UploadTesting
@testable import Monitor
import PreviewModel
import TerminalCanvas
import Testing
import UploadCore

@Suite struct BrowserKeyTests {
    @Test func movingStaysInsideTheList() {
        var state = Fixtures.state()
        #expect(state.browser.visible.count == 5)  // notes.txt hidden: images only
        Fixtures.press(&state, .up)
        #expect(state.browser.selected == 0)
        Fixtures.press(&state, .down, .character("j"))
        #expect(state.browser.current?.name == "dog.png")
        Fixtures.press(&state, .character("k"))
        #expect(state.browser.current?.name == "cat.jpg")
        Fixtures.press(&state, .character("G"))
        #expect(state.browser.current?.name == "gone.jpg")
        Fixtures.press(&state, .character("g"))
        #expect(state.browser.selected == 0)
        Fixtures.press(&state, .pageDown)
        #expect(state.browser.selected == 4)
        Fixtures.press(&state, .pageUp)
        #expect(state.browser.selected == 0)
        Fixtures.press(&state, .end, .home)
        #expect(state.browser.selected == 0)
    }

    @Test func enteringAndLeavingDirectories() {
        var state = Fixtures.state()
        #expect(Fixtures.press(&state, .enter) == [.loadDirectory(path: "/photos/holiday", select: nil)])
        #expect(Fixtures.press(&state, .right) == [.loadDirectory(path: "/photos/holiday", select: nil)])
        #expect(Fixtures.press(&state, .character("l")) == [.loadDirectory(path: "/photos/holiday", select: nil)])
        #expect(Fixtures.press(&state, .left) == [.loadDirectory(path: "/", select: "photos")])
        #expect(Fixtures.press(&state, .character("h")) == [.loadDirectory(path: "/", select: "photos")])
        #expect(Fixtures.press(&state, .backspace) == [.loadDirectory(path: "/", select: "photos")])
        #expect(Fixtures.press(&state, .character("~")) == [.loadDirectory(path: "/home/me", select: nil)])
        _ = MonitorReducer.reduce(
            &state,
            .directoryLoaded(
                DirectoryListing(
                    path: "/",
                    entries: [
                        DirectoryEntry(name: "etc", kind: .directory), DirectoryEntry(name: "photos", kind: .directory),
                    ], select: "photos")))
        #expect(state.browser.current?.name == "photos")
        #expect(Fixtures.press(&state, .left) == [])
    }

    @Test func unreadableDirectoryIsAMessageNotACrash() {
        var state = Fixtures.state()
        _ = MonitorReducer.reduce(
            &state, .directoryLoaded(DirectoryListing(path: "/root/secret", entries: [], error: "cannot open /root/secret: Permission denied")))
        #expect(state.message == StatusMessage("cannot open /root/secret: Permission denied", isError: true))
        #expect(Fixtures.press(&state, .down, .enter, .character(" "), .character("u"), .character("r")) == [])
    }

    @Test func markingQueuesMarkedFilesInOrder() {
        var state = Fixtures.state()
        Fixtures.press(&state, .down, .character(" "), .down, .character(" "))
        #expect(state.browser.marks == ["/photos/cat.jpg", "/photos/夕焼け.png"])
        #expect(state.browser.current?.name == "gone.jpg")
        Fixtures.press(&state, .up, .character(" "))
        #expect(state.browser.marks == ["/photos/cat.jpg"])
        Fixtures.press(&state, .character("*"))
        #expect(state.browser.marks.count == 3)
        let effects = Fixtures.press(&state, .character("u"))
        #expect(
            effects == [
                .enqueue([
                    QueueItem(path: "/photos/cat.jpg", uploadName: "cat.jpg"),
                    QueueItem(path: "/photos/dog.png", uploadName: "dog.png"),
                    QueueItem(path: "/photos/夕焼け.png", uploadName: "夕焼け.png"),
                ])
            ])
        #expect(state.browser.marks.isEmpty)
        #expect(state.message?.text == "Queued 3 files")
    }

    @Test func starTogglesAllImagesAndSkipsTheRest() {
        var state = Fixtures.state()
        Fixtures.press(&state, .character("*"))
        #expect(state.browser.marks == ["/photos/cat.jpg", "/photos/dog.png", "/photos/夕焼け.png"])
        Fixtures.press(&state, .character("*"))
        #expect(state.browser.marks.isEmpty)
    }

    @Test func enterOrUOnAFileQueuesJustIt() {
        var state = Fixtures.state()
        Fixtures.press(&state, .down, .down)
        #expect(Fixtures.press(&state, .enter) == [.enqueue([QueueItem(path: "/photos/dog.png", uploadName: "dog.png")])])
        #expect(Fixtures.press(&state, .character("u")) == [.enqueue([QueueItem(path: "/photos/dog.png", uploadName: "dog.png")])])
    }

    @Test func thingsThatCannotBeSentAreRefusedWithAReason() {
        var state = Fixtures.state()
        #expect(Fixtures.press(&state, .character(" ")) == [])
        #expect(state.message?.isError == true)
        #expect(state.message?.text.contains("directory") == true)
        Fixtures.press(&state, .character("G"))
        #expect(Fixtures.press(&state, .character("u")) == [])
        #expect(state.message?.text == "gone.jpg cannot be sent: broken symlink")
    }

    @Test func showAllRevealsOtherFilesAndAllowsThem() {
        var state = Fixtures.state()
        Fixtures.press(&state, .character("a"))
        #expect(state.browser.visible.count == 6)
        Fixtures.press(&state, .character("/"), .character("n"), .character("o"), .character("t"), .enter)
        #expect(state.browser.current?.name == "notes.txt")
        #expect(Fixtures.press(&state, .character("u")) == [.enqueue([QueueItem(path: "/photos/notes.txt", uploadName: "notes.txt")])])
    }

    @Test func filterNarrowsAsYouTypeAndEscapeClears() {
        var state = Fixtures.state()
        Fixtures.press(&state, .character("/"))
        #expect(state.browser.isFiltering)
        Fixtures.press(&state, .character("P"), .character("N"))
        #expect(state.browser.visible.map { state.browser.entries[$0].name } == ["dog.png", "夕焼け.png"])
        // While typing, letters are text, not commands.
        Fixtures.press(&state, .character("q"))
        #expect(!state.hasQuit)
        #expect(state.browser.visible.isEmpty)
        Fixtures.press(&state, .backspace, .escape)
        #expect(!state.browser.isFiltering)
        #expect(state.browser.filter.text.isEmpty)
        #expect(state.browser.visible.count == 5)
    }

    @Test func renameKeepsTheExtensionAndRefusesEmptyNames() {
        var state = Fixtures.state()
        Fixtures.press(&state, .down, .character("r"))
        #expect(state.modal == .rename(path: "/photos/cat.jpg", original: "cat.jpg", input: TextInput("cat.jpg")))
        Fixtures.press(&state, .control("u"), .enter)
        #expect(state.message == StatusMessage("the upload name is empty", isError: true))
        #expect(state.modal != nil)
        for c in "holiday" { Fixtures.press(&state, .character(c)) }
        Fixtures.press(&state, .home, .character("x"), .end, .enter)
        #expect(state.modal == nil)
        #expect(state.browser.renames["/photos/cat.jpg"] == "xholiday.jpg")
        #expect(Fixtures.press(&state, .character("u")) == [.enqueue([QueueItem(path: "/photos/cat.jpg", uploadName: "xholiday.jpg")])])
        Fixtures.press(&state, .character("r"), .escape)
        #expect(state.modal == nil)
        #expect(state.browser.renames["/photos/cat.jpg"] == "xholiday.jpg")
    }

    @Test func unknownKeysChangeNothing() {
        var state = Fixtures.state()
        let before = state.browser
        for key: Key in [.unknown(410), .unknown(-1), .control("z"), .character("€"), .delete, .backTab] {
            _ = MonitorReducer.reduce(&state, .key(key, Fixtures.time))
        }
        #expect(state.browser.path == before.path)
        #expect(!state.hasQuit)
    }
}

@Suite struct GlobalKeyTests {
    @Test func helpOpensAndAnyKeyClosesIt() {
        var state = Fixtures.state()
        Fixtures.press(&state, .character("?"))
        #expect(state.modal == .help(scroll: 0))
        #expect(Fixtures.press(&state, .character("q")) == [])
        #expect(state.modal == nil)
        #expect(!state.hasQuit)
    }

    @Test func quitIsImmediateWhenIdleAndAsksWhenUploadsRun() {
        var idle = Fixtures.state()
        #expect(Fixtures.press(&idle, .character("q")) == [.quit])
        var ctrlC = Fixtures.state()
        #expect(Fixtures.press(&ctrlC, .control("c")) == [.quit])

        var busy = Fixtures.busyState(width: 120, height: 40)
        #expect(Fixtures.press(&busy, .character("q")) == [])
        #expect(busy.modal == .confirmQuit)
        Fixtures.press(&busy, .character("n"))
        #expect(busy.modal == nil)
        Fixtures.press(&busy, .control("c"))
        #expect(Fixtures.press(&busy, .control("c")) == [.quit])
        #expect(busy.hasQuit)
    }

    @Test func tabSwitchesPanes() {
        var state = Fixtures.state()
        Fixtures.press(&state, .tab)
        #expect(state.focus == .queue)
        Fixtures.press(&state, .backTab)
        #expect(state.focus == .browser)
    }

    @Test func resizeAndTinySizesKeepSelectionsValid() {
        var state = Fixtures.busyState(width: 120, height: 40)
        for (w, h) in [(1, 1), (0, 0), (40, 12), (200, 60)] {
            _ = MonitorReducer.reduce(&state, .resize(width: w, height: h))
            Fixtures.press(&state, .pageDown, .tab, .pageDown, .tab)
            #expect(state.width == w && state.height == h)
        }
    }
}

@Suite struct QueueTests {
    @Test func uploadEventsFillRowsAndTheLog() {
        let state = Fixtures.busyState(width: 120, height: 40)
        #expect(state.queue.rows == [UploadID(1), UploadID(2), UploadID(3), UploadID(4)])
        #expect(state.queue.state(UploadID(3))?.sentBytes == 100_000_000)
        #expect(state.queue.activeCount == 2)
        #expect(
            state.log.map(\.text) == [
                "✓ cat.jpg → 200 in 1.4 s, 2.10 MB sent",
                "✗ notes.jpg → 415 Unsupported Media Type",
            ])
        // The selection followed the latest finished upload: the red answer.
        #expect(state.queue.selectedID == UploadID(2))
        #expect(state.queue.state(UploadID(2)).flatMap { AnswerDigest(record: $0.record) }?.isSuccess == false)
        #expect(state.queue.state(UploadID(1)).flatMap { AnswerDigest(record: $0.record) }?.lines == ["{", #"  "filename": "cat.jpg""#, "}"])
    }

    @Test func finishingNotifiesTheTerminalAndDrainingSummarises() {
        var state = Fixtures.busyState(width: 120, height: 40)
        let effects = Fixtures.upload(&state, .finished(UploadID(3), .failed(UploadFailure(.connectionLost, "Connection reset by peer", code: 104))), at: 9)
        #expect(effects == [.notify(title: "uploadmon", body: "✗ 夕焼け.png → connection lost: Connection reset by peer (code 104)")])
        // The panel's title says each thing once.
        #expect(AnswerDigest(failure: UploadFailure(.cancelled, "cancelled before it started")).verdict == "CANCELLED")
        #expect(AnswerDigest(failure: UploadFailure(.other, "the server went away")).verdict == "FAILED")
        #expect(AnswerDigest(failure: UploadFailure(.connectionLost, "reset")).verdict == "FAILED connection lost")
        #expect(AnswerDigest(response: UploadResponse(status: 200, reason: "OK", headers: [], body: [], bodyBytesTotal: 0)).verdict == "OK 200")
        #expect(
            AnswerDigest(response: UploadResponse(status: 415, reason: "Unsupported Media Type", headers: [], body: [], bodyBytesTotal: 0)).verdict
                == "FAILED 415 Unsupported Media Type")
        // A message that starts with its kind says it once.
        #expect(
            FailureText.line(UploadFailure(.cannotConnect, "cannot connect: Connection refused", code: 111)) == "cannot connect: Connection refused (code 111)")
        #expect(FailureText.line(UploadFailure(.stalled, "nothing could be written for 30s")) == "stalled: nothing could be written for 30s")
        Fixtures.upload(&state, .finished(UploadID(4), .failed(UploadFailure(.cancelled, "cancelled before it started"))), at: 9)
        #expect(state.log.last?.text == "⊘ dog.png cancelled")
        let drained = Fixtures.upload(&state, .allFinished(UploadSummary(succeeded: 1, failed: 3)), at: 9)
        #expect(state.log.last?.text == "All 4 uploads finished: 1 ok, 3 failed")
        #expect(drained == [.notify(title: "uploadmon", body: "All 4 uploads finished: 1 ok, 3 failed")])
        // The queue counts each drain; one in which nothing finished says nothing.
        let lines = state.log.count
        #expect(Fixtures.upload(&state, .allFinished(UploadSummary(succeeded: 0, failed: 0)), at: 10) == [])
        #expect(state.log.count == lines)
        #expect(
            state.queue.state(UploadID(3)).flatMap { AnswerDigest(record: $0.record) }
                == AnswerDigest(failure: UploadFailure(.connectionLost, "Connection reset by peer", code: 104)))
    }

    @Test func cancelRetryAndClearApplyToTheSelectedRow() {
        var state = Fixtures.busyState(width: 120, height: 40)
        Fixtures.press(&state, .tab)
        #expect(state.queue.selectedID == UploadID(2))
        #expect(Fixtures.press(&state, .character("c")) == [])
        #expect(state.message?.isError == true)
        #expect(Fixtures.press(&state, .character("R")) == [.retry(UploadID(2))])
        Fixtures.press(&state, .down)
        #expect(state.queue.followLatest == false)
        #expect(Fixtures.press(&state, .character("c")) == [.cancel(UploadID(3))])
        #expect(Fixtures.press(&state, .character("R")) == [])
        Fixtures.press(&state, .character("x"))
        #expect(state.queue.rows == [UploadID(3), UploadID(4)])
        #expect(state.queue.selectedID == UploadID(3))
        // Events for a cleared upload are stale and dropped.
        Fixtures.upload(&state, .progress(UploadID(1), bytesSent: 1, totalBytesSent: 1, totalBytesExpected: 1))
        #expect(state.queue.rows == [UploadID(3), UploadID(4)])
    }

    /// The agent says an upload is queued twice (its reply to the enqueue, then its broadcast),
    /// and the broadcast may come after the upload started: the second one changes nothing. A
    /// finished upload queued again is a retry.
    @Test func anUploadSaidQueuedTwiceKeepsWhereItGot() {
        var state = Fixtures.state()
        let id = UploadID(7)
        Fixtures.upload(&state, .queued(id, name: "cat.jpg", totalBytes: 100), at: 1)
        Fixtures.upload(&state, .started(id, attempt: 1, url: state.endpoint, totalBytes: 300), at: 2)
        Fixtures.upload(&state, .queued(id, name: "cat.jpg", totalBytes: 100), at: 2)
        #expect(state.queue.state(id)?.record.phase == .sending(attempt: 1))
        #expect(state.queue.rows == [id])
        Fixtures.upload(&state, .finished(id, .failed(UploadFailure(.connectionLost, "reset"))), at: 3)
        Fixtures.upload(&state, .queued(id, name: "cat.jpg", totalBytes: 100), at: 4)
        #expect(state.queue.state(id)?.record.phase == .queued, "a retry")
    }

    @Test func retryKeepsTheRowAndCountsAttempts() {
        var state = Fixtures.busyState(width: 120, height: 40)
        Fixtures.upload(&state, .queued(UploadID(2), name: "notes.jpg", totalBytes: 38))
        Fixtures.upload(&state, .started(UploadID(2), attempt: 2, url: "http://127.0.0.1:3000/photo", totalBytes: 38))
        #expect(state.queue.rows.count == 4)
        #expect(state.queue.state(UploadID(2))?.attempt == 2)
        #expect(state.queue.state(UploadID(2))?.outcome == nil)
        Fixtures.upload(&state, .retryScheduled(UploadID(2), attempt: 3, delaySeconds: 2, reason: "503 Service Unavailable"))
        #expect(state.log.last?.text == "↻ notes.jpg: 503 Service Unavailable; attempt 3 in 2.0 s")
    }

    @Test func redirectsRestartTheBarAndNameTheNewURL() {
        var state = Fixtures.busyState(width: 120, height: 40)
        Fixtures.upload(&state, .redirected(UploadID(3), to: "http://127.0.0.1:3001/photo"))
        #expect(state.queue.state(UploadID(3))?.sentBytes == 0)
        #expect(state.queue.state(UploadID(3))?.record.url == "http://127.0.0.1:3001/photo")
    }

    @Test func refusedFilesAreLoggedInRed() {
        var state = Fixtures.state()
        _ = MonitorReducer.reduce(&state, .enqueueRefused(name: "notes.jpg", reason: "notes.jpg is text, not an image", Fixtures.time))
        #expect(state.log.last == LogEntry(clock: "12:00:00", text: "✗ notes.jpg not queued: notes.jpg is text, not an image", kind: .failed))
    }

    @Test func tickDecaysTheRateOfAStalledUpload() {
        var state = Fixtures.busyState(width: 120, height: 40)
        let before = state.queue.state(UploadID(3))?.meter.bytesPerSecond ?? 0
        _ = MonitorReducer.reduce(&state, .tick(Fixtures.at(12)))
        _ = MonitorReducer.reduce(&state, .tick(Fixtures.at(14)))
        let after = state.queue.state(UploadID(3))?.meter.bytesPerSecond ?? 0
        #expect(before > 0 && after < before / 2)
    }
}

/// A server that refuses a photo for its format: the monitor says so, and `C` sends every photo
/// refused so again, converted to what the server asked for (once: a second `C` has none left).
@Suite struct FormatRefusalKeyTests {
    @Test func cSendsThePhotosRefusedForTheirFormatAgainConverted() {
        var state = Fixtures.state()
        state.stripLocation = true
        let heic = QueueItem(path: "/photos/IMG_1.HEIC", uploadName: "IMG_1.HEIC", stripLocation: true, modified: 5, changed: 6)
        let jpeg = QueueItem(path: "/photos/cat.jpg", uploadName: "cat.jpg")
        let avif = QueueItem(path: "/photos/b.avif", uploadName: "b.avif")
        for (i, item) in [heic, jpeg, avif].enumerated() {
            Fixtures.upload(&state, Fixtures.queued(UploadID(i + 1), item, totalBytes: 100), at: 1)
        }
        Fixtures.upload(&state, .response(UploadID(1), Fixtures.response(415, #"{"detail":"JPEG only"}"#)), at: 2)
        Fixtures.upload(&state, .finished(UploadID(1), .answered(status: 415)), at: 2)
        #expect(state.message?.text.contains("IMG_1.HEIC was refused for its format: C sends the refused photos again as JPEG") == true)
        // Another refusal, not for the format; and one a 415 for a JPEG (nothing to convert).
        Fixtures.upload(&state, .response(UploadID(2), Fixtures.response(415, "")), at: 3)
        Fixtures.upload(&state, .finished(UploadID(2), .answered(status: 415)), at: 3)
        Fixtures.upload(&state, .response(UploadID(3), Fixtures.response(422, #"{"detail":"only jpg files"}"#)), at: 3)
        Fixtures.upload(&state, .finished(UploadID(3), .answered(status: 422)), at: 3)
        #expect(state.queue.formatRefused.keys.sorted { $0.rawValue < $1.rawValue } == [UploadID(1), UploadID(3)])

        let items = Fixtures.enqueued(Fixtures.press(&state, .character("C")))
        #expect(items.map(\.path) == ["/photos/IMG_1.HEIC", "/photos/b.avif"])
        #expect(items.allSatisfy { $0.conversion?.format == .jpeg })
        #expect(items[0].stripLocation && items[0].modified == 5 && items[0].changed == 6)
        #expect(state.message?.text == "Sending 2 refused photos again as JPEG")
        #expect(Fixtures.press(&state, .character("C")) == [])
        #expect(state.message?.text == "No photo was refused for its format")
        // Counting the rows again (another endpoint, and back) does not offer them a second time.
        state.queue.endpoint = "http://elsewhere/photo"
        state.queue.endpoint = ""
        #expect(state.queue.formatRefused.isEmpty)
    }
}

/// `F` chooses how the photos queued from now on are written; the preview says what leaves.
@Suite struct ConversionChoiceTests {
    @Test func fGoesThroughTheWaysAndTheNextQueuedFilesCarryIt() {
        var state = Fixtures.state()
        #expect(state.sendsAs == nil)
        // Queued before any choice: as the destination says (nothing carried).
        Fixtures.press(&state, .down)
        #expect(Fixtures.enqueued(Fixtures.press(&state, .character("u"))).map(\.conversion) == [nil])
        Fixtures.press(&state, .character("F"))
        #expect(state.message?.text == "Photos queued from now on go as JPEG q85")
        Fixtures.press(&state, .character("F"))
        #expect(state.message?.text == "Photos queued from now on go as JPEG q85, at most 2048 px")
        #expect(Fixtures.enqueued(Fixtures.press(&state, .character("u"))).map(\.conversion) == [PhotoConversion(format: .jpeg, maxDimension: 2048)])
        Fixtures.press(&state, .character("F"), .character("F"))
        #expect(state.message?.text == "Photos queued from now on go as they are")
        #expect(Fixtures.enqueued(Fixtures.press(&state, .character("u"))).map(\.conversion) == [PhotoConversion(format: .keep)])
        Fixtures.press(&state, .character("F"))
        #expect(state.sendsAs == PhotoConversion(format: .jpeg))
    }

    @Test func aDestinationsOwnWayComesFirst() {
        var state = Fixtures.state()
        let own = PhotoConversion(format: .webp, quality: 70, maxBytes: 500_000)
        state.conversion = own
        #expect(state.conversionChoices.first == own)
        Fixtures.press(&state, .character("F"))
        #expect(state.sendsAs == PhotoConversion(format: .keep))
    }

    @Test func anotherDestinationBringsItsOwnWayAndForgetsTheChoice() {
        var state = Fixtures.state()
        let small = PhotoConversion(format: .jpeg, maxDimension: 1024)
        state.destinations = [
            DestinationEntry(name: "blog", shown: "https://blog.example/photo", conversion: small),
            DestinationEntry(name: "archive", shown: "https://archive.example/photo"),
        ]
        Fixtures.press(&state, .character("F"))
        #expect(state.sendsAs == PhotoConversion(format: .jpeg))
        Fixtures.press(&state, .character("D"), .enter)
        #expect(state.destinationName == "blog")
        #expect(state.conversionChoice == nil && state.sendsAs == small)
        #expect(state.message?.text == "Uploads queued from now on go to blog (https://blog.example/photo); photos go as JPEG q85, at most 1024 px")
        Fixtures.press(&state, .down)
        #expect(Fixtures.enqueued(Fixtures.press(&state, .character("u"))).map(\.conversion) == [nil], "the destination's own way, not a choice")
        Fixtures.press(&state, .character("D"), .down, .enter)
        #expect(state.destinationName == "archive" && state.sendsAs == nil)
    }

    /// A photo converted on the way shows in the queue with what is sent of it, once known.
    @Test func aConvertedRowShowsTheBytesSent() {
        var state = Fixtures.state(width: 120, height: 30)
        let photo = UploadID(1)
        Fixtures.upload(&state, .queued(photo, name: "IMG_0001.HEIC", totalBytes: 6_730_000), at: 1)
        Fixtures.upload(
            &state, .content(photo, sha256: String(repeating: "ab", count: 32), source: String(repeating: "cd", count: 32), name: "IMG_0001.jpg"), at: 2)
        Fixtures.upload(&state, .started(photo, attempt: 1, url: "http://h/photo", totalBytes: 1_940_000), at: 2)
        let theme = Theme(colors: true, glyphs: .unicode, pictureDepth: .trueColor)
        let row = MonitorView.render(state, theme: theme).text.split(separator: "\n").first { $0.contains("IMG_0001.HEIC") && $0.contains("%") }
        #expect(row?.contains("1.94 MB") == true && row?.contains("6.73 MB") == false, "\(String(describing: row))")
    }

    @Test func thePreviewSaysWhatLeaves() {
        let heic = PreviewInfo(format: .heic, width: 4032, height: 3024, fileSize: 2_400_000)
        let small = PreviewInfo(format: .jpeg, width: 800, height: 600, fileSize: 90_000)
        let png = PreviewInfo(format: .png, width: 3000, height: 1000, fileSize: 900_000)
        let jpeg2048 = PhotoConversion(format: .jpeg, maxDimension: 2048)
        #expect(MonitorView.leavingText(heic, jpeg2048) == "sends JPEG q85 2048×1536")
        #expect(MonitorView.leavingText(small, jpeg2048) == "sends it as it is")
        #expect(MonitorView.leavingText(heic, PhotoConversion(format: .jpeg, maxBytes: 1_000_000)) == "sends JPEG ≤ 1.00 MB 4032×3024")
        #expect(
            MonitorView.leavingText(png, PhotoConversion(maxDimension: 1000))?.hasPrefix("not sent: a PNG photo cannot be written again in its own format")
                == true)
        #expect(MonitorView.leavingText(heic, nil) == nil)
        #expect(MonitorView.leavingText(heic, PhotoConversion(format: .keep)) == nil)
    }
}
