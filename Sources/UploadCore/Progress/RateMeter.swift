import Foundation

/// A transfer rate smoothed with an exponentially weighted moving average, so displayed rates
/// and ETAs do not jump with every burst of sent-byte callbacks.
///
/// Samples are folded in per elapsed time: a sample covering `dt` seconds weighs
/// `1 - exp(-dt / halfLife * ln 2)`, so the smoothing is the same however often callbacks arrive.
public struct RateMeter: Sendable, Equatable {
    public let halfLife: Double
    public private(set) var bytesPerSecond: Double?
    private var lastTime: Double?
    private var lastBytes: Int64 = 0
    private var pendingBytes: Int64 = 0

    /// Samples closer together than this are accumulated rather than folded in one by one.
    static let minimumInterval = 0.05

    public init(halfLife: Double = 2.0) {
        self.halfLife = halfLife
    }

    /// Records that `totalBytes` had been sent by `time` (seconds on any monotonic clock).
    public mutating func record(totalBytes: Int64, at time: Double) {
        guard let last = lastTime else {
            lastTime = time
            lastBytes = totalBytes
            return
        }
        let dt = time - last
        guard dt >= Self.minimumInterval else { return }
        let instant = Double(totalBytes - lastBytes) / dt
        if let current = bytesPerSecond {
            let weight = 1 - exp(-dt / halfLife * M_LN2)
            bytesPerSecond = current + weight * (instant - current)
        } else {
            bytesPerSecond = instant
        }
        lastTime = time
        lastBytes = totalBytes
    }

    /// Seconds left for `remaining` bytes at the smoothed rate; `nil` until a rate is known.
    public func eta(remainingBytes remaining: Int64) -> Double? {
        guard let rate = bytesPerSecond, rate > 0 else { return nil }
        return Double(max(remaining, 0)) / rate
    }
}
