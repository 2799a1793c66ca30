/// Whether pictures in real pixels are worth sending on this link, as a value. On a slow link
/// a picture goes lighter (`drawLightly`: sixel halved, kitty halved twice); on a link so slow
/// that even the light picture takes longer than `limit` to cross, pictures go in half-block
/// cells instead, and real pixels are tried again after `retryAfter`, twice as long after each
/// try that finds the link still too slow (at most `longestWait`).
///
/// What a picture costs is measured, not guessed: the terminal says how many bytes the picture
/// of a frame took (and what it would take lightly), and the frame's answer (`FramePacer`) how
/// long the frame took beyond the round trip; the rate is the one over the other.
public struct PixelBudget: Sendable, Equatable {
    /// The longest a light picture may take to cross: beyond it, the screen cannot settle within
    /// 0.6 s of the last key with pixels, and cells do it in a fraction of the bytes.
    public var limit = 0.4
    /// How long pixels stay off before a picture is tried again (the link may have recovered).
    public var retryAfter = 30.0
    public var longestWait = 600.0
    /// Tries in a row that found the link too slow.
    public private(set) var failures = 0
    public private(set) var allowsPixels = true
    /// What the link was measured to carry when pixels went off, bytes a second.
    public private(set) var measuredRate: Double?
    private var offSince: Double?
    /// The picture sent with a frame whose answer is awaited, and when that frame went.
    private var pending: Pending?
    private struct Pending: Sendable, Equatable {
        var bytes: Int, lightBytes: Int, at: Double
    }

    public init() {}

    /// The frame sent at `at` carried a picture of `bytes` (`lightBytes` as a light one).
    public mutating func sent(bytes: Int, lightBytes: Int, at: Double) {
        pending = Pending(bytes: bytes, lightBytes: lightBytes, at: at)
    }

    /// Answers came at `now` for every frame sent up to `answeredThrough`, on a link whose round
    /// trip is `roundTrip` (the quickest recent answer). Frames are answered in order: the
    /// picture's frame is answered once one sent at or after it is.
    public mutating func answered(through answeredThrough: Double, roundTrip: Double, at now: Double) {
        guard let picture = pending, picture.at <= answeredThrough else { return }
        pending = nil
        let delay = now - picture.at
        // The round trip is known apart only once a quicker frame has been answered; until then
        // (the first picture often goes before the first answer) the whole delay counts.
        let carried = roundTrip < delay ? delay - roundTrip : delay
        guard carried > 0, picture.bytes > 0 else { return }
        let rate = Double(picture.bytes) / carried
        if Double(picture.lightBytes) / rate > limit {
            allowsPixels = false
            offSince = now
            measuredRate = rate
            failures += 1
        } else {
            failures = 0
        }
    }

    /// Time passes at `now`: pixels are tried again `retryAfter` after they went off.
    public mutating func observe(at now: Double) {
        let wait = min(longestWait, retryAfter * Double(1 << min(20, max(0, failures - 1))))
        guard !allowsPixels, let since = offSince, now - since >= wait else { return }
        allowsPixels = true
        offSince = nil
    }
}
