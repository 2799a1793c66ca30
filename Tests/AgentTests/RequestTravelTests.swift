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
            EnqueueItem(
                request: UploadRequest(source: .file(path: "/p/\(n).png"), url: "http://127.0.0.1:9/photo", field: "photo", uploadName: "\(n).png"),
                settings: n == 3 || n == 5 ? limited : plain, origin: n < 4 ? "send" : "watch")
        }
        let line = AgentCoding.encode(AgentRequest.enqueue(items: EnqueueBatch(items)))
        guard case .enqueue(let decoded) = try AgentCoding.decode(AgentRequest.self, from: Array(line)) else {
            Issue.record("not an enqueue request")
            return
        }
        #expect(decoded.items == items)
        #expect(decoded.distinctSettings == [plain, limited])
        let text = String(decoding: line, as: UTF8.self)
        #expect(text.components(separatedBy: "\"rateLimit\"").count - 1 == 1, "\(text)")
        // The request's shape (endpoint, field) travels once too.
        #expect(text.components(separatedBy: "127.0.0.1:9").count - 1 == 1, "\(text)")
        // A file naming settings or a shape the request does not carry is refused whole.
        for (from, to) in [(#"[0,1,0,"/p/3.png""#, #"[0,7,0,"/p/3.png""#), (#"[0,1,0,"/p/3.png""#, #"[2,1,0,"/p/3.png""#)] {
            let broken = text.replacingOccurrences(of: from, with: to)
            #expect(broken != text, "\(text)")
            #expect(throws: (any Error).self) { try AgentCoding.decode(AgentRequest.self, from: Array(broken.utf8)) }
        }
    }

    /// What each file has of its own (path or standard input, name, the file as it was, its
    /// Idempotency-Key, where a resumable upload got to) comes back over whichever shape it
    /// shares; files of different shapes keep theirs.
    @Test func eachFileKeepsItsOwnFieldsOverItsShape() throws {
        let file = FileFingerprint(size: 2048, modificationNanoseconds: 1_700_000_000_123_456_789, changeNanoseconds: nil)
        var resumed = UploadRequest(
            source: .file(path: "/p/big.mov"), url: "https://up.example/photo", uploadName: "big.mov",
            expectedFile: FileFingerprint(size: 1 << 30, modificationNanoseconds: -5, changeNanoseconds: 7),
            idempotencyKey: "k-1")
        resumed.resume = .tus(uploadURL: "https://up.example/files/abc", bodyLength: 1 << 30, file: resumed.expectedFile!, offset: 12345)
        var other = UploadRequest(
            source: .file(path: "/p/tab\there\n.png"), url: "https://other.example/upload?x=1", field: "image",
            uploadName: "ü.png", formFields: [FormField(name: "album", value: "夏")],
            headers: [RequestHeader(name: "Authorization", value: "Bearer hush")], allowAnyFile: true)
        other.uploadURL = "https://other.example/files/given"
        let requests = [
            UploadRequest(source: .file(path: "/p/a.png"), url: "https://up.example/photo", uploadName: "a.png", expectedFile: file),
            UploadRequest(source: .standardInput, url: "https://up.example/photo", uploadName: "stdin"),
            resumed,
            other,
            UploadRequest(source: .file(path: "/p/b.png"), url: "https://up.example/photo", uploadName: "renamed.png", idempotencyKey: "k-2"),
        ]
        let items = requests.map { EnqueueItem(request: $0, settings: TransportSettings(), origin: "send") }
        let line = AgentCoding.encode(AgentRequest.enqueue(items: EnqueueBatch(items, brief: true)))
        guard case .enqueue(let decoded) = try AgentCoding.decode(AgentRequest.self, from: Array(line)) else {
            Issue.record("not an enqueue request")
            return
        }
        #expect(decoded.items == items)
        #expect(decoded.brief)
    }

    /// The brief answer for each file, `[id, name, url, path]`, reads back as it was.
    @Test func briefAnswersTravelAsShortArrays() throws {
        var record = UploadRecord(
            id: UploadID(42), name: "a b.png", path: "/p/a b.png", url: "https://up.example/photo", origin: "send",
            fileSize: 1, createdAt: Date(timeIntervalSince1970: 0))
        let fromFile = QueuedUpload(record)
        record.path = nil
        let fromStandardInput = QueuedUpload(record)
        let reply = AgentMessage.reply(
            id: 3,
            reply: .enqueued(results: [
                .accepted(fromFile), .accepted(fromStandardInput), .refused(path: "/p/x.txt", reason: "not an image"),
            ]))
        let line = AgentCoding.encode(reply)
        #expect(
            String(decoding: line, as: UTF8.self).contains(#"[42,"a b.png","https://up.example/photo","/p/a b.png"]"#),
            "\(String(decoding: line, as: UTF8.self))")
        guard case .reply(3, .enqueued(let results)) = try AgentCoding.decode(AgentMessage.self, from: Array(line)) else {
            Issue.record("not the reply")
            return
        }
        #expect(results == [.accepted(fromFile), .accepted(fromStandardInput), .refused(path: "/p/x.txt", reason: "not an image")])
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
            Issue.record("not an enqueue request")
            return
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
