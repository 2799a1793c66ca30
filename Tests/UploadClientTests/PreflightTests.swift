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

    /// Opening a FIFO for reading normally waits for a writer; the check must answer at once.
    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() {
        let path = folder + "/pipe.jpg"
        #expect(mkfifo(path, 0o600) == 0)
        let start = ContinuousClock.now
        #expect(check(path) == .notARegularFile(path: path))
        #expect(ContinuousClock.now - start < .seconds(2))
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
