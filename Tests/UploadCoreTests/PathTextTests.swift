import Foundation
import Testing
import UploadCore

/// File names are bytes: one that is not UTF-8 keeps them through the program and is shown
/// escaped, instead of being decoded into a name that does not exist.
@Suite struct PathTextTests {
    @Test func everyByteSequenceComesBackUnchanged() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            let count = Int.random(in: 0...24, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 1...255, using: &generator) }
            #expect(PathText.bytes(PathText.decode(bytes)) == bytes, "\(bytes)")
        }
        // The edges: a scalar of the escape range itself, truncated sequences, overlongs, surrogates.
        for bytes: [UInt8] in [[0xF4, 0x8F, 0xBE, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xE2, 0x82], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xFF]] {
            #expect(PathText.bytes(PathText.decode(bytes)) == bytes, "\(bytes)")
        }
        #expect(PathText.decode(Array("plain/ünïcode.jpg".utf8)) == "plain/ünïcode.jpg", "valid UTF-8 is itself")
    }

    @Test func aLatin1NameIsFoundShownEscapedAndUploadedAsLatin1() throws {
        let folder = NSTemporaryDirectory() + "uploadmon-pathtext-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let raw = Array(folder.utf8) + Array("/caf".utf8) + [0xE9] + Array(".jpg".utf8)
        let fd = (raw + [0]).withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { open($0.baseAddress!, O_WRONLY | O_CREAT, 0o600) }
        }
        #expect(fd >= 0)
        _ = write(fd, [0xFF, 0xD8, 0xFF, 0xE0], 4)
        close(fd)

        let path = PathText.decode(raw)
        #expect(FileFingerprint.of(path: path)?.size == 4, "the file is found by its bytes")
        #expect(InvisibleCharacters.escaped(UploadName.baseName(of: path)) == "caf<0xE9>.jpg")
        #expect(UploadName.uploadName(ofPath: path) == "café.jpg")
        #expect(try UploadRequest.forPath(path, url: "http://127.0.0.1:9/photo").uploadName == "café.jpg")
    }
}
