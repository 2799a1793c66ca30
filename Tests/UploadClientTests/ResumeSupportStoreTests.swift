import Foundation
import Testing
@testable import UploadClient
import UploadCore

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
        let support = ResumeSupport(store: store)
        let (answer, remembered) = await support.answer(for: origin) { Issue.record("asked"); return .unsupported }
        #expect(answer == .supported(version: 8) && remembered)
        support.refused(origin)
        #expect(store.lookup(origin, now: Date().timeIntervalSince1970) == .unsupported)
        let (again, _) = await support.answer(for: origin) { Issue.record("asked"); return .supported(version: 8) }
        #expect(again == .unsupported)
    }
}
