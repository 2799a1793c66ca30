import Foundation
import NIOCore
import UploadClient
import UploadCore

/// Runs requests through a real queue and transport and collects every event.
struct UploadRun {
    var events: [UploadEvent] = []

    static func run(
        _ requests: [UploadRequest],
        // The question whether an origin resumes gets as long as any answer: Python's servers
        // can take seconds to answer their first request on a loaded machine.
        timeouts: UploadTimeouts = UploadTimeouts(connect: .seconds(5), stall: .seconds(5), answer: .seconds(10), discovery: .seconds(10)),
        concurrency: Int = 2,
        retryPolicy: RetryPolicy = RetryPolicy(),
        tls: TLSOptions = TLSOptions(),
        resume: Bool = true,
        stripLocation: Bool = false,
        digests: Bool = true,
        uploadProtocol: UploadProtocol = .auto,
        chunkSize: Int64? = nil,
        rateLimit: Int64? = nil,
        location: Bool = false,
        onEvent: @escaping @Sendable (UploadEvent, UploadQueue) async -> Void = { _, _ in }
    ) async throws -> UploadRun {
        let transport = try HTTPUploadTransport(
            tls: tls, timeouts: timeouts, rateLimit: rateLimit, resume: resume, stripLocation: stripLocation, digests: digests,
            uploadProtocol: uploadProtocol, tusChunkSize: chunkSize, followsRedirectsElsewhere: location)
        // Waits a fiftieth of what the queue asks (1 s of backoff or Retry-After: 20 ms), not
        // nothing: a retry that follows a cut at once can find the receiver still holding the cut
        // attempt (409 "still in progress", Retry-After: 1), and five instant retries used up
        // all of a test's retries inside that moment.
        let queue = UploadQueue(
            transport: transport, concurrency: concurrency, retryPolicy: retryPolicy,
            sleep: { seconds in
                try await Task.sleep(nanoseconds: UInt64(min(seconds, 5) / 50 * 1e9))
            })
        for request in requests {
            await queue.enqueue(request, totalBytes: try? UploadPreflight.check(request))
        }
        await queue.finishWhenDrained()
        var run = UploadRun()
        for await event in queue.events {
            run.events.append(event)
            await onEvent(event, queue)
        }
        try await transport.shutdown()
        return run
    }

    /// The upload's record, folded from its events as every view folds it.
    func record(_ id: Int = 1) -> UploadRecord {
        var record = UploadRecord(id: UploadID(id), name: "", path: nil, url: "", origin: "test", fileSize: nil, createdAt: Date())
        for event in events { record.apply(event, at: Date()) }
        return record
    }

    func resumedOffsets(_ id: Int = 1) -> [Int64] {
        events.compactMap { if case .resumed(let eid, let offset, _) = $0, eid.rawValue == id { offset } else { nil } }
    }

    /// The file digests the uploads reported ("already sent"), in the order of their ids.
    func contents() -> [String] {
        events.compactMap { if case .content(let id, let sha256, _, _) = $0 { (id.rawValue, sha256) } else { nil } }
            .sorted { $0.0 < $1.0 }.map(\.1)
    }

    func outcome(_ id: Int = 1) -> UploadOutcome? {
        for case .finished(let eid, let outcome) in events where eid.rawValue == id { return outcome }
        return nil
    }

    func response(_ id: Int = 1) -> UploadResponse? {
        for case .response(let eid, let response) in events where eid.rawValue == id { return response }
        return nil
    }

    func progressTotals(_ id: Int = 1) -> [Int64] {
        events.compactMap { if case .progress(let eid, _, let total, _) = $0, eid.rawValue == id { total } else { nil } }
    }

    func expectedLength(_ id: Int = 1) -> Int64? {
        for case .started(let eid, _, _, let total) in events where eid.rawValue == id { return total }
        return nil
    }

    func attempts(_ id: Int = 1) -> Int {
        events.filter { if case .started(let eid, _, _, _) = $0 { eid.rawValue == id } else { false } }.count
    }

    func failure(_ id: Int = 1) -> UploadFailure? {
        if case .failed(let failure) = outcome(id) { return failure }
        return nil
    }

    func storedName(_ id: Int = 1) -> String? {
        guard let body = response(id)?.body,
            let json = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: String]
        else { return nil }
        return json["filename"]
    }
}

/// Reads one HTTP/1.1 request with a Content-Length body off a raw connection.
struct CapturedRequest {
    var head: String
    var body: [UInt8]

    var contentLength: Int? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
    }

    func header(_ name: String) -> String? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.drop { $0 != ":" }.dropFirst()).trimmingCharacters(in: .whitespaces) }
    }
}
