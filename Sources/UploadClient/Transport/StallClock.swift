import NIOCore

/// When a body being sent counts as stalled: one rule for both ways a request goes (the
/// direct connection's machine keeps one, AsyncHTTPClient's watchdog reads one through
/// `WriteWatch`).
///
/// A write the socket has not taken for `limit` is a stall: the server stopped reading (or the
/// link died without a word), and AsyncHTTPClient's own write timeout is cleared while the
/// socket is unwritable. For a body read from a file as fast as the socket takes it, no write
/// at all for `limit` is one too: the file's reads hang (a dead network file system). A body
/// from a pipe waits for its source and a paced one for its rate: for them only the socket's
/// side counts.
struct StallClock: Sendable, Equatable {
    /// Whether time with no write in flight counts.
    let idleCounts: Bool
    /// Since when the write in flight has waited for the socket.
    private(set) var pendingSince: NIODeadline?
    /// When the body began or its last write was taken; nil before it began and after it ended.
    private(set) var lastWrite: NIODeadline?
    private var ended = false

    init(idleCounts: Bool) {
        self.idleCounts = idleCounts
    }

    /// The body starts going out (its head is on its way).
    mutating func began(at now: NIODeadline) {
        guard lastWrite == nil, !ended else { return }
        lastWrite = now
    }

    mutating func writeStarted(at now: NIODeadline) {
        began(at: now)
        if pendingSince == nil { pendingSince = now }
    }

    mutating func writeEnded(at now: NIODeadline) {
        pendingSince = nil
        if !ended { lastWrite = now }
    }

    /// The whole body is written (or it will not go): nothing stalls it any more.
    mutating func end() {
        ended = true
        pendingSince = nil
        lastWrite = nil
    }

    /// When the body counts as stalled unless a write is taken first; nil while nothing can
    /// stall it.
    func deadline(_ limit: TimeAmount) -> NIODeadline? {
        if idleCounts, let lastWrite { return lastWrite + limit }
        return pendingSince.map { $0 + limit }
    }

    func isStalled(at now: NIODeadline, limit: TimeAmount) -> Bool {
        deadline(limit).map { now >= $0 } ?? false
    }
}
