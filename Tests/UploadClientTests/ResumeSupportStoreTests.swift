import Foundation
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting
import UploadProtocols

/// Whether an origin resumes uploads, remembered across processes in one file.
@Suite struct ResumeSupportStoreTests {
    let path = NSTemporaryDirectory() + "uploadmon-support-\(UUID().uuidString).json"
    let origin = "https://upload.example.com:443"

    @Test func answersOutliveTheProcessForADayOrAnHour() {
        defer { unlink(path) }
        let store = ResumeSupportStore(path: path)
        store.remember(origin, .supported(version: 8), now: 1000)
        // Another process reads the same file.
        let other = ResumeSupportStore(path: path)
        #expect(other.lookup(origin, now: 1000 + 3600) == .supported(version: 8))
        #expect(other.lookup(origin, now: 1000 + ResumeSupportStore.positiveAge) == nil, "a day later: asked again")
        other.remember("http://plain.example:80", .unsupported, now: 1000)
        #expect(store.lookup("http://plain.example:80", now: 1000 + 60) == .unsupported)
        #expect(store.lookup("http://plain.example:80", now: 1000 + ResumeSupportStore.negativeAge) == nil, "an hour later: asked again")
        store.remember(origin, .unknown, now: 2000)
        #expect(store.lookup(origin, now: 2000) == .supported(version: 8), "no answer changes nothing")
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
    }

