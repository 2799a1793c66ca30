import Foundation
import Glibc
import ImagePreview
import Monitor
import MonitorRuntime
import NIOConcurrencyHelpers
import TerminalCanvas
import Testing
import UploadClient
import UploadCore
import UploadTesting

/// Uploads that go nowhere: the test sees what the monitor asked for and answers with events.
final class FakeBackend: MonitorBackend {
    private let state = NIOLockedValueBox<(enqueued: [QueueItem], cancelled: [UploadID], finished: Bool)>(([], [], false))
    private let outlet = MonitorOutlet()
    private let onEnqueue: @Sendable (FakeBackend, [QueueItem]) -> Void

    init(onEnqueue: @escaping @Sendable (FakeBackend, [QueueItem]) -> Void = { _, _ in }) {
        self.onEnqueue = onEnqueue
    }

    var enqueued: [QueueItem] { state.withLockedValue { $0.enqueued } }
    var cancelled: [UploadID] { state.withLockedValue { $0.cancelled } }

    func send(_ event: UploadEvent) {
        outlet.post(.upload(event, EventTime(seconds: 0, clock: "12:00:00", date: Date(timeIntervalSince1970: 1_700_000_000 + 0))))
    }

    func start(post: @escaping @Sendable (MonitorEvent) -> Void, now: @escaping @Sendable () -> EventTime) {
        outlet.start(post: post, now: now)
    }
    func enqueue(_ items: [QueueItem]) {
        state.withLockedValue { $0.enqueued += items }
        onEnqueue(self, items)
    }
    func cancel(_ id: UploadID) { state.withLockedValue { $0.cancelled.append(id) } }
    func retry(_ id: UploadID) {}
    func finish(_ state: MonitorState) async {}
    func switchDestination(_ destination: MonitorDestination) {}
}

