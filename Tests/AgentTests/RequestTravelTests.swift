import Foundation
import Testing
import UploadAgent
import UploadCore
import UploadJournal
import UploadTesting

/// One request type goes from the command line over the agent's socket into the journal and
/// comes back out to be sent, unchanged: nothing is re-shaped on the way.
@Suite struct RequestTravelTests {
    /// Files queued together carry their shared settings and origin once: the agent reads back
    /// each file with its own, in order, and refuses a file that names one the request lacks.
    @Test func sharedSettingsTravelOnceAndEachFileGetsItsOwn() throws {
        let plain = TransportSettings()
        let limited = TransportSettings(rateLimit: 1 << 20, retries: 2)
        let items = (0..<6).map { n in
            EnqueueItem(request: UploadRequest(source: .file(path: "/p/\(n).png"), url: "http://127.0.0.1:9/photo", field: "photo", uploadName: "\(n).png"),
                        settings: n == 3 || n == 5 ? limited : plain, origin: n < 4 ? "send" : "watch")
        }
        let line = AgentCoding.encode(AgentRequest.enqueue(items: EnqueueBatch(items)))
        guard case .enqueue(let decoded) = try AgentCoding.decode(AgentRequest.self, from: Array(line)) else {
            Issue.record("not an enqueue request"); return
        }
        #expect(decoded.items == items)
        #expect(decoded.distinctSettings == [plain, limited])
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.components(separatedBy: "\"rateLimit\"").count - 1 == 1, "\(text)")
        // A file naming settings the request does not carry is refused whole.
        let broken = text.replacingOccurrences(of: "\"settings\":1", with: "\"settings\":7")
        #expect(broken != text)
        #expect(throws: (any Error).self) { try AgentCoding.decode(AgentRequest.self, from: Array(broken.utf8)) }
    }

    @Test func aRequestComesBackFromTheJournalAsItWasMade() throws {
        let root = TestFiles.makeTemporaryDirectory("travel")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let request = UploadRequest(
            source: .file(path: root + "/a.png"), url: "http://user:pw@127.0.0.1:9/photo?token=t", field: "image",
            uploadName: "renamed.png", formFields: [FormField(name: "album", value: "夏")],
            headers: [RequestHeader(name: "Authorization", value: "Bearer hush"), RequestHeader(name: "X-Trace", value: "1")],
            allowAnyFile: true)
        let settings = TransportSettings(rateLimit: 1 << 20, retries: 2)

        // Over the socket: the line a client writes is what the agent reads.
        let line = AgentCoding.encode(AgentRequest.enqueue(items: [EnqueueItem(request: request, settings: settings, origin: "send")]))
        guard case .enqueue(let items) = try AgentCoding.decode(AgentRequest.self, from: Array(line)) else {
            Issue.record("not an enqueue request"); return
        }
        #expect(items.map(\.request) == [request])
        // The header's value travels, but is never what a description shows.
        #expect("\(request.headers)".contains("<hidden>") && !"\(request.headers)".contains("hush"))

        // Into the journal and back as what the agent sends after a restart.
        let journal = try Journal(path: root + "/j.sqlite")
        let fingerprint = FileFingerprint(size: 10, modificationNanoseconds: 5)
        _ = try journal.add([NewUpload(request: items[0].request, fingerprint: fingerprint, settings: items[0].settings, origin: "send")], at: Date())
        let pending = try #require(try journal.recover(at: Date()).first)
        var expected = request
        expected.expectedFile = fingerprint
        // The journal gives the upload its Idempotency-Key, kept from then on.
        let key = try #require(pending.request.idempotencyKey)
        expected.idempotencyKey = key
        #expect(pending.request == expected)
        #expect(try journal.recover(at: Date()).first?.request.idempotencyKey == key)
        #expect(pending.settings == settings)
    }
}