    /// A tus origin is remembered with what it offers; a file written before tus reads as before.
    @Test func aTusOriginIsRememberedWithWhatItOffers() throws {
        defer { unlink(path) }
        let offered = TusCapabilities(extensions: ["creation", "termination"], maxSize: 1 << 30, checksumAlgorithms: ["sha1"])
        ResumeSupportStore(path: path).remember(origin, .tus(offered), now: 1000)
        #expect(ResumeSupportStore(path: path).lookup(origin, now: 1000 + 3600) == .tus(offered))
        #expect(ResumeSupportStore(path: path).lookup(origin, now: 1000 + ResumeSupportStore.positiveAge) == nil)
        try Data(#"{"https://upload.example.com:443":{"version":8,"checkedAt":1000}}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(ResumeSupportStore(path: path).lookup(origin, now: 1001) == .supported(version: 8))
    }

    /// An origin that answered with a digest is known to verify for a day, by every process,
    /// without its resume answer changing (nor made up, for an origin never asked).
    @Test func anOriginThatVerifiesIsRememberedBesideItsResumeAnswer() {
        defer { unlink(path) }
        let store = ResumeSupportStore(path: path)
        store.remember(origin, .supported(version: 8), now: 1000)
        let time = ManualClock(wall: Date(timeIntervalSince1970: 1000))
        let support = ResumeSupport(store: store, clock: time.clock)
        #expect(!support.verifies(origin))
        support.noteVerifies(origin)
        time.advance(by: 3600)
        let other = ResumeSupport(store: ResumeSupportStore(path: path), clock: time.clock)
        #expect(other.verifies(origin))
        #expect(store.lookup(origin, now: 1000 + 3600) == .supported(version: 8))
        time.advance(by: ResumeSupportStore.positiveAge - 3600)
        #expect(!ResumeSupport(store: store, clock: time.clock).verifies(origin), "a day later: learnt again")
        // Known to verify, never asked whether it resumes: no resume answer is made up.
        let small = "https://photos.example:8443"
        store.rememberVerifies(small, now: 5000)
        #expect(store.verifies(small, now: 5001))
        #expect(store.lookup(small, now: 5001) == nil)
        // Asked later, the answer keeps the digest knowledge.
        store.remember(small, .unsupported, now: 5002)
        #expect(store.verifies(small, now: 5003) && store.lookup(small, now: 5003) == .unsupported)
        #expect(!store.verifies("http://127.0.0.1:3000", now: 5003))
        store.rememberVerifies("http://127.0.0.1:3000", now: 5003)
        #expect(!store.verifies("http://127.0.0.1:3000", now: 5004), "loopback is never remembered")
    }

    /// A process reads what the file says of an origin once, not before every upload: what it
    /// read stays its answer though the file goes (a thousand uploads read it once).
    @Test func theFileIsReadOncePerOriginAndProcess() async throws {
        defer { unlink(path) }
        let now = Date().timeIntervalSince1970
        let clock = HouseClock.stopped(at: Date(timeIntervalSince1970: now))
        let store = ResumeSupportStore(path: path)
        store.remember(origin, .supported(version: 8), now: now)
        store.rememberVerifies(origin, now: now)
        let plain = "https://plain.example.com:443"
        let support = ResumeSupport(store: store, clock: clock)
        #expect(support.verifies(origin))
        #expect(await support.known(origin) == .supported(version: 8))
        #expect(!support.verifies(plain))
        #expect(await support.known(plain) == nil)
        // Another process learns of the plain origin, and the file goes away.
        ResumeSupportStore(path: path).rememberVerifies(plain, now: now)
        #expect(ResumeSupport(store: store, clock: clock).verifies(plain), "a new process reads it")
        unlink(path)
        #expect(support.verifies(origin) && !support.verifies(plain))
        #expect(await support.known(origin) == .supported(version: 8))
        #expect(await support.known(plain) == nil)
    }

    @Test func loopbackAndDamagedFilesAreNotTrusted() throws {
        defer { unlink(path) }
        let store = ResumeSupportStore(path: path)
        store.remember("http://127.0.0.1:3000", .supported(version: 8), now: 1000)
        #expect(store.lookup("http://127.0.0.1:3000", now: 1000) == nil, "a loopback port is soon another server's")
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: path))
        #expect(store.lookup(origin, now: 1000) == nil)
        store.remember(origin, .supported(version: 6), now: 1000)
        #expect(store.lookup(origin, now: 1001) == .supported(version: 6), "a damaged file is replaced")
    }

    /// The in-process answer comes from the store without asking; a refusal then is remembered as such.
    @Test func aRememberedAnswerSkipsTheQuestionAndARefusalCorrectsIt() async {
        defer { unlink(path) }
        let store = ResumeSupportStore(path: path)
        store.remember(origin, .supported(version: 8), now: Date().timeIntervalSince1970)
        let support = ResumeSupport(store: store, clock: .system)
        let (answer, remembered) = await support.answer(for: origin) {
            Issue.record("asked")
            return .unsupported
        }
        #expect(answer == .supported(version: 8) && remembered)
        support.refused(origin)
        #expect(store.lookup(origin, now: Date().timeIntervalSince1970) == .unsupported)
        let (again, _) = await support.answer(for: origin) {
            Issue.record("asked")
            return .supported(version: 8)
        }
        #expect(again == .unsupported)
    }

    /// Every form the resolver reads as this machine is loopback: never remembered.
    @Test func numericLoopbackFormsAreLoopback() {
        for host in [
            "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "0.0.0.0", "[::1]", "[::ffff:127.0.0.1]", "[::]",
            "localhost", "LocalHost", "photos.localhost",
        ] {
            #expect(ResumeSupportStore.isLoopback("http://\(host):3000"), "\(host)")
        }
        for host in ["upload.example.com", "10.0.0.1", "192.168.1.20", "[2001:db8::1]", "128.0.0.1", "1270.0.0.1.example"] {
            #expect(!ResumeSupportStore.isLoopback("http://\(host):3000"), "\(host)")
        }
    }

    /// A file grown huge (by another program, or an old version) is not read, and the next
    /// answer replaces it; what is written keeps only the newest origins.
    @Test func theFileStaysSmall() throws {
        defer { unlink(path) }
        var huge = "{"
        for n in 0..<20_000 { huge += "\"https://h\(n).example:443\":{\"version\":8,\"checkedAt\":1000}," }
        huge += "\"\(origin)\":{\"version\":8,\"checkedAt\":1000}}"
        try Data(huge.utf8).write(to: URL(fileURLWithPath: path))
        let store = ResumeSupportStore(path: path)
        #expect(store.lookup(origin, now: 1001) == nil, "not read")
        store.remember(origin, .supported(version: 9), now: 1002)
        #expect(store.lookup(origin, now: 1003) == .supported(version: 9))
        #expect((TestFiles.size(of: path) ?? .max) < 1_000)
        for n in 0..<(ResumeSupportStore.maxEntries + 40) {
            store.remember("https://o\(n).example:443", .unsupported, now: 2000 + Double(n))
        }
        #expect((TestFiles.size(of: path) ?? .max) <= Int64(ResumeSupportStore.maxFileBytes))
        #expect(store.lookup("https://o\(ResumeSupportStore.maxEntries + 39).example:443", now: 2000 + 600) == .unsupported, "the newest kept")
        #expect(store.lookup("https://o0.example:443", now: 2000 + 600) == nil, "the oldest gone")
    }

    /// An origin taken for tus (remembered) that refuses the tus creation as no tus server
    /// would is forgotten at once, and the upload goes the ordinary way in the same attempt.
    @Test func aStaleTusAnswerIsForgottenOnRefusal() async throws {
        let receiver = try await ReceiverHarness.start()
        let path = try TestFiles.writeImage(at: receiver.root + "/stale.jpg", size: 3_000_000)
        let transport = try HTTPUploadTransport()
        let origin = try #require(transport.origin(of: receiver.url))
        transport.support.learned(origin, .tus(.assumed))
        let result = await transport.perform(try UploadRequest.forPath(path, url: receiver.url), observer: AttemptObserver())
        #expect(result.outcome.isSuccess, "\(result.outcome)")
        #expect(await transport.support.known(origin) == .unsupported)
        #expect(TestFiles.sameContents(path, receiver.directory + "/stale.jpg"))
        try await transport.shutdown()
        await receiver.cleanUp()
    }
}