/// The whole monitor (run loop, reducer, views, effects) on a terminal made of buffers: what a
/// person does with keys and what the screen shows, without curses or a tty.
@Suite(.timeLimit(.minutes(2))) struct MonitorProgramTests {
    let directory: String

    init() throws {
        directory = TestFiles.makeTemporaryDirectory("monitor-program")
        _ = try TestFiles.writeImage(at: directory + "/a.png", size: 3_000)
        _ = try TestFiles.writeImage(at: directory + "/b.png", size: 5_000)
    }

    func program(_ backend: any MonitorBackend, _ terminal: FakeTerminal, notify: NotifyMode = .bell) -> MonitorProgram {
        let settings = MonitorProgram.Settings(notify: notify, colors: false, glyphs: .unicode, environment: [:])
        return MonitorProgram(backend: backend, settings: settings) { _ in terminal }
    }

    func initial(endpoint: String = "http://127.0.0.1:1/photo") -> MonitorState {
        MonitorState(width: 80, height: 24, endpoint: endpoint, directory: directory, home: directory)
    }

    /// The monitor's final state; a test that runs out of time cancels it (and so ends it)
    /// instead of waiting for ever.
    static func ended(_ run: Task<MonitorState, Never>) async -> MonitorState {
        await withTaskCancellationHandler {
            await run.value
        } onCancel: {
            run.cancel()
        }
    }

    /// The header says every upload ended well: `count ok` and nothing active.
    static func allOK(_ count: Int) -> @Sendable (Canvas) -> Bool {
        { frame in frame.line(0).contains("\(count) ok") && !frame.line(0).contains("active") }
    }

    /// The preview pane follows the cursor: its title names the file under it.
    static func cursorOn(_ name: String, _ screen: String) -> Bool { screen.contains("Preview · " + name) }

    static func answer(_ id: UploadID, name: String) -> [UploadEvent] {
        let body = #"{"filename": "\#(name)"}"#
        return [
            .queued(id, name: name, totalBytes: 100),
            .started(id, attempt: 1, url: "http://127.0.0.1:1/photo", totalBytes: 100),
            .progress(id, bytesSent: 100, totalBytesSent: 100, totalBytesExpected: 100),
            .response(
                id,
                UploadResponse(
                    status: 200, reason: "OK", headers: [("Content-Type", "application/json")], body: Array(body.utf8), bodyBytesTotal: Int64(body.utf8.count))),
            .finished(id, .answered(status: 200)),
        ]
    }

    /// The loop's time (frames, ticks, the log's times, records' dates) is its clock's.
    @Test func theProgramsTimeIsItsClocks() {
        let time = ManualClock()
        let settings = MonitorProgram.Settings(notify: .bell, colors: false, glyphs: .unicode, environment: [:])
        let terminal = FakeTerminal(width: 80, height: 24)
        let program = MonitorProgram(backend: FakeBackend { _, _ in }, settings: settings, clock: time.clock) { _ in terminal }
        let start = time.clock.wall()
        #expect(program.now() == EventTime(seconds: 0, clock: LocalTime.format(start, .clock), date: start))
        time.advance(by: 90)
        #expect(program.now() == EventTime(seconds: 90, clock: LocalTime.format(start.addingTimeInterval(90), .clock), date: start.addingTimeInterval(90)))
    }

    @Test func markingEverythingAndQueueingSendsBothImagesAndShowsTheAnswers() async throws {
        let terminal = FakeTerminal(width: 100, height: 30)
        let backend = FakeBackend { backend, items in
            for (i, item) in items.enumerated() {
                for event in Self.answer(UploadID(i + 1), name: item.uploadName) { backend.send(event) }
            }
        }
        let program = program(backend, terminal)
        let run = Task { await program.run(initial(), handlingSignals: false) }

        let listed = await terminal.frame { FakeTerminal.text($0).contains("a.png") && FakeTerminal.text($0).contains("b.png") }
        #expect(listed.match != nil, "the browser never listed the folder:\n\(listed.last)")
        terminal.type(.character("*"), .character("u"))
        let answered = await terminal.frame { FakeTerminal.text($0).contains("filename") }
        #expect(answered.match != nil, "no answer was shown:\n\(answered.last)")
        let done = await terminal.frame(Self.allOK(2))
        #expect(done.match != nil, "both uploads did not end well:\n\(done.last)")
        #expect(backend.enqueued.map { $0.path }.sorted() == [directory + "/a.png", directory + "/b.png"])
        #expect(terminal.emitted.contains(0x07), "the terminal was not told an upload finished")

        terminal.type(.character("q"))
        let final = await Self.ended(run)
        #expect(final.hasQuit)
        #expect(terminal.closed)
        let outcomes: [UploadOutcome] = final.queue.rows.compactMap { final.queue.state($0)?.outcome }
        #expect(outcomes == [.answered(status: 200), .answered(status: 200)])
    }

    @Test func quittingWhileUploadsRunAsksFirstAndNoKeepsTheMonitorOpen() async throws {
        let terminal = FakeTerminal(width: 100, height: 30)
        let backend = FakeBackend { backend, _ in
            backend.send(.queued(UploadID(1), name: "a.png", totalBytes: 3_000))
            backend.send(.started(UploadID(1), attempt: 1, url: "http://127.0.0.1:1/photo", totalBytes: 3_000))
        }
        let program = program(backend, terminal)
        let run = Task { await program.run(initial(), handlingSignals: false) }
        _ = await terminal.frame { FakeTerminal.text($0).contains("a.png") }
        terminal.type(.character("u"))
        #expect(await terminal.frame { _ in backend.enqueued.count == 1 }.match != nil)

        terminal.type(.character("q"))
        let asked = await terminal.frame { FakeTerminal.text($0).contains("Quit and cancel it?") }
        #expect(asked.match != nil, "quitting with an upload running did not ask:\n\(asked.last)")
        let before = terminal.frameCount
        terminal.type(.character("n"))
        let kept = await terminal.frame(after: before) { frame in !FakeTerminal.text(frame).contains("Quit and cancel") }
        #expect(kept.match?.contains("a.png") == true, "answering no did not close the question:\n\(kept.last)")

        // A terminating signal ends it at once, asked or not.
        program.inbox.post(.signal(SIGTERM))
        let final = await Self.ended(run)
        #expect(final.hasQuit)
        #expect(final.queue.activeCount == 1)
        #expect(terminal.closed)
    }

    @Test func aResizeRedrawsTheWholeScreenAtTheNewSize() async throws {
        let terminal = FakeTerminal(width: 80, height: 24)
        let program = program(FakeBackend(), terminal)
        let run = Task { await program.run(initial(), handlingSignals: false) }
        _ = await terminal.frame { FakeTerminal.text($0).contains("a.png") }
        terminal.willMeasure(width: 132, height: 40)
        program.inbox.post(.signal(SIGWINCH))
        let resized = await terminal.frame { $0.width == 132 && $0.height == 40 }
        #expect(resized.match?.contains("a.png") == true, "\(resized.last)")
        terminal.type(.control("c"))
        let final = await Self.ended(run)
        #expect(final.width == 132 && final.height == 40)
    }

    /// On a slow link the terminal answers late: keys pressed meanwhile change the state but
    /// draw nothing until the answer comes, then one frame shows where they led.
    @Test func keysPressedWhileTheTerminalHasNotShownTheLastFrameAreDrawnAsOneFrameAfterIt() async throws {
        let terminal = FakeTerminal(width: 100, height: 30, answers: true)
        let program = program(FakeBackend(), terminal)
        program.pacing.patience = 3600  // an answer that never came must not end the wait here
        let run = Task { await program.run(initial(), handlingSignals: false) }
        _ = await terminal.frame { FakeTerminal.text($0).contains("a.png") }
        // A frame after the answer: the terminal is known to answer from here on. A frame the
        // loop draws by itself meanwhile (the preview, coming in) asks again; answered too, as
        // a terminal would, until the key's frame shows.
        terminal.answerShown()
        terminal.type(.character("j"))
        var moved = await terminal.frame(within: 0.1) { Self.cursorOn("b.png", FakeTerminal.text($0)) }
        for _ in 0..<300 where moved.match == nil {
            // Held back by a question asked after the answer above: it can only be drawn once
            // that is answered, so its own question is never answered here.
            terminal.answerShown()
            moved = await terminal.frame(within: 0.1) { Self.cursorOn("b.png", FakeTerminal.text($0)) }
        }
        #expect(moved.match != nil, "\(moved.last)")
        // The question goes out just after the frame.
        #expect(try await eventually { terminal.questionsOwed == 1 })
        let drawn = terminal.frameCount
        let taken = terminal.keysTaken
        // Back and forth while that frame is unanswered: no frame.
        for key in ["k", "j", "k"] { terminal.type(.character(Character(key))) }
        terminal.type(.character("?"))
        // The help dialog would show at once; it must wait for the answer. Once the loop has
        // taken the keys and come back for input, it has drawn whatever it was going to.
        #expect(try await eventually { terminal.keysTaken == taken + 4 })
        let reads = terminal.reads
        terminal.nudge()
        #expect(try await eventually { terminal.reads > reads })
        #expect(terminal.frameCount == drawn, "no frame while the terminal has not shown the last one")
        terminal.answerShown()
        let after = await terminal.frame(after: drawn) { _ in true }
        // (The help dialog covers the end of the preview's title.)
        #expect(after.match.map { $0.contains("Preview · a.") && $0.contains("Keys") } == true, "one frame, where the keys led: \(after.last)")
        terminal.type(.escape)
        terminal.answerShown()
        terminal.type(.control("c"))
        _ = await Self.ended(run)
        #expect(terminal.frameCount <= drawn + 3)
    }

    /// A link judged slow (one frame's answer far later than the others') gets pictures drawn
    /// lightly; once it has been quiet for `linkMemory`, the picture on screen is drawn again
    /// in full by the loop itself, with no key pressed to wake it.
    @Test func aLinkJudgedSlowIsForgottenAndThePictureDrawnInFullWithoutAKey() async throws {
        let terminal = FakeTerminal(width: 100, height: 30, answers: true, picture: true)
        let program = program(FakeBackend(), terminal)
        program.pacing.patience = 3600
        program.pacing.linkMemory = 0.5
        let run = Task { await program.run(initial(), handlingSignals: false) }
        _ = await terminal.frame { FakeTerminal.text($0).contains("a.png") }
        // Answers at once and answers late, until the loop judges the link slow (a busy
        // machine may make the quick ones slow too: then another round).
        let keys: [Character] = ["j", "k"]
        for round in 0..<20 where !terminal.drawingLightly {
            terminal.answerShown()
            let drawn = terminal.frameCount
            terminal.type(.character(keys[round % 2]))
            _ = await terminal.frame(after: drawn) { _ in true }
            try await Task.sleep(for: .milliseconds(300))
            terminal.answerShown()
            _ = try await eventually { terminal.drawingLightly }
        }
        #expect(terminal.drawingLightly, "the link was never judged slow")
        // From here the test only answers what the loop asks; it never wakes it otherwise.
        for _ in 0..<400 where terminal.drawingLightly {
            if terminal.questionsOwed > 0 { terminal.answerShown() }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(!terminal.drawingLightly, "the slow judgement was never forgotten")
        let before = try #require(terminal.framesBeforeFullAgain)
        #expect(try await eventually { terminal.frameCount > before }, "the picture was not drawn again")
        if terminal.frameCount > before { #expect(!terminal.lightly(frame: before)) }
        terminal.answerShown()
        terminal.type(.control("c"))
        _ = await Self.ended(run)
    }

    @Test func aTerminalThatHangsUpEndsTheMonitorAndIsGivenBack() async throws {
        let terminal = FakeTerminal()
        let program = program(FakeBackend(), terminal)
        let run = Task { await program.run(initial(), handlingSignals: false) }
        _ = await terminal.frame { FakeTerminal.text($0).contains("a.png") }
        terminal.hangUp()
        let final = await Self.ended(run)
        #expect(final.hasQuit)
        #expect(terminal.closed)
    }

    @Test func aCancelledTaskEndsTheMonitorAndGivesTheTerminalBack() async throws {
        let terminal = FakeTerminal()
        let program = program(FakeBackend(), terminal)
        let run = Task { await program.run(initial(), handlingSignals: false) }
        _ = await terminal.frame { FakeTerminal.text($0).contains("a.png") }
        run.cancel()
        let final = await run.value
        #expect(final.hasQuit)
        #expect(terminal.closed)
    }

    @Test func theRealQueueSendsThePickedImageToAReceiverAndTheScreenShowsItsAnswer() async throws {
        let receiver = try await ReceiverHarness.start()
        let transport = try HTTPUploadTransport()
        let queue = UploadQueue(transport: transport, concurrency: 2, retryPolicy: RetryPolicy())
        let uploads = MonitorUploads(url: receiver.url, field: "photo", formFields: [], headers: [], allowAnyFile: false)
        let backend = LocalBackend(queue: queue, transport: transport, uploads: uploads, settings: TransportSettings())
        let terminal = FakeTerminal(width: 120, height: 34)
        let program = program(backend, terminal)
        let run = Task { await program.run(initial(endpoint: receiver.url), handlingSignals: false) }

        _ = await terminal.frame { FakeTerminal.text($0).contains("b.png") }
        terminal.type(.down)
        let onB = await terminal.frame { FakeTerminal.text($0).contains("b.png") }
        #expect(onB.match != nil)
        terminal.type(.character("*"), .character("u"))
        let answered = await terminal.frame { frame in
            let text = FakeTerminal.text(frame)
            return text.contains(#""filename": "a.png""#) || text.contains(#""filename": "b.png""#)
        }
        #expect(answered.match != nil, "no answer from the receiver was shown:\n\(answered.last)")
        let both = await terminal.frame(Self.allOK(2))
        #expect(both.match != nil, "both uploads did not finish with 200:\n\(both.last)")
        terminal.type(.character("q"))
        let final = await Self.ended(run)
        await backend.finish(final)
        await receiver.stop()

        let outcomes: [UploadOutcome] = final.queue.rows.compactMap { final.queue.state($0)?.outcome }
        #expect(outcomes == [.answered(status: 200), .answered(status: 200)])
        #expect(receiver.storedNames() == ["a.png", "b.png"])
        #expect(TestFiles.sameContents(directory + "/a.png", receiver.directory + "/a.png"))
        #expect(TestFiles.sameContents(directory + "/b.png", receiver.directory + "/b.png"))
    }

    /// `L` on a photo: it goes without where it was taken (another one, not asked, keeps its
    /// GPS), and its queue row says so. Read back by exiftool from what the receiver stored.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/exiftool"), "needs exiftool (libimage-exiftool-perl)"))
    func aPhotoAskedToGoWithoutItsLocationArrivesWithoutIt() async throws {
        let receiver = try await ReceiverHarness.start()
        let folder = TestFiles.makeTemporaryDirectory("monitor-strip")
        func exiftool(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/exiftool")
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        for name in ["home.jpg", "paris.jpg"] {
            let image = RGBImage(width: 64, height: 48, rgb: (0..<(64 * 48 * 3)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try PictureWriter.jpeg(image, to: folder + "/" + name, exif: PictureWriter.exif(orientation: 1, bigEndian: false, make: "Canon", model: "R5"))
            _ = try exiftool([
                "-q", "-overwrite_original", "-GPSLatitude=48.8582", "-GPSLatitudeRef=N", "-GPSLongitude=2.2945",
                "-GPSLongitudeRef=E", folder + "/" + name,
            ])
        }
        let transport = try HTTPUploadTransport()
        let queue = UploadQueue(transport: transport, concurrency: 2, retryPolicy: RetryPolicy())
        let uploads = MonitorUploads(url: receiver.url, field: "photo", formFields: [], headers: [], allowAnyFile: false)
        let backend = LocalBackend(
            queue: queue, transport: transport, uploads: uploads, settings: TransportSettings(),
            make: { try HTTPUploadTransport(settings: $0) })
        let terminal = FakeTerminal(width: 160, height: 34)
        let program = program(backend, terminal)
        let start = MonitorState(width: 80, height: 24, endpoint: receiver.url, directory: folder, home: folder)
        let run = Task { await program.run(start, handlingSignals: false) }

        _ = await terminal.frame { Self.cursorOn("home.jpg", FakeTerminal.text($0)) }
        terminal.type(.down)
        _ = await terminal.frame { Self.cursorOn("paris.jpg", FakeTerminal.text($0)) }
        terminal.type(.character("L"), .character("*"))
        let marked = await terminal.frame { FakeTerminal.text($0).contains("2 marked, 1 without location") }
        #expect(marked.match != nil, "\(marked.last)")
        terminal.type(.character("u"))
        let both = await terminal.frame(Self.allOK(2))
        #expect(both.match != nil, "\(both.last)")
        let row = await terminal.frame { FakeTerminal.text($0).contains("paris.jpg · no location") }
        #expect(row.match != nil, "\(row.last)")
        terminal.type(.character("q"))
        let final = await Self.ended(run)
        await backend.finish(final)
        await receiver.stop()

        #expect(receiver.storedNames() == ["home.jpg", "paris.jpg"])
        #expect(!(try exiftool(["-G", "-a", "-s", receiver.directory + "/paris.jpg"])).contains("GPS"))
        #expect(try exiftool(["-G", "-a", "-s", receiver.directory + "/home.jpg"]).contains("GPSLatitude"), "not asked: unchanged")
    }
}
