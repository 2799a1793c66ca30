import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import AsyncHTTPClient
import UploadCore

/// Streams `head` + file + `tail` into an AsyncHTTPClient body writer with backpressure:
/// the next chunk is written only when the previous write's future has completed, and at most
/// one read runs ahead of the write in flight, so memory stays at about two chunks whatever
/// the file size.
///
/// A file that ends early or grows past its size at the start fails the body with a
/// `.fileError`, so the server never receives bytes that disagree with `Content-Length`.
struct BodyStreamer: Sendable {
    let layout: MultipartLayout
    let source: FileSource
    /// Bytes of the first read when the source is a pipe (consumed for sniffing).
    let pipePrefix: ByteBuffer?
    /// The whole file when it fits in one chunk, read when the attempt began
    /// (`FileSource.readWhole`): the body then goes out in one write, with no further reads.
    let preloaded: ByteBuffer?
    let chunkSize: Int
    let threadPool: NIOThreadPool
    let eventLoop: EventLoop
    let watch: WriteWatch
    /// Bytes per second at most (`--limit-rate`), or `nil` for as fast as the socket takes them.
    let rateLimit: Int64?
    /// The total rate this upload shares with others (the agent's limit), or `nil`.
    var sharedLimit: SharedRateLimit? = nil
    /// Where in the body to begin (a resumed upload sends only the rest); needs a known file size.
    var startOffset: Int64 = 0
    /// The SHA-256 of the whole body, computed in the pass that reads the file to send it: each
    /// chunk is hashed on the reading thread right after it is read (the event loop only sends),
    /// the bytes before `startOffset` read once more for it first. Nil: no digest.
    var digest: BodyDigest? = nil
    /// Where in the body to stop (a tus chunk), or nil for its end; needs a known file size.
    var endOffset: Int64? = nil
    let pacer = Pacer()

    /// Bytes this body sends: from `startOffset` to `endOffset` or the end.
    var length: Int64? { (endOffset ?? layout.contentLength).map { $0 - startOffset } }

    /// The body for a direct connection, whose machine keeps its own `StallClock` by the same rule.
    var directBody: DirectBody {
        .stream(length: length ?? 0, idleCounts: watch.idleCounts, produce: { self.stream(into: $0) })
    }

    func makeBody() -> HTTPClient.Body {
        .stream(contentLength: length) { writer in
            self.stream(into: writer)
        }
    }

    func stream(into writer: HTTPClient.Body.StreamWriter) -> EventLoopFuture<Void> {
        let allocator = ByteBufferAllocator()
        if let preloaded {
            // One write instead of three, and no trip to the thread pool: thousands of small
            // photos pay for each of those.
            var body = allocator.buffer(capacity: layout.head.count + preloaded.readableBytes + layout.tail.count)
            body.writeBytes(layout.head)
            body.writeImmutableBuffer(preloaded)
            body.writeBytes(layout.tail)
            if digest?.bodyCount == 0 { digest?.updateWhole(layout, file: preloaded) }
            let end = Int(endOffset ?? Int64(body.readableBytes))
            return write(writer, body.getSlice(at: Int(startOffset), length: end - Int(startOffset)) ?? body)
        }
        if startOffset > 0 || endOffset != nil, let size = layout.fileSize {
            guard let digest else { return resume(writer, size: size, allocator: allocator) }
            let (layout, source, from) = (self.layout, self.source, self.startOffset)
            return threadPool.runIfActive(eventLoop: eventLoop) { try digest.hashPrefix(of: layout, source, upTo: from) }
                .flatMap { self.resume(writer, size: size, allocator: allocator) }
        }
        digest?.updateFraming(layout.head)
        let head = write(writer, allocator.buffer(bytes: layout.head))
        let body: EventLoopFuture<Void>
        if let size = layout.fileSize {
            body = head.flatMap { self.pumpFile(writer, offset: 0, size: size, pending: self.readAhead(offset: 0, size: size)) }
                .flatMap { self.verifyUnchanged(size: size) }
        } else {
            body = head.flatMap {
                let first = self.pipePrefix.map { self.eventLoop.makeSucceededFuture($0) } ?? self.readPipe()
                return self.pumpPipe(writer, pending: first)
            }
        }
        return body.flatMap { self.writeTail(writer, from: 0, allocator: allocator) }
    }

