import Foundation
import UploadCore

/// Files for upload tests: real image headers followed by deterministic bytes, written in
/// chunks so even large files cost little memory.
public enum TestFiles {
    public static func makeTemporaryDirectory(_ label: String) -> String {
        let path = NSTemporaryDirectory() + "uploadmon-test-\(label)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A file of exactly `size` bytes that sniffs as a JPEG (when `size >= 3`), with bytes that
    /// vary by offset so a misplaced chunk is caught by a comparison.
    @discardableResult
    public static func writeImage(at path: String, size: Int64) throws -> String {
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let chunk = 1 << 20
        var written: Int64 = 0
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        while written < size {
            let count = Int(min(Int64(chunk), size - written))
            var bytes = [UInt8](repeating: 0, count: count)
            for i in stride(from: 0, to: count, by: 8) {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                withUnsafeBytes(of: state.bigEndian) { raw in
                    for j in 0..<min(8, count - i) { bytes[i + j] = raw[j] }
                }
            }
            if written == 0 {
                for (i, b) in [UInt8(0xFF), 0xD8, 0xFF, 0xE0].prefix(count).enumerated() { bytes[i] = b }
            }
            try handle.write(contentsOf: bytes)
            written += Int64(count)
        }
        return path
    }

    /// Whether two files hold the same bytes, compared in chunks.
    public static func sameContents(_ a: String, _ b: String) -> Bool {
        guard let ha = FileHandle(forReadingAtPath: a), let hb = FileHandle(forReadingAtPath: b) else { return false }
        defer { try? ha.close(); try? hb.close() }
        while true {
            let da = (try? ha.read(upToCount: 1 << 20)) ?? nil
            let db = (try? hb.read(upToCount: 1 << 20)) ?? nil
            if da != db { return false }
            if da == nil || da!.isEmpty { return true }
        }
    }

    public static func size(of path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
