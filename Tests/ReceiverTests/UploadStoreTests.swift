import Foundation
import Testing
@testable import Receiver
import UploadTesting

/// The upload folder: files that begin without a name where the system allows, named
/// temporary files otherwise; the same results either way.
struct UploadStoreTests {
    func names(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    func write(_ text: String, _ writer: BufferedFileWriter) throws {
        try Array(text.utf8).withUnsafeBytes { try writer.write($0) }
    }

    @Test func thisMachinesTemporaryFolderTakesNamelessFiles() throws {
        // Linux with ext4 or tmpfs and /proc mounted: the faster way is the one taken here.
        let store = try UploadStore(directory: TestFiles.makeTemporaryDirectory("store"))
        #expect(store.anonymous)
        #expect(names(store.directory).isEmpty, "the probe left nothing behind")
    }

    @Test func aPathThatIsNoFolderTakesNoNamelessFiles() throws {
        let folder = TestFiles.makeTemporaryDirectory("store")
        FileManager.default.createFile(atPath: folder + "/plain", contents: nil)
        #expect(!UploadStore.anonymousFilesWork(in: folder + "/plain"))
        #expect(!UploadStore.anonymousFilesWork(in: folder + "/missing"))
    }

    @Test(arguments: [true, false])
    func aFinishedFileGetsItsNameAndANumberWhenTaken(anonymous: Bool) throws {
        let store = try UploadStore(directory: TestFiles.makeTemporaryDirectory("store"), anonymousFiles: anonymous)
        let first = try store.createTemporary()
        #expect(first.anonymous == anonymous)
        try write("one", first)
        let second = try store.createTemporary()
        try write("two", second)
        // While they are written, a nameless file is not in the folder at all.
        #expect(names(store.directory).count == (anonymous ? 0 : 2))
        #expect(TestFiles.openFiles(in: store.directory) == 2)
        #expect(try store.commit(first, as: "a.jpg") == "a.jpg")
        #expect(try store.commit(second, as: "a.jpg") == "a-1.jpg")
        #expect(names(store.directory) == ["a-1.jpg", "a.jpg"])
        #expect(try String(contentsOfFile: store.directory + "/a.jpg", encoding: .utf8) == "one")
        #expect(try String(contentsOfFile: store.directory + "/a-1.jpg", encoding: .utf8) == "two")
        var st = stat()
        #expect(stat(store.directory + "/a.jpg", &st) == 0 && st.st_nlink == 1, "one name, no temporary one left")
        #expect(st.st_mode & 0o777 == 0o644 & ~currentUmask())
        #expect(TestFiles.openFiles(in: store.directory) == 0, "committing closes the file")
    }

    @Test(arguments: [true, false])
    func aDiscardedFileLeavesNothing(anonymous: Bool) throws {
        let store = try UploadStore(directory: TestFiles.makeTemporaryDirectory("store"), anonymousFiles: anonymous)
        let writer = try store.createTemporary()
        try write(String(repeating: "x", count: 100_000), writer)
        store.discard(writer)
        #expect(names(store.directory).isEmpty)
        #expect(TestFiles.openFiles(in: store.directory) == 0)
    }

    func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }
}
