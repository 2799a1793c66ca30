import Foundation
import Glibc
import Testing
import UploadCore

@Suite struct JSONWriterTests {
    struct Sample: Codable, Equatable {
        var url = "http://h/a/b"
        var when = Date(timeIntervalSince1970: 1_700_000_000)
        var count = 3
    }

    @Test func keysSortedSlashesKeptDatesAsAsked() throws {
        #expect(try JSONWriter.text(Sample()) == #"{"count":3,"url":"http://h/a/b","when":"2023-11-14T22:13:20Z"}"#)
        #expect(try JSONWriter.text(Sample(), dates: .secondsSince1970) == #"{"count":3,"url":"http://h/a/b","when":1700000000}"#)
        #expect(
            try JSONWriter.text(Sample(), .indented) == """
                {
                  "count" : 3,
                  "url" : "http://h/a/b",
                  "when" : "2023-11-14T22:13:20Z"
                }
                """)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        #expect(try decoder.decode(Sample.self, from: JSONWriter.data(Sample(), .indented)) == Sample())
    }
}

@Suite struct FileReplacementTests {
    let folder = NSTemporaryDirectory() + "uploadmon-replace-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

    @Test func replacesWholeWithItsModeAndLeavesNothingBeside() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/settings.json"
        try FileReplacement.write(Data("old".utf8), to: path)
        let old = umask(0)
        defer { umask(old) }
        try FileReplacement.write(Data("new contents".utf8), to: path, mode: 0o600)
        #expect(FileManager.default.contents(atPath: path) == Data("new contents".utf8))
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600, "not readable by others even with umask 0")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["settings.json"])
        try FileReplacement.write(Data(), to: path)
        #expect(FileManager.default.contents(atPath: path) == Data())
    }

    @Test func aFolderThatIsNotThereIsSaid() {
        #expect {
            try FileReplacement.write(Data("x".utf8), to: folder + "/missing/file")
        } throws: { error in
            (error as? FileReplacement.Failure)?.description == "\(folder)/missing/file: cannot write it: No such file or directory"
        }
    }

    @Test func aLeftoverNamesItsWriter() {
        #expect(FileReplacement.writer(ofTemporary: "agent-settings.json.4242.tmp") == 4242)
        #expect(FileReplacement.writer(ofTemporary: (FileReplacement.temporaryPath(for: "/s/monitor-seen", pid: 7) as NSString).lastPathComponent) == 7)
        #expect(FileReplacement.writer(ofTemporary: "photo.tmp") == nil)
        #expect(FileReplacement.writer(ofTemporary: "a.b.tmp") == nil)
        #expect(FileReplacement.writer(ofTemporary: "a.-3.tmp") == nil)
        #expect(FileReplacement.writer(ofTemporary: "settings.json") == nil)
    }
}
