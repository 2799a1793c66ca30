import Foundation
import Glibc
import Testing
import UploadClient
import UploadCore
import UploadTesting

/// What is refused before an upload is queued, and why.
@Suite struct PreflightTests {
    let folder = TestFiles.makeTemporaryDirectory("preflight")

    func check(_ path: String) -> UploadInputError? {
        let request = UploadRequest(source: .file(path: path), url: "http://127.0.0.1:9/photo", uploadName: "x.jpg")
        do {
            _ = try UploadPreflight.check(request)
            return nil
        } catch {
            return error
        }
    }

    @Test func aFolderIsNotARegularFile() {
        let error = check(folder)
        #expect(error == .notARegularFile(path: folder))
        #expect(error?.description.contains("not a regular file") == true)
    }

    /// Opening a FIFO for reading normally waits for a writer; the check must answer without one.
    /// A writer arrives after 3 s (so a check that waits ends instead of hanging the suite) and
    /// notes whether the check had already answered.
    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() async throws {
        let path = folder + "/pipe.jpg"
        #expect(mkfifo(path, 0o600) == 0)
        let answered = WriterFlag()
        let writer = Thread {
            Thread.sleep(forTimeInterval: 3)
            answered.noteWriterArrived()
            let fd = open(path, O_WRONLY | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        writer.start()
        #expect(check(path) == .notARegularFile(path: path))
        #expect(!answered.writerArrived, "the check waited for a writer")
    }

    @Test func aMissingFileSaysSo() {
        let path = folder + "/missing.jpg"
        #expect(check(path) == .cannotRead(path: path, reason: "No such file or directory"))
    }

    @Test func anImageIsAcceptedWithItsSize() throws {
        let path = try TestFiles.writeImage(at: folder + "/ok.jpg", size: 4321)
        let request = UploadRequest(source: .file(path: path), url: "http://127.0.0.1:9/photo", uploadName: "ok.jpg")
        #expect(try UploadPreflight.check(request) == 4321)
    }
}

/// Whether the FIFO's writer has come, read from the test's thread.
final class WriterFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var arrived = false
    var writerArrived: Bool { lock.withLock { arrived } }
    func noteWriterArrived() { lock.withLock { arrived = true } }
}
