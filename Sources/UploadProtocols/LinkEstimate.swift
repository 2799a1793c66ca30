import UploadCore

/// What the requests to one server showed of the link to it: how long a bodiless request takes
/// to be answered (its round trip, and the server's time to answer) and how fast a body goes
/// out. Chunked uploads size their chunks from it.
public struct LinkEstimate: Sendable, Equatable {
    /// Seconds from a bodiless request to its answer: the smallest seen (queues only add).
    public private(set) var roundTrip: Double?
    /// Bytes per second a body went out at: the latest body of some size counts most.
    public private(set) var throughput: Double?
    /// The fewest bytes a request carried before the link cut it, if one was cut.
    public private(set) var cutAfter: Int64?

    /// Bodies shorter than this say more of the round trip than of the rate.
    public static let measurable: Int64 = 256 << 10
    /// A chunk's round trip may cost this share of its sending time.
    public static let roundTripShare = 0.05
    /// Chunks are at least this (a request's own cost) and at most this (what a cut may lose).
    public static let smallestChunk: Int64 = 1 << 20
    public static let largestChunk: Int64 = 64 << 20
    /// When nothing is known yet.
    public static let defaultChunk: Int64 = 4 << 20
    /// A link that cuts requests gets chunks of at most this share of what a cut request
    /// carried: a cut then costs at most that much again.
    public static let cutShare: Int64 = 8

    public init(roundTrip: Double? = nil, throughput: Double? = nil, cutAfter: Int64? = nil) {
        self.roundTrip = roundTrip
        self.throughput = throughput
        self.cutAfter = cutAfter
    }

    /// A request was cut after carrying `bytes`.
    public mutating func cut(after bytes: Int64) {
        guard bytes >= Self.measurable else { return }
        cutAfter = min(cutAfter ?? bytes, bytes)
    }

    /// A bodiless request was answered after `seconds`.
    public mutating func answered(after seconds: Double) {
        guard seconds.isFinite, seconds >= 0 else { return }
        roundTrip = min(roundTrip ?? seconds, seconds)
    }

    /// `bytes` of a body went out in `seconds` (its answer included, or until it was cut).
    public mutating func sent(_ bytes: Int64, in seconds: Double) {
        guard bytes >= Self.measurable, seconds.isFinite, seconds > 0 else { return }
        let rate = Double(bytes) / seconds
        throughput = throughput.map { 0.5 * $0 + 0.5 * rate } ?? rate
    }

    /// Bytes per chunk: the least whose round trip costs at most `roundTripShare` of its own
    /// sending time (so chunking costs little), since what a cut loses is at most one chunk; on
    /// a link that cut a request, at most `1/cutShare` of what that request carried (cuts that
    /// often cost more than round trips do); within `smallestChunk`…`largestChunk`, in whole
    /// 64 KiB.
    public var chunk: Int64 {
        var wanted = Double(Self.defaultChunk)
        if let roundTrip, let throughput {
            wanted = roundTrip / Self.roundTripShare * throughput
            if !wanted.isFinite { wanted = Double(Self.largestChunk) }
        }
        if let cutAfter { wanted = min(wanted, Double(cutAfter / Self.cutShare)) }
        // Both bounds are whole 64 KiB, so rounding up stays within them.
        let clamped = Int64(min(max(wanted, Double(Self.smallestChunk)), Double(Self.largestChunk)))
        let unit: Int64 = 64 << 10
        return (clamped + unit - 1) / unit * unit
    }
}