/// What an `OPTIONS` answer says of the interop version to speak: ours echoed, another one
/// spoken here named on a success (taken) or on a refusal (asked again with), or none.
@Suite struct InteropVersionAnswerTests {
    static func answer(_ status: Int, _ headers: [(String, String)]) -> UploadResponse {
        UploadResponse(status: status, reason: "", headers: headers, body: [], bodyBytesTotal: 0)
    }

    @Test func theVersionToSpeakIsTheOneTheServerNames() {
        let current = ResumableFields.currentVersion
        #expect(current == 10 && ResumableFields.supportedVersions == [10, 9, 8, 6])
        let echoed = DiscoveryMachine.read(Self.answer(204, [("Upload-Draft-Interop-Version", "10")]), asked: current)
        #expect(echoed.version == 10 && echoed.tryVersion == nil)
        // A server of draft -12 that answers in its own version: spoken in that one.
        let nine = DiscoveryMachine.read(Self.answer(204, [("Upload-Draft-Interop-Version", "9"), ("Upload-Limit", "max-size=100")]), asked: current)
        #expect(nine.version == 9 && nine.tryVersion == nil)
        // One refusing ours, naming an older one spoken here: asked again with it.
        let refused = DiscoveryMachine.read(Self.answer(400, [("Upload-Draft-Interop-Version", "8")]), asked: current)
        #expect(refused.version == nil && refused.tryVersion == 8)
        // A version not spoken here, named on a success or a refusal, is neither.
        #expect(DiscoveryMachine.read(Self.answer(400, [("Upload-Draft-Interop-Version", "7")]), asked: current) == (nil, nil))
        let unknown = DiscoveryMachine.read(Self.answer(204, [("Upload-Draft-Interop-Version", "11")]), asked: current)
        #expect(unknown.version == nil && unknown.tryVersion == nil)
        // Limits without any version: ours.
        #expect(DiscoveryMachine.read(Self.answer(204, [("Upload-Limit", "max-size=100")]), asked: current).version == 10)
    }
}
