import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import UploadCore
import UploadTesting
@testable import Receiver

/// The receiver's endpoint in process, wired as `serve` wires it (`ReceiverServer.makeEndpoint`):
/// each request goes straight to `UploadEndpoint.respond` with a body the driver feeds in
/// pieces, and may be cut part-way as a dropped connection would be. No socket and no gate:
/// what the gate decides from a head alone is tested on its own (`GateMachineTests`,
/// `UploadGateTests`); what the gate tells the endpoint (the client) the driver says.
final class EndpointDriver: Sendable {
    struct Answer: CustomStringConvertible {
        let status: Int
        let fields: HTTPFields
        let body: String

        subscript(_ name: String) -> String? { HTTPField.Name(name).flatMap { fields[$0] } }
        var description: String { "\(status) \(fields) \(body)" }
    }

    /// A body cut off part-way, as a connection that dropped.
    struct Cut: Error {}

    static let authority = "uploads.test"
    let endpoint: UploadEndpoint
    let root: String
    var directory: String { endpoint.configuration.directory }
    var url: String { "http://\(Self.authority)\(endpoint.configuration.path)" }
    private let lines: NIOLockedValueBox<[RequestLogLine]>
    var logLines: [RequestLogLine] { lines.withLockedValue { $0 } }

    init(
        maxSize: Int64 = 1 << 30, resumableMaxAge: Duration = .seconds(3600), resumableIdleAge: Duration = .seconds(3600),
        resumableMaxAppend: Int64? = nil, reusing earlier: String? = nil, clock: HouseClock = .system
    ) throws {
        root = earlier ?? TestFiles.makeTemporaryDirectory("endpoint")
        let configuration = ReceiverConfiguration(
            host: "127.0.0.1", port: 0, directory: root + "/uploads", maxSize: maxSize, resumableMaxAge: resumableMaxAge,
            resumableIdleAge: resumableIdleAge, resumableMaxAppend: resumableMaxAppend)
        let lines = NIOLockedValueBox<[RequestLogLine]>([])
        self.lines = lines
        endpoint = try ReceiverServer.makeEndpoint(
            configuration, connections: ConnectionRegistry(limit: 64),
            log: { line in lines.withLockedValue { $0.append(line) } }, clock: clock)
    }

    /// Every name in the upload folder but the receiver's own hidden ones.
    func storedNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// Sends one request: `target` is a path or an absolute URL (a `Location` given back);
    /// `body` goes with a `Content-Length` unless `chunked`, in pieces of `piece` bytes, and
    /// stops with `Cut` after `cutAfter` bytes.
    func send(
        _ method: HTTPRequest.Method, _ target: String? = nil, _ fields: [String: String] = [:], body: [UInt8] = [],
        chunked: Bool = false, piece: Int = 64 << 10, cutAfter: Int? = nil, client: String = "127.0.0.1"
    ) async throws -> Answer {
        var head = HTTPRequest(method: method, scheme: "http", authority: Self.authority, path: Self.path(of: target ?? url))
        for (name, value) in fields { head.headerFields[HTTPField.Name(name)!] = value }
        if !chunked, method != .head, method != .get || !body.isEmpty { head.headerFields[.contentLength] = String(body.count) }
        let channel = NIOAsyncTestingChannel()
        let requests = ConnectionRequests(id: ConnectionRegistry.id(of: channel), client: client)
        let (stream, source) = RequestBody.makeStream()
        _ = endpoint.connections.register(requests) { why in source.finish(why) }
        defer { endpoint.connections.unregister(requests.id) }
        requests.forwarded(announcing: nil)
        let feeder = Task {
            var at = 0
            let end = min(body.count, cutAfter ?? body.count)
            while at < end {
                let next = min(at + piece, end)
                await source.yield(ByteBuffer(bytes: body[at..<next]))
                at = next
            }
            if cutAfter != nil { source.finish(Cut()) } else { source.finish() }
        }
        defer { feeder.cancel() }
        let context = ReceiverContext(source: .init(channel: channel, logger: Logger(label: "endpoint-driver")))
        let response = try await endpoint.respond(to: Request(head: head, body: stream), context: context)
        let collected = Collected()
        try await response.body.write(collected)
        return Answer(status: Int(response.status.code), fields: response.headers, body: collected.text)
    }

    static func path(of target: String) -> String {
        guard let url = URL(string: target), url.scheme != nil else { return target }
        return url.path + (url.query.map { "?" + $0 } ?? "")
    }

    /// The bytes kept so far of the upload at `location`: the stream up to the file's bytes and from there.
    func keptSize(_ location: String) -> Int64 {
        let base = directory + "/.uploadmon-resumable/" + (location.split(separator: "/").last.map(String.init) ?? "")
        guard let head = TestFiles.size(of: base + ".part") else { return -1 }
        return head + (TestFiles.size(of: base + ".body") ?? 0)
    }

    private final class Collected: ResponseBodyWriter, @unchecked Sendable {
        var buffer = ByteBuffer()
        var text: String { String(buffer: buffer) }

        func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            self.buffer.writeBuffer(&buffer)
        }

        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}
