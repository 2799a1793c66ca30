/// When the monitor draws and ticks, as a value: at most `maxFramesPerSecond` frames a second
/// and only when something changed; a tick (to refresh rates) every `tickInterval` seconds while
/// uploads run and never while idle; and how long the loop may sleep waiting for input in
/// between. Times are seconds on the loop's monotonic clock.
///
/// It also keeps the screen from falling behind the keyboard on a slow link. Over SSH, what the
/// monitor writes is buffered on the way (the SSH channel alone takes megabytes), so writing
/// never blocks and a held key would queue seconds of frames. Instead, each frame ends with a
/// question the terminal answers once it has read that far (`CSI 5 n`, every VT100-like terminal
/// answers it); the next frame waits for that answer, and what changed meanwhile is drawn as one
/// frame then. On a fast link the answer is back within a millisecond and nothing changes; on a
/// slow one stale frames are never sent. Frames wait only once the terminal has answered (one
/// that does not answer is never slowed; after `silentAfter` it is not asked again), and a lost
/// answer holds the screen for at most `patience`.
public struct FramePacer: Sendable, Equatable {
    /// Frames a second for what the user did (a key, a resize): the screen answers at once.
    public var maxFramesPerSecond = 30.0
    /// Frames a second for what only the uploads changed: bars and counts read as well at this
    /// rate, and a camera roll's thousands of events cost the monitor (and the machine the
    /// uploads share) a third of the drawing.
    public var backgroundFramesPerSecond = 12.0
    /// What is owed is the user's doing: drawn at the faster rate.
    public private(set) var urgent = true
    public var tickInterval = 0.5
    /// Something changed since the last frame.
    public private(set) var dirty = true
    public private(set) var lastFrame = -1.0
    public private(set) var lastTick = 0.0

    /// Whether the terminal answers the question.
    public enum Answering: Sendable, Equatable {
        case unknown
        case yes
        case no
    }
    public private(set) var answering = Answering.unknown
    /// When each frame whose answer has not come yet was sent, oldest first.
    public private(set) var unanswered: [Double] = []
    /// When the first question went out, for deciding that the terminal does not answer.
    private var firstAsked: Double?
    /// How long a frame waits for the last one's answer at most: a lost answer must not hold
    /// the screen for good.
    public var patience = 2.0
    /// A terminal that has not answered this long after the first question is not asked again.
    public static let silentAfter = 5.0
    /// The last answers' delays (how long each took after its frame was sent), newest last:
    /// the shortest is the round trip.
    private var recentDelays: [Double] = []
    /// How long the last answer took after its frame was sent.
    public var lastAnswerDelay: Double? { recentDelays.last }
    /// When the newest frame answered so far was sent.
    public private(set) var answeredThrough: Double?
    /// The quickest of the recent answers: the link's round trip, frames' own size aside.
    public var roundTrip: Double? { recentDelays.min() }
    /// Whether the link takes long to carry a frame (beyond its round trip): pictures should then
    /// cost fewer bytes. Set when one of the last 32 frames took `slowExcess` longer than the
    /// quickest, cleared when none took `fastExcess` longer.
    public private(set) var slowLink = false
    /// Seconds a frame may take beyond the round trip before the link counts as slow: at 1 Mbit/s
    /// a 24-bit preview takes about 0.13 s, at 10 Mbit/s 0.013 s.
    public static let slowExcess = 0.08
    public static let fastExcess = 0.02
    /// A judgement of the link older than this is dropped: one slow moment (a busy machine, a
    /// hiccup on the way) must not cost pictures their colour for the rest of the run. The
    /// next frames measure the link afresh.
    public var linkMemory = 5.0
    /// When the last answer came.
    private var lastAnswer: Double?

    public init() {}

    /// The least time between frames for what is owed now.
    var frameGap: Double { 1 / (urgent ? maxFramesPerSecond : min(backgroundFramesPerSecond, maxFramesPerSecond)) }

