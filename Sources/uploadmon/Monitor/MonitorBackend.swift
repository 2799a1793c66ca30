import Foundation
import Monitor
import NIOConcurrencyHelpers
import UploadClient
import UploadCore

/// Where the monitor's uploads run: in this process (`--no-agent`, the demo) or in the
/// background agent. The run loop only posts effects to it and receives events from it.
protocol MonitorBackend: Sendable {
    /// Begins delivering upload events to `post`, stamped by `now`.
    func start(post: @escaping @Sendable (MonitorEvent) -> Void, now: @escaping @Sendable () -> EventTime)
    func enqueue(_ items: [QueueItem])
    func cancel(_ id: UploadID)
    func retry(_ id: UploadID)
    /// Called once after the monitor closed, with its last state.
    func finish(_ state: MonitorState) async
}

/// Uploads in this process: they end with the monitor (quitting asks first).
final class LocalBackend: MonitorBackend {
    let queue: UploadQueue
    let transport: HTTPUploadTransport
    let makeRequest: @Sendable (QueueItem) throws(UploadInputError) -> (UploadRequest, Int64?)
    private let context = NIOLockedValueBox<(post: @Sendable (MonitorEvent) -> Void, now: @Sendable () -> EventTime)?>(nil)

    init(queue: UploadQueue, transport: HTTPUploadTransport, makeRequest: @escaping @Sendable (QueueItem) throws(UploadInputError) -> (UploadRequest, Int64?)) {
        self.queue = queue
        self.transport = transport
        self.makeRequest = makeRequest
    }

    func start(post: @escaping @Sendable (MonitorEvent) -> Void, now: @escaping @Sendable () -> EventTime) {
        context.withLockedValue { $0 = (post, now) }
        Task { [queue] in
            for await event in queue.events { post(.upload(event, now())) }
        }
    }

    func enqueue(_ items: [QueueItem]) {
        guard let (post, now) = context.withLockedValue({ $0 }) else { return }
        Task { [queue, makeRequest] in
            for item in items {
                do throws(UploadInputError) {
                    let (request, size) = try makeRequest(item)
                    await queue.enqueue(request, totalBytes: size)
                } catch {
                    post(.enqueueRefused(name: item.uploadName, reason: error.description, now()))
                }
            }
        }
    }

    func cancel(_ id: UploadID) { Task { [queue] in await queue.cancel(id) } }
    func retry(_ id: UploadID) { Task { [queue] in await queue.retry(id) } }

    func finish(_ state: MonitorState) async {
        for id in state.queue.rows where state.queue.state(id)?.outcome == nil {
            await queue.cancel(id)
        }
        try? await transport.shutdown()
    }
}
