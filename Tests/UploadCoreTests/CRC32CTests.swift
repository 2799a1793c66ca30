import Foundation
import Testing
import UploadCore
import UploadTesting

/// CRC-32C as S3 checks it: the published check values, the instruction and the tables
/// agreeing, parts combining into the whole, and Python's crc32c (PyPI) agreeing on a file.
@Suite struct CRC32CTests {
    func crc(_ bytes: [UInt8]) -> UInt32 {
        var crc = CRC32C()
        crc.update(bytes)
        return crc.value
    }

    @Test func theCheckValuesOfTheStandard() {
        #expect(crc(Array("123456789".utf8)) == 0xE306_9283)
        #expect(crc([]) == 0)
        // RFC 3720 (iSCSI), B.4.
        #expect(crc([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(crc([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(crc((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(crc((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
    }

    @Test func theInstructionAndTheTablesAgreeAtEveryLengthAndAlignment() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<5_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for start in 0..<9 {
            for length in [0, 1, 7, 8, 9, 31, 32, 33, 100, 1_000, 4_991 - start] {
                let piece = Array(bytes[start..<start + length])
                #expect(crc(piece) == CRC32C.portable(piece), "start \(start), length \(length)")
            }
        }
    }

    @Test func piecesGivenOneAfterAnotherAndPartsCombinedMakeTheWhole() {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let whole = crc(bytes)
        var pieces = CRC32C()
        for start in stride(from: 0, to: bytes.count, by: 4_096) {
            pieces.update(Array(bytes[start..<min(bytes.count, start + 4_096)]))
        }
        #expect(pieces.value == whole)
        for cut in [0, 1, 17, 50_000, 99_999, 100_000] {
            let a = CRC32C(value: crc(Array(bytes[..<cut])))
            let b = CRC32C(value: crc(Array(bytes[cut...])))
            #expect(a.followed(by: b, length: Int64(bytes.count - cut)).value == whole, "cut at \(cut)")
        }
        // Three parts, as a multipart upload's.
        let parts = [0..<30_000, 30_000..<60_000, 60_000..<100_000].map { CRC32C(value: crc(Array(bytes[$0]))) }
        let combined = parts[0].followed(by: parts[1], length: 30_000).followed(by: parts[2], length: 40_000)
        #expect(combined.value == whole)
    }

    @Test func base64AsS3WritesIt() {
        let value = CRC32C(value: 0xE306_9283)
        #expect(value.base64 == "4waSgw==")
        #expect(CRC32C(base64: "4waSgw==") == value)
        #expect(CRC32C(base64: "4waSgw==-3") == nil, "a composite value is not a CRC")
        #expect(CRC32C(base64: "AAAAAAA=") == nil)
    }

    @Test(.enabled(if: PythonDigests.hasModules(["crc32c"]), "needs python3 with crc32c (.ci/run installs it)"))
    func pythonsCrc32cAgreesOnAFile() throws {
        let folder = TestFiles.makeTemporaryDirectory("crc32c")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/photo.jpg"
        let bytes = (0..<3_000_017).map { UInt8(truncatingIfNeeded: $0 &* 40_503 >> 7) }
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let python = try PythonDigests.run(["-c", "import crc32c, sys; print(crc32c.crc32c(open(sys.argv[1], 'rb').read()))", path])
        #expect(python.status == 0, "\(python.output)")
        #expect(UInt32(python.output) == crc(bytes))
    }
}