    /// Something changed: a frame is owed; `urgent` when the user did it (a key, a resize).
    public mutating func changed(urgent: Bool = false) {
        dirty = true
        if urgent { self.urgent = true }
    }

    /// Whether the frame drawn next should end with the question.
    public var asks: Bool { answering != .no }

    /// Whether the terminal has shown the frames sent, or waiting longer is pointless.
    func caughtUp(at now: Double) -> Bool {
        guard answering == .yes, let newest = unanswered.last else { return true }
        return now - newest >= patience
    }

    /// Whether to draw at `now`; if so, the frame counts as drawn.
    public mutating func drawNow(at now: Double) -> Bool {
        guard dirty, now - lastFrame >= frameGap, caughtUp(at: now) else { return false }
        lastFrame = now
        dirty = false
        urgent = false
        return true
    }

    /// The frame drawn at `now` ended with the question (`asked`), or not.
    public mutating func sent(at now: Double, asked: Bool) {
        guard asked else { return }
        if firstAsked == nil { firstAsked = now }
        unanswered.append(now)
        // Answers come in order; beyond this many outstanding, the oldest will not matter.
        if unanswered.count > 64 { unanswered.removeFirst(unanswered.count - 64) }
    }

    /// `count` answers came at `now` (answers come in the order asked).
    public mutating func answered(_ count: Int, at now: Double) {
        guard count > 0 else { return }
        answering = .yes
        lastAnswer = now
        let done = min(count, unanswered.count)
        if done > 0 {
            answeredThrough = unanswered[done - 1]
            recentDelays.append(now - unanswered[done - 1])
            if recentDelays.count > 32 { recentDelays.removeFirst() }
            // The longest of the recent frames beyond the round trip: a small frame says
            // nothing of the bandwidth, so one slow picture among them keeps the link slow.
            let excess = recentDelays.max()! - recentDelays.min()!
            if excess > Self.slowExcess { slowLink = true } else if excess < Self.fastExcess { slowLink = false }
        }
        unanswered.removeFirst(done)
    }

    /// Time passes at `now`: a terminal silent since the first question is not asked again; a
    /// slow link not heard from for `linkMemory` is judged afresh.
    public mutating func observe(at now: Double) {
        if slowLink, let last = lastAnswer, now - last >= linkMemory {
            slowLink = false
            recentDelays.removeAll()
        }
        guard answering == .unknown, let first = firstAsked, now - first >= Self.silentAfter else { return }
        answering = .no
        unanswered.removeAll()
    }

    /// How long the loop may wait for input at `now`: until the owed frame may be drawn, or
    /// the next tick while uploads run; nil to wait for input alone. While the terminal owes
    /// an answer, the answer wakes the loop (it arrives as input); the wait is then bounded by
    /// the patience only.
    public func sleep(at now: Double, uploadsActive: Bool) -> Double? {
        var timeout: Double?
        if dirty {
            var due = lastFrame + frameGap
            if answering == .yes, let newest = unanswered.last { due = max(due, newest + patience) }
            timeout = max(0, due - now)
        }
        if answering == .unknown, let first = firstAsked {
            let decide = max(0, first + Self.silentAfter - now)
            timeout = min(timeout ?? decide, decide)
        }
        if slowLink, let last = lastAnswer {
            let forget = max(0, last + linkMemory - now)
            timeout = min(timeout ?? forget, forget)
        }
        if uploadsActive {
            let untilTick = max(0, lastTick + tickInterval - now)
            timeout = min(timeout ?? untilTick, untilTick)
        }
        return timeout
    }

    /// Whether a tick is due at `now`; if so, it counts as done.
    public mutating func tickNow(at now: Double, uploadsActive: Bool) -> Bool {
        guard uploadsActive, now - lastTick >= tickInterval else { return false }
        lastTick = now
        return true
    }
}
