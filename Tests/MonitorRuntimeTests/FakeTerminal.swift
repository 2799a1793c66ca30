import Foundation
import Glibc
import MonitorRuntime
import TerminalCanvas

/// A terminal made of byte buffers: keys typed by the test arrive through a pipe (so the
/// loop's `poll` wakes as it does for a real keyboard), frames and emitted bytes are kept, and
/// closing the pipe's far end is a hang-up.
final class FakeTerminal: MonitorTerminal, @unchecked Sendable {
    private let condition = NSLock()
    private var typed: [Key] = []
    private var frames: [Canvas] = []
    private var emittedBytes: [UInt8] = []
    private var wasClosed = false
    private struct Waiter {
        let id: Int
        let matches: @Sendable (Canvas) -> Bool
        let continuation: CheckedContinuation<String?, Never>
    }
    private var waiters: [Waiter] = []
    private var nextWaiter = 0
    private var nextSize: (width: Int, height: Int)?
    /// Whether it answers the question asked after frames (a real terminal's `CSI 5 n`); the
    /// test gives the answers (`answerShown`).
    private let answers: Bool
    private var questions = 0
    private var answersGiven = 0
    private var keysRead = 0
    /// Whether a picture is on screen (so going back from light drawing redraws it), and
    /// whether pictures are drawn lightly now; each frame's lightness, in order.
    private let picture: Bool
    private var light = false
    private var frameLightness: [Bool] = []
    private var lightEnded: Int?
    private var inputReads = 0
    private(set) var width: Int
    private(set) var height: Int
    let colors: Bool
    let inputDescriptor: Int32
    private var writeFD: Int32

    init(width: Int = 100, height: Int = 30, colors: Bool = false, answers: Bool = false, picture: Bool = false) {
        self.answers = answers
        self.picture = picture
        self.width = width
        self.height = height
        self.colors = colors
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        inputDescriptor = fds[0]
        writeFD = fds[1]
    }

    deinit {
        Glibc.close(inputDescriptor)
        if writeFD >= 0 { Glibc.close(writeFD) }
    }

    // MARK: The test's side

    func type(_ keys: Key...) {
        condition.withLock { typed.append(contentsOf: keys) }
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Wakes the loop as input does, with no key: once it has read again (`reads` moved on),
    /// whatever it did with the input before is done, a frame included.
    func nudge() {
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Keys the loop has taken so far, and how many times it has read its input.
    var keysTaken: Int { condition.withLock { keysRead } }
    var reads: Int { condition.withLock { inputReads } }

    /// The far end goes away, as when an SSH connection drops.
    func hangUp() {
        condition.withLock {
            Glibc.close(writeFD)
            writeFD = -1
        }
    }

    /// The terminal answers the questions asked so far, as a terminal does once it has shown
    /// what came before them.
    func answerShown() {
        condition.withLock {
            answersGiven += questions
            questions = 0
        }
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    var questionsOwed: Int { condition.withLock { questions } }
    var drawingLightly: Bool { condition.withLock { light } }
    /// How many frames had been drawn when light drawing last ended.
    var framesBeforeFullAgain: Int? { condition.withLock { lightEnded } }
    /// Whether the frame at `index` was drawn lightly.
    func lightly(frame index: Int) -> Bool { condition.withLock { frameLightness[index] } }

    /// The size the next SIGWINCH finds.
    func willMeasure(width: Int, height: Int) { condition.withLock { nextSize = (width, height) } }

    var emitted: [UInt8] { condition.withLock { emittedBytes } }
    var closed: Bool { condition.withLock { wasClosed } }
    var frameCount: Int { condition.withLock { frames.count } }

    /// The first frame from the `after`-th on that satisfies `matches`, waiting for new
    /// frames at most `seconds` (a bound for a broken loop, not a speed requirement). `match` is
    /// that frame's text, nil if none came; `last` is the last frame's text, for a failure message.
    func frame(after first: Int = 0, within seconds: Double = 30, _ matches: @escaping @Sendable (Canvas) -> Bool) async -> (match: String?, last: String) {
        let id = condition.withLock { () -> Int in
            nextWaiter += 1
            return nextWaiter
        }
        let match = await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            condition.withLock {
                if let frame = frames.dropFirst(first).first(where: matches) {
                    continuation.resume(returning: Self.text(frame))
                } else {
                    waiters.append(Waiter(id: id, matches: matches, continuation: continuation))
                }
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                self.expire(id)
            }
        }
        return (match, condition.withLock { frames.last.map(Self.text) ?? "(no frame)" })
    }

    private func expire(_ id: Int) {
        let waiter = condition.withLock { () -> Waiter? in
            guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return waiters.remove(at: index)
        }
        waiter?.continuation.resume(returning: nil)
    }

    static func text(_ canvas: Canvas) -> String {
        (0..<canvas.height).map { canvas.line($0) }.joined(separator: "\n")
    }

    // MARK: The loop's side

    func pendingKeys() -> [Key] {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(inputDescriptor, &buffer, buffer.count) > 0 {}
        return condition.withLock {
            defer { typed.removeAll() }
            keysRead += typed.count
            inputReads += 1
            return typed
        }
    }

    func draw(_ canvas: Canvas) {
        condition.withLock {
            frames.append(canvas)
            frameLightness.append(light)
            let (met, waiting) = waiters.reduce(into: ([Waiter](), [Waiter]())) { split, waiter in
                if waiter.matches(canvas) { split.0.append(waiter) } else { split.1.append(waiter) }
            }
            waiters = waiting
            for waiter in met { waiter.continuation.resume(returning: Self.text(canvas)) }
        }
    }

    func askWhenShown() -> Bool {
        guard answers else { return false }
        condition.withLock { questions += 1 }
        return true
    }

    func takeShownAnswers() -> Int {
        condition.withLock {
            defer { answersGiven = 0 }
            return answersGiven
        }
    }

    func drawLightly(_ lightly: Bool) -> Bool {
        condition.withLock {
            defer { light = lightly }
            if light && !lightly { lightEnded = frames.count }
            return picture && light && !lightly
        }
    }

    func emit(_ bytes: [UInt8]) { condition.withLock { emittedBytes += bytes } }

    func measure() -> (width: Int, height: Int)? { condition.withLock { nextSize } }

    func resize(width: Int, height: Int) {
        condition.withLock {
            self.width = width
            self.height = height
        }
    }

    func close() {
        condition.withLock {
            wasClosed = true
        }
    }
}
