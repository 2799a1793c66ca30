import Foundation
import Glibc
import Testing
@testable import UploadCore

/// File times far from now (`touch -d @15032385535`, which ext4 keeps) are held at the ends of
/// `Int64` nanoseconds rather than overflowing.
@Suite struct FileFingerprintTests {
    @Test func farFileTimesAreHeldNotOverflowed() throws {
        #expect(FileFingerprint.nanoseconds(timespec(tv_sec: 15_032_385_535, tv_nsec: 0)) == .max)
        #expect(FileFingerprint.nanoseconds(timespec(tv_sec: -99_999_999_999, tv_nsec: 0)) == .min)
        #expect(FileFingerprint.nanoseconds(timespec(tv_sec: 9_223_372_036, tv_nsec: 999_999_999)) == .max, "the nanoseconds tip it over")
        #expect(FileFingerprint.nanoseconds(timespec(tv_sec: 1_700_000_000, tv_nsec: 5)) == 1_700_000_000_000_000_005)

        let path = NSTemporaryDirectory() + "uploadmon-far-\(UUID().uuidString).jpg"
        defer { unlink(path) }
        try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: path))
        let far = timespec(tv_sec: 15_032_385_535, tv_nsec: 0)
        #expect(utimensat(AT_FDCWD, path, [far, far], 0) == 0)
        let fingerprint = try #require(FileFingerprint.of(path: path))
        #expect(fingerprint.size == 100)
        #expect(fingerprint.modificationNanoseconds > 1_700_000_000_000_000_000)
    }
}
