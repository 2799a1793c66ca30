/// When the monitor draws and ticks, as a value: at most `maxFramesPerSecond` frames a second
/// and only when something changed; a tick (to refresh rates) every `tickInterval` seconds while
/// uploads run and never while idle; and how long the loop may sleep waiting for input in
/// between. Times are seconds on the loop's monotonic clock.
public struct FramePacer: Sendable, Equatable {
    public var maxFramesPerSecond = 30.0
    public var tickInterval = 0.5
    /// Something changed since the last frame.
    public private(set) var dirty = true
    public private(set) var lastFrame = -1.0
    public private(set) var lastTick = 0.0

    public init() {}

    var frameGap: Double { 1 / maxFramesPerSecond }

    /// Something changed: a frame is owed.
    public mutating func changed() { dirty = true }

    /// Whether to draw at `now`; if so, the frame counts as drawn.
    public mutating func drawNow(at now: Double) -> Bool {
        guard dirty, now - lastFrame >= frameGap else { return false }
        lastFrame = now
        dirty = false
        return true
    }

    /// How long the loop may wait for input at `now`: until the owed frame may be drawn, or
    /// the next tick while uploads run; nil to wait for input alone.
    public func sleep(at now: Double, uploadsActive: Bool) -> Double? {
        var timeout: Double?
        if dirty { timeout = max(0, lastFrame + frameGap - now) }
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