    private func writeTail(_ writer: HTTPClient.Body.StreamWriter, from index: Int, allocator: ByteBufferAllocator) -> EventLoopFuture<Void> {
        let rest = layout.tail[index...]
        digest?.updateFraming(Array(rest))
        return write(writer, allocator.buffer(bytes: rest))
    }

    /// The body from `startOffset` to `endOffset` (or the end): the part of the head in it, the
    /// file's bytes in it, then the part of the tail; the file is checked for growth when the
    /// range reaches its end (a chunk that stops inside it leaves that to a later one).
    private func resume(_ writer: HTTPClient.Body.StreamWriter, size: Int64, allocator: ByteBufferAllocator) -> EventLoopFuture<Void> {
        let head = Int64(layout.head.count)
        let tail = Int64(layout.tail.count)
        let end = min(endOffset ?? (head + size + tail), head + size + tail)
        var done = eventLoop.makeSucceededVoidFuture()
        if startOffset < head, end > startOffset {
            let part = Array(layout.head[Int(startOffset)..<Int(min(end, head))])
            digest?.updateFraming(part)
            done = write(writer, allocator.buffer(bytes: part))
        }
        let fileFrom = max(startOffset - head, 0)
        let fileEnd = min(max(end - head, 0), size)
        if startOffset < head + size, end > head, fileFrom <= fileEnd {
            done = done.flatMap { self.pumpFile(writer, offset: fileFrom, size: fileEnd, pending: self.readAhead(offset: fileFrom, size: fileEnd)) }
            if fileEnd == size { done = done.flatMap { self.verifyUnchanged(size: size) } }
        }
        let tailFrom = max(startOffset - head - size, 0)
        let tailEnd = end - head - size
        if tailEnd > tailFrom {
            let part = Array(layout.tail[Int(tailFrom)..<Int(tailEnd)])
            done = done.flatMap {
                self.digest?.updateFraming(part)
                return self.write(writer, allocator.buffer(bytes: part))
            }
        }
        return done
    }

    /// Every write goes through here so the stall watchdog knows how long it has been pending.
    private func write(_ writer: HTTPClient.Body.StreamWriter, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        // The event loop's clock, which its timers (the watchdog's, the pacing) run on.
        let loop = eventLoop
        let send: @Sendable () -> EventLoopFuture<Void> = {
            self.watch.writeStarted(at: loop.now)
            return writer.write(.byteBuffer(buffer)).always { _ in self.watch.writeEnded(at: loop.now) }
        }
        let count = Int64(buffer.readableBytes)
        let now = loop.now
        let own = rateLimit.flatMap { pacer.delay(before: count, rate: $0, now: now) }
        let shared = sharedLimit?.delay(before: count, now: now)
        guard let delay = [own, shared].compactMap({ $0 }).max() else { return send() }
        return eventLoop.scheduleTask(in: delay) {}.futureResult.flatMap { send() }
    }

    private func readAhead(offset: Int64, size: Int64) -> EventLoopFuture<ByteBuffer>? {
        guard offset < size else { return nil }
        let count = Int(min(Int64(chunkSize), size - offset))
        let source = self.source
        let digest = self.digest
        return threadPool.runIfActive(eventLoop: eventLoop) {
            let chunk = try source.read(offset: offset, count: count, allocator: ByteBufferAllocator())
            // Reads go one after another, so the chunks are hashed in the body's order.
            digest?.updateFile(chunk)
            return chunk
        }
    }

    private func pumpFile(
        _ writer: HTTPClient.Body.StreamWriter, offset: Int64, size: Int64, pending: EventLoopFuture<ByteBuffer>?
    ) -> EventLoopFuture<Void> {
        guard let pending else { return eventLoop.makeSucceededVoidFuture() }
        return pending.flatMap { chunk in
            let expected = Int(min(Int64(self.chunkSize), size - offset))
            guard chunk.readableBytes == expected else {
                return self.eventLoop.makeFailedFuture(
                    self.source.sizeChanged(expected: self.layout.fileSize ?? size, endedAt: offset + Int64(chunk.readableBytes)))
            }
            let next = offset + Int64(expected)
            let nextRead = self.readAhead(offset: next, size: size)
            return self.write(writer, chunk).flatMap {
                self.pumpFile(writer, offset: next, size: size, pending: nextRead)
            }
        }
    }

