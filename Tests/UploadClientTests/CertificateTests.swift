import Foundation
import Testing
@testable import UploadClient
import UploadCore
import UploadTesting

/// A certificate the client refuses is a final failure that says which problem it has:
/// BoringSSL reports all of them as one `CERTIFICATE_VERIFY_FAILED`, and retrying cannot help.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CertificateTests {
    let folder = TestFiles.makeTemporaryDirectory("certificates")
    let day: TimeInterval = 86400

    /// One upload with up to three retries to a receiver serving `certificates`, trusting
    /// their authority unless `trust` is false (then the system store decides).
    func upload(
        to certificates: TestCertificates, trust: Bool = true, host: String = "127.0.0.1"
    ) async throws -> (run: UploadRun, stored: [String]) {
        let receiver = try await ReceiverHarness.start(
            tls: .init(certificateChain: certificates.serverCertificate, privateKey: certificates.serverKey))
        let path = try TestFiles.writeImage(at: folder + "/\(UUID().uuidString.prefix(6)).jpg", size: 5000)
        let url = receiver.url.replacingOccurrences(of: "127.0.0.1", with: host)
        let run = try await UploadRun.run(
            [try UploadRequest.forPath(path, url: url)],
            retryPolicy: RetryPolicy(maxRetries: 3, baseDelay: 0.01),
            tls: TLSOptions(caCertificatePath: trust ? certificates.caCertificate : nil))
        let stored = receiver.storedNames()
        await receiver.cleanUp()
        try? FileManager.default.removeItem(atPath: (certificates.caCertificate as NSString).deletingLastPathComponent)
        try? FileManager.default.removeItem(atPath: path)
        return (run, stored)
    }

    func certificates(names: [TestCertificates.Name] = [.ip("127.0.0.1")], validity: ClosedRange<Date>? = nil, selfSigned: Bool = false) throws
        -> TestCertificates
    {
        let directory = TestFiles.makeTemporaryDirectory("cert")
        return try TestCertificates.make(in: directory, names: names, validity: validity, selfSigned: selfSigned)
    }

    /// The failure of a run that must have ended on the first attempt, nothing stored.
    func finalFailure(_ result: (run: UploadRun, stored: [String])) throws -> UploadFailure {
        let failure = try #require(result.run.failure(), "\(result.run.events)")
        #expect(failure.kind == .certificateRejected, "\(failure)")
        #expect(!failure.isTransient)
        #expect(result.run.attempts() == 1, "retried: \(result.run.events)")
        #expect(result.stored.isEmpty)
        #expect(!failure.message.contains("CERTIFICATE_VERIFY_FAILED"), "\(failure.message)")
        return failure
    }

    @Test func anAuthorityNobodyTrustsIsNamed() async throws {
        let failure = try finalFailure(await upload(to: certificates(), trust: false))
        #expect(
            failure.message == "certificate not trusted: issued by \"uploadmon test CA\", which is not an authority in the system's trust store"
                + " (trust its authority with --cacert FILE, or skip the check with --insecure)", "\(failure.message)")
    }

    @Test func aSelfSignedCertificateIsSaidToBeOne() async throws {
        let failure = try finalFailure(await upload(to: certificates(selfSigned: true), trust: true))
        let caFile = failure.message.components(separatedBy: "not in ").last ?? ""
        #expect(failure.message.hasPrefix("certificate not trusted: \"127.0.0.1\" is self-signed and not in "), "\(failure.message)")
        #expect(caFile.hasSuffix("/ca.pem"), "\(failure.message)")
    }

    @Test func anExpiredCertificateSaysWhenItExpired() async throws {
        // Whole seconds, as a certificate holds them: a date a fraction before a minute's end
        // was once written as the next minute and the message read a minute later.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let validity = now.addingTimeInterval(-10 * day)...now.addingTimeInterval(-2 * day)
        let failure = try finalFailure(await upload(to: certificates(validity: validity)))
        #expect(
            failure.message.hasPrefix(
                "certificate expired: the server's certificate \"127.0.0.1\" was valid until "
                    + CertificateProblem.date(validity.upperBound) + " (from " + CertificateProblem.date(validity.lowerBound) + "); it is "),
            "\(failure.message)")
        #expect(!failure.message.contains("not trusted"), "\(failure.message)")
    }

    @Test func aCertificateNotYetValidSaysFromWhen() async throws {
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let validity = now.addingTimeInterval(3 * day)...now.addingTimeInterval(30 * day)
        let failure = try finalFailure(await upload(to: certificates(validity: validity)))
        #expect(
            failure.message.hasPrefix(
                "certificate not yet valid: the server's certificate \"127.0.0.1\" is valid from "
                    + CertificateProblem.date(validity.lowerBound) + " (until " + CertificateProblem.date(validity.upperBound) + ")"),
            "\(failure.message)")
    }

    @Test func aCertificateForOtherNamesSaysTheNameAskedAndTheNamesItHas() async throws {
        let failure = try finalFailure(await upload(to: certificates(names: [.dns("upload.example"), .dns("*.example.net"), .ip("::1")])))
        #expect(
            failure.message == "certificate name mismatch: asked for 127.0.0.1, the certificate is for upload.example, *.example.net, ::1",
            "\(failure.message)")
        #expect(!failure.message.contains("<none>"))
    }

    /// The rule is NIOSSL's: a DNS name matches the host asked for, an IP address the address
    /// connected to (so a certificate for 127.0.0.1 serves https://localhost too).
    @Test func aHostNameTargetIsMatchedByName() async throws {
        let wrong = try finalFailure(await upload(to: certificates(names: [.dns("upload.example")]), host: "localhost"))
        #expect(wrong.message == "certificate name mismatch: asked for localhost, the certificate is for upload.example", "\(wrong.message)")
        for names: [TestCertificates.Name] in [[.dns("localhost")], [.dns("upload.example"), .ip("127.0.0.1")]] {
            let right = try await upload(to: certificates(names: names), host: "localhost")
            #expect(right.run.outcome() == .answered(status: 200), "\(names): \(right.run.events)")
        }
    }

    @Test func everyProblemIsSaidWhenThereAreSeveral() async throws {
        let validity = Date().addingTimeInterval(-10 * day)...Date().addingTimeInterval(-2 * day)
        let failure = try finalFailure(await upload(to: certificates(names: [.dns("upload.example")], validity: validity), trust: false))
        #expect(failure.message.hasPrefix("certificate not trusted: issued by \"uploadmon test CA\""), "\(failure.message)")
        #expect(failure.message.contains("; certificate expired: the server's certificate \"upload.example\" was valid until"), "\(failure.message)")
        #expect(failure.message.hasSuffix("; certificate name mismatch: asked for 127.0.0.1, the certificate is for upload.example"), "\(failure.message)")
    }
}
