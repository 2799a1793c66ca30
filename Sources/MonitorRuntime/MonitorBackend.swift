import Foundation
import Monitor
import NIOConcurrencyHelpers
import UploadClient
import UploadCore

/// Where the monitor's uploads run: in this process (`--no-agent`, the demo) or in the
/// background agent. The run loop only posts effects to it and receives events from it.
public protocol MonitorBackend: Sendable {
    /// Begins delivering upload events to `post`, stamped by `now`.
    func start(post: @escaping @Sendable (MonitorEvent) -> Void, now: @escaping @Sendable () -> EventTime)
    func enqueue(_ items: [QueueItem])
    func cancel(_ id: UploadID)
    func retry(_ id: UploadID)
    /// Called once after the monitor closed, with its last state.
    func finish(_ state: MonitorState) async
    /// Files queued in the monitor that are still being handed to where they upload (the
    /// agent): `finish` waits for them, so none is lost by quitting.
    var filesBeingHandedOver: Int { get }
    /// Files queued from now on go to `destination` (`D`); those queued go on as they are.
    func switchDestination(_ destination: MonitorDestination)
}

/// Where the monitor's uploads go: what each request shares and the settings it is sent with
/// (a saved destination resolved as the command line would be).
public struct MonitorDestination: Sendable {
    public var uploads: MonitorUploads
    public var settings: TransportSettings

    public init(uploads: MonitorUploads, settings: TransportSettings) {
        self.uploads = uploads
        self.settings = settings
    }
}

extension MonitorBackend {
    public var filesBeingHandedOver: Int { 0 }
}

/// Uploads in this process: they end with the monitor (quitting asks first).
public final class LocalBackend: MonitorBackend {
    public let queue: UploadQueue
    public let transport: HTTPUploadTransport
    /// Where the files queued now go (`switchDestination` changes it).
    private let current: NIOLockedValueBox<MonitorDestination>
    public var uploads: MonitorUploads { current.withLockedValue { $0.uploads } }
    private let outlet = MonitorOutlet()
    /// The settings `transport` was made with.
    private let settings: TransportSettings
    /// Makes a transport for other settings (a file that asks otherwise with `L`, another
    /// destination), once each.
    private let make: @Sendable (TransportSettings) throws -> HTTPUploadTransport
    private let others = NIOLockedValueBox<[TransportSettings: HTTPUploadTransport]>([:])

    public init(
        queue: UploadQueue, transport: HTTPUploadTransport, uploads: MonitorUploads, settings: TransportSettings,
        make: @escaping @Sendable (TransportSettings) throws -> HTTPUploadTransport = { _ in throw UploadInputError.badProxy("", "no other transport") }
    ) {
        self.queue = queue
        self.transport = transport
        self.settings = settings
        current = NIOLockedValueBox(MonitorDestination(uploads: uploads, settings: settings))
        self.make = make
    }

    /// The transport for an item: the session's, or one made for the settings it needs.
    private func transport(for item: QueueItem, _ destination: MonitorDestination) throws -> HTTPUploadTransport? {
        var wanted = destination.settings
        wanted.stripLocation = item.stripLocation
        if let conversion = item.conversion { wanted.conversion = conversion }
        guard wanted != settings else { return nil }
        return try others.withLockedValue { others in
            if let made = others[wanted] { return made }
            let made = try make(wanted)
            others[wanted] = made
            return made
        }
    }

    public func switchDestination(_ destination: MonitorDestination) {
        current.withLockedValue { $0 = destination }
    }

    public func start(post: @escaping @Sendable (MonitorEvent) -> Void, now: @escaping @Sendable () -> EventTime) {
        outlet.start(post: post, now: now)
        Task { [queue] in
            for await event in queue.events { post(.upload(event, now())) }
        }
    }

    public func enqueue(_ items: [QueueItem]) {
        guard outlet.isStarted else { return }
        let destination = current.withLockedValue { $0 }
        Task { [queue, outlet] in
            for item in items {
                do {
                    let (request, size) = try destination.uploads.request(for: item)
                    let own = try self.transport(for: item, destination)
                    await queue.enqueue(
                        request, totalBytes: size, origin: "monitor", fileModified: item.modified, fileChanged: item.changed,
                        withoutLocation: item.stripLocation, transport: own)
                } catch let error as UploadInputError {
                    outlet.post(.enqueueRefused(name: item.uploadName, reason: error.description, outlet.now()))
                } catch {
                    outlet.post(.enqueueRefused(name: item.uploadName, reason: "\(error)", outlet.now()))
                }
            }
        }
    }

    public func cancel(_ id: UploadID) { Task { [queue] in await queue.cancel(id) } }
    public func retry(_ id: UploadID) { Task { [queue] in await queue.retry(id) } }

    public func finish(_ state: MonitorState) async {
        for id in state.queue.rows where state.queue.state(id)?.outcome == nil {
            await queue.cancel(id)
        }
        try? await transport.shutdown()
        for other in others.withLockedValue({ Array($0.values) }) { try? await other.shutdown() }
    }
}

/// What every upload the monitor queues shares (endpoint, form field, extra fields and
/// headers); a picked file becomes a request, refused before it is queued if it cannot be sent.
public struct MonitorUploads: Sendable {
    public var url: String
    public var field: String
    public var formFields: [FormField]
    public var headers: [RequestHeader]
    public var allowAnyFile: Bool

    public init(url: String, field: String, formFields: [FormField], headers: [RequestHeader], allowAnyFile: Bool) {
        self.url = url
        self.field = field
        self.formFields = formFields
        self.headers = headers
        self.allowAnyFile = allowAnyFile
    }

    /// The request for `item` and its file's size, or why it cannot be sent.
    public func request(for item: QueueItem) throws(UploadInputError) -> (UploadRequest, Int64?) {
        let request = unchecked(item)
        return (request, try UploadPreflight.check(request))
    }

    /// The request for `item`, its file not looked at (the agent checks each file as it takes
    /// it, and says which it refused and why).
    public func unchecked(_ item: QueueItem) -> UploadRequest {
        UploadRequest(
            source: .file(path: item.path), url: url, field: field, uploadName: item.uploadName,
            formFields: formFields, headers: headers, allowAnyFile: allowAnyFile
        )
    }
}