    /// After the last expected byte: the file must not have grown, or the body would lie.
    private func verifyUnchanged(size: Int64) -> EventLoopFuture<Void> {
        let source = self.source
        return threadPool.runIfActive(eventLoop: eventLoop) {
            let extra = try source.read(offset: size, count: 1, allocator: ByteBufferAllocator())
            // The file itself against its size when opened (what is sent may be an edited view of another length).
            let opened = source.openedAs?.size
            if extra.readableBytes > 0 || (opened != nil && source.fingerprint()?.size != opened) {
                throw source.sizeChanged(expected: size, endedAt: nil)
            }
        }
    }

    private func readPipe() -> EventLoopFuture<ByteBuffer> {
        let source = self.source
        let count = chunkSize
        return threadPool.runIfActive(eventLoop: eventLoop) {
            try source.read(offset: 0, count: count, allocator: ByteBufferAllocator())
        }
    }

    private func pumpPipe(_ writer: HTTPClient.Body.StreamWriter, pending: EventLoopFuture<ByteBuffer>) -> EventLoopFuture<Void> {
        pending.flatMap { chunk in
            guard chunk.readableBytes > 0 else { return self.eventLoop.makeSucceededVoidFuture() }
            let nextRead = self.readPipe()
            return self.write(writer, chunk).flatMap { self.pumpPipe(writer, pending: nextRead) }
        }
    }
}

/// The body's `StallClock` behind a lock, for AsyncHTTPClient's path: the body streamer tells
/// it of each write, the delegate of the body's end, and the watchdog asks it.
final class WriteWatch: Sendable {
    private let clock: NIOLockedValueBox<StallClock>
    let idleCounts: Bool

    /// `idleCounts`: a body read from a file unpaced (see `StallClock`).
    init(idleCounts: Bool = false) {
        clock = NIOLockedValueBox(StallClock(idleCounts: idleCounts))
        self.idleCounts = idleCounts
    }

    func writeStarted(at now: NIODeadline) { clock.withLockedValue { $0.writeStarted(at: now) } }
    func writeEnded(at now: NIODeadline) { clock.withLockedValue { $0.writeEnded(at: now) } }
    func bodyEnded() { clock.withLockedValue { $0.end() } }

    func isStalled(limit: TimeAmount, now: NIODeadline) -> Bool {
        clock.withLockedValue { $0.isStalled(at: now, limit: limit) }
    }

    func deadline(limit: TimeAmount) -> NIODeadline? {
        clock.withLockedValue { $0.deadline(limit) }
    }
}

/// Asks a `WriteWatch` when its deadline comes (not every so often): a stall is noticed when
/// the rule says, and an upload that moves costs one timer per `limit`, not per write. While
/// nothing can stall the body (before its first write, a paced body between writes) it asks
/// again after `limit`, which is before any write begun since could run out.
final class StallWatchdog: Sendable {
    private let scheduled = NIOLockedValueBox<(task: Scheduled<Void>?, cancelled: Bool)>((nil, false))

    init(watch: WriteWatch, limit: TimeAmount, eventLoop: EventLoop, onStall: @escaping @Sendable () -> Void) {
        check(watch, limit, eventLoop, at: eventLoop.now + limit, onStall)
    }

    private func check(
        _ watch: WriteWatch, _ limit: TimeAmount, _ eventLoop: EventLoop, at when: NIODeadline,
        _ onStall: @escaping @Sendable () -> Void
    ) {
        scheduled.withLockedValue { state in
            guard !state.cancelled else { return }
            state.task = eventLoop.scheduleTask(deadline: when) { [self] in
                let now = eventLoop.now
                if watch.isStalled(limit: limit, now: now) {
                    onStall()
                } else {
                    check(watch, limit, eventLoop, at: max(watch.deadline(limit: limit) ?? now + limit, now + .milliseconds(1)), onStall)
                }
            }
        }
    }

    func cancel() {
        scheduled.withLockedValue { state in
            state.cancelled = true
            state.task?.cancel()
        }
    }
}

/// An upload's own `--limit-rate`: its writes spaced by `RateSchedule`'s rule.
final class Pacer: Sendable {
    private let schedule = NIOLockedValueBox(RateSchedule())

    func delay(before count: Int64, rate: Int64, now: NIODeadline) -> TimeAmount? {
        schedule.withLockedValue { $0.reserve(count, rate: rate, now: now) }
    }
}
