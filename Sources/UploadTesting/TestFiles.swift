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
        _ = FileManager.default.createFile(atPath: path, contents: nil)
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

/// A throwaway certificate authority and a server certificate for 127.0.0.1 it signed, made
/// with the openssl command in `directory`, for HTTPS tests.
public struct TestCertificates: Sendable {
    public let caCertificate: String
    public let serverCertificate: String
    public let serverKey: String

    public static func make(in directory: String) throws -> TestCertificates {
        let ca = directory + "/ca.pem", caKey = directory + "/ca.key"
        let cert = directory + "/cert.pem", key = directory + "/key.pem", csr = directory + "/server.csr"
        let ext = directory + "/san.ext"
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".write(toFile: ext, atomically: true, encoding: .utf8)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try run(["req", "-x509"] + ec + ["-keyout", caKey, "-out", ca, "-days", "2", "-subj", "/CN=uploadmon test CA"])
        try run(["req"] + ec + ["-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1"])
        try run(["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", ext])
        return TestCertificates(caCertificate: ca, serverCertificate: cert, serverKey: key)
    }

    static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CertificateError(message: "openssl \(arguments.prefix(2).joined(separator: " ")) exited with \(process.terminationStatus)")
        }
    }

    public struct CertificateError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }
}
