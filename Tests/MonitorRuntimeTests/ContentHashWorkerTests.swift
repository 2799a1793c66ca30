import Foundation
import Monitor
import MonitorRuntime
import NIOConcurrencyHelpers
import Testing
import UploadJournal
import UploadTesting

/// The browser's files hashed off the loop, in order, each once per size and modification time.
@Suite(.enabled(if: PythonDigests.available, "needs Python (hashlib) to check the digests")) struct ContentHashWorkerTests {
    @Test func filesAreHashedInOrderAndOnceThenFromTheCache() async throws {
        let folder = TestFiles.makeTemporaryDirectory("hashworker")
        let paths = try (0..<3).map { try TestFiles.writeImage(at: folder + "/p\($0).jpg", size: 40_000 + $0) }
        let got = NIOLockedValueBox<[(String, String?, Int)]>([])
        let worker = ContentHashWorker(stripLocation: false) { file, digest, remaining in
            got.withLockedValue { $0.append((file.path, digest, remaining)) }
        }
        let files = paths.map { ContentHashRequest(path: $0, size: 40_000, modified: 1) }
        worker.request(files + [ContentHashRequest(path: folder + "/missing.jpg", size: 1, modified: 1)])
        #expect(try await eventually { got.withLockedValue { $0.count } == 4 })
        let results = got.withLockedValue { $0 }
        #expect(results.map(\.0) == paths + [folder + "/missing.jpg"])
        #expect(results.map(\.2) == [3, 2, 1, 0])
        for (index, path) in paths.enumerated() {
            #expect(results[index].1 == (try PythonDigests.sha256Hex(path)))
        }
        #expect(results[3].1 == nil, "an unreadable file has no digest")
        // Asked again (the folder listed again): the same answers, from the cache.
        try FileManager.default.removeItem(atPath: paths[0])
        worker.request([files[0]])
        #expect(try await eventually { got.withLockedValue { $0.count } == 5 })
        #expect(got.withLockedValue { $0[4].1 } == results[0].1)
    }

    /// While uploads run the worker reads no file; once they are done it goes on where it was.
    @Test func aPausedWorkerReadsNothingUntilItGoesOn() async throws {
        let folder = TestFiles.makeTemporaryDirectory("hashpause")
        let paths = try (0..<3).map { try TestFiles.writeImage(at: folder + "/q\($0).jpg", size: 20_000) }
        let got = NIOLockedValueBox<[String]>([])
        let worker = ContentHashWorker(stripLocation: false) { file, _, _ in got.withLockedValue { $0.append(file.path) } }
        worker.pause(true)
        worker.request(paths.map { ContentHashRequest(path: $0, size: 20_000, modified: 1) })
        try await Task.sleep(nanoseconds: 400_000_000)
        #expect(got.withLockedValue { $0 }.isEmpty, "nothing was read while paused")
        worker.pause(false)
        #expect(try await eventually { got.withLockedValue { $0.count } == 3 })
        #expect(got.withLockedValue { $0 } == paths)
    }

    /// Kept in the journal: a later monitor (a new worker) takes the digest of a file whose size
    /// and modification time are unchanged without reading it, and reads a changed one again.
    @Test func digestsOutliveTheMonitorInTheJournal() async throws {
        let folder = TestFiles.makeTemporaryDirectory("hashcache")
        let journal = try Journal(path: folder + "/journal.sqlite")
        let path = try TestFiles.writeImage(at: folder + "/a.jpg", size: 30_000)
        let original = try PythonDigests.sha256Hex(path)
        let request = ContentHashRequest(path: path, size: 30_000, modified: 7, changed: 9)
        func hash(_ request: ContentHashRequest) async throws -> String? {
            let got = NIOLockedValueBox<[String?]>([])
            let worker = ContentHashWorker(stripLocation: false, journal: journal) { _, digest, _ in got.withLockedValue { $0.append(digest) } }
            worker.request([request])
            #expect(try await eventually { got.withLockedValue { $0.count } == 1 })
            // The worker writes what it kept when its list is done.
            #expect(try await eventually { (try? journal.cachedContents([request.path], stripped: false))?[request.path] != nil })
            return got.withLockedValue { $0.first ?? nil }
        }
        #expect(try await hash(request) == original)
        // Other bytes under the same size and time: the kept digest is taken, the file not read.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[100] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try PythonDigests.sha256Hex(path) != original)
        #expect(try await hash(request) == original)
        // Its modification time put back but its inode changed (`touch -r`, `cp -p`): read again.
        var edited = request
        edited.changed = 10
        #expect(try await hash(edited) == (try PythonDigests.sha256Hex(path)))
        // Its time changed: read again.
        var changed = request
        changed.modified = 8
        #expect(try await hash(changed) == (try PythonDigests.sha256Hex(path)))
    }

    /// A digest kept without a change time (by an older monitor) proves nothing: read again.
    @Test func aDigestKeptWithoutAChangeTimeIsNotTrusted() async throws {
        let folder = TestFiles.makeTemporaryDirectory("hashcache-old")
        let journal = try Journal(path: folder + "/journal.sqlite")
        let path = try TestFiles.writeImage(at: folder + "/a.jpg", size: 30_000)
        try journal.cacheContents([
            CachedContent(path: path, size: 30_000, mtimeNs: 7, ctimeNs: nil, stripped: false, sha256: String(repeating: "0", count: 64))
        ])
        let got = NIOLockedValueBox<[String?]>([])
        let worker = ContentHashWorker(stripLocation: false, journal: journal) { _, digest, _ in got.withLockedValue { $0.append(digest) } }
        worker.request([ContentHashRequest(path: path, size: 30_000, modified: 7, changed: 9)])
        #expect(try await eventually { got.withLockedValue { $0.count } == 1 })
        #expect(got.withLockedValue { $0[0] } == (try PythonDigests.sha256Hex(path)))
    }
}
