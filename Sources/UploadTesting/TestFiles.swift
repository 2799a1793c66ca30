import Crypto
import Foundation
import NIOConcurrencyHelpers
import SwiftASN1
import UploadCore
import X509

/// Files for upload tests: real image headers followed by deterministic bytes, written in
/// chunks so even large files cost little memory.
public enum TestFiles {
    /// A fresh folder for one test, removed when the test process exits (a full run writes
    /// hundreds of megabytes: kept, they filled a developer's disk within a day).
    /// `UPLOADMON_KEEP_TEST_FILES=1` keeps them to look at.
    public static func makeTemporaryDirectory(_ label: String) -> String {
        let path = NSTemporaryDirectory() + "uploadmon-test-\(label)-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        _ = removedAtExit
        created.withLockedValue { $0.append(path) }
        return path
    }

    private static let created = NIOLockedValueBox<[String]>([])
    private static let removedAtExit: Void = {
        guard ProcessInfo.processInfo.environment["UPLOADMON_KEEP_TEST_FILES"] != "1" else { return }
        atexit {
            for path in TestFiles.created.withLockedValue({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
        }
    }()

    /// `writeImage` of `name` in a fresh temporary folder labelled `label`, written off the
    /// cooperative pool (a large one takes a while in a debug build); its path.
    public static func image(_ name: String, size: Int64, in label: String) async throws -> String {
        let root = makeTemporaryDirectory(label)
        return try await offPool { try writeImage(at: root + "/" + name, size: size) }
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
            // Whole 64-bit words at a time: byte by byte, a debug build spends seconds on a
            // file of a few hundred megabytes.
            var words = [UInt64](repeating: 0, count: (count + 7) / 8)
            for i in words.indices {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                words[i] = state.bigEndian
            }
            var bytes = words.withUnsafeBytes { Array($0.prefix(count)) }
            if written == 0 {
                for (i, b) in [UInt8(0xFF), 0xD8, 0xFF, 0xE0].prefix(count).enumerated() { bytes[i] = b }
            }
            try handle.write(contentsOf: bytes)
            written += Int64(count)
        }
        return path
    }

    /// How many files process `pid` holds open in `directory` (read from /proc/PID/fd), whether
    /// they have a name there yet or not: the sign that a receiver is writing an upload, where
    /// a file without a name (O_TMPFILE) shows nothing in the folder.
    public static func openFiles(in directory: String, pid: Int32 = getpid()) -> Int {
        let folder = "/proc/\(pid)/fd"
        guard let fds = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return 0 }
        let prefix = (directory as NSString).resolvingSymlinksInPath + "/"
        return fds.filter { fd in
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + fd)) ?? "").hasPrefix(prefix)
        }.count
    }

    /// Whether two files hold the same bytes, compared in chunks.
    public static func sameContents(_ a: String, _ b: String) -> Bool {
        guard let ha = FileHandle(forReadingAtPath: a), let hb = FileHandle(forReadingAtPath: b) else { return false }
        defer {
            try? ha.close()
            try? hb.close()
        }
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

/// A throwaway certificate authority and a server certificate it signed, written as PEM files
/// in `directory`, for HTTPS tests. Made with swift-certificates, so a test can ask for what
/// openssl's command line cannot give easily: an expired or not yet valid certificate, one made
/// out for other names, one that signed itself.
public struct TestCertificates: Sendable {
    public let caCertificate: String
    public let serverCertificate: String
    public let serverKey: String

    /// A name the server certificate is made out for.
    public enum Name: Sendable {
        case dns(String)
        case ip(String)
    }

    /// - Parameters:
    ///   - names: the subject alternative names of the server certificate.
    ///   - validity: the server certificate's dates (default: from an hour ago for two days).
    ///   - selfSigned: the server certificate signs itself instead of the authority signing it.
    public static func make(
        in directory: String,
        names: [Name] = [.ip("127.0.0.1")],
        validity: ClosedRange<Date>? = nil,
        selfSigned: Bool = false
    ) throws -> TestCertificates {
        let now = HouseClock.system.wall()
        let current = now.addingTimeInterval(-3600)...now.addingTimeInterval(2 * 86400)
        let authorityKey = P256.Signing.PrivateKey()
        let authorityName = try DistinguishedName { CommonName("uploadmon test CA") }
        let authority = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(authorityKey.publicKey),
            notValidBefore: current.lowerBound, notValidAfter: current.upperBound,
            issuer: authorityName, subject: authorityName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(authorityKey))

        let serverKey = P256.Signing.PrivateKey()
        let serverName = try DistinguishedName { CommonName(names.first.map(\.text) ?? "uploadmon test server") }
        let dates = validity ?? current
        let server = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(serverKey.publicKey),
            notValidBefore: dates.lowerBound, notValidAfter: dates.upperBound,
            issuer: selfSigned ? serverName : authorityName, subject: serverName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names.map(\.generalName))
            },
            issuerPrivateKey: .init(selfSigned ? serverKey : authorityKey))

        let files = TestCertificates(
            caCertificate: directory + "/ca.pem", serverCertificate: directory + "/cert.pem", serverKey: directory + "/key.pem")
        try authority.serializeAsPEM().pemString.write(toFile: files.caCertificate, atomically: true, encoding: .utf8)
        try server.serializeAsPEM().pemString.write(toFile: files.serverCertificate, atomically: true, encoding: .utf8)
        try serverKey.pemRepresentation.write(toFile: files.serverKey, atomically: true, encoding: .utf8)
        return files
    }
}

extension TestCertificates.Name {
    var text: String {
        switch self {
        case .dns(let name), .ip(let name): name
        }
    }

    var generalName: GeneralName {
        switch self {
        case .dns(let name):
            return .dnsName(name)
        case .ip(let address):
            var bytes = [UInt8](repeating: 0, count: 16)
            let family = address.contains(":") ? AF_INET6 : AF_INET
            precondition(inet_pton(family, address, &bytes) == 1, "not an IP address: \(address)")
            return .ipAddress(ASN1OctetString(contentBytes: ArraySlice(bytes.prefix(family == AF_INET ? 4 : 16))))
        }
    }
}
