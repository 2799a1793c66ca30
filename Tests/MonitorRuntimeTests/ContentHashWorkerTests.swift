import Foundation
import Monitor
import MonitorRuntime
import NIOConcurrencyHelpers
import Testing
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
        try await eventually { got.withLockedValue { $0.count } == 4 }
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
        try await eventually { got.withLockedValue { $0.count } == 5 }
        #expect(got.withLockedValue { $0[4].1 } == results[0].1)
    }
}
