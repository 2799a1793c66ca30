import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import SwiftASN1
@_spi(DisableValidityCheck) import X509

/// Finds out why a server's certificate was refused. BoringSSL reports every verification
/// failure as `CERTIFICATE_VERIFY_FAILED` and AsyncHTTPClient offers no hook into the
/// handshake, so after such a failure we connect once more, take the certificates the server
/// presents (trusting none of them, sending nothing) and check them one question at a time
/// with swift-certificates: is there a chain to a trusted authority, is every certificate in
/// its dates, is the leaf made out for the name we asked for.
enum CertificateInspection {
    /// The problems with the certificates `host` presents, or nil when they cannot be had
    /// (the server went away) or none of the checks finds one.
    static func problems(
        host: String, port: Int, roots: Roots, eventLoop: EventLoop, timeout: TimeAmount, now: Date
    ) async -> [CertificateProblem]? {
        guard let presented = await presentedChain(host: host, port: port, eventLoop: eventLoop, timeout: timeout),
            !presented.chain.isEmpty
        else { return nil }
        let found = await problems(chain: presented.chain, host: host, peerAddress: presented.peerAddress, roots: roots, now: now)
        return found.isEmpty ? nil : found
    }

    /// The authorities the client trusts: the system's, or those of a `--cacert` file. Made
    /// into a store only when a certificate was refused: touching swift-certificates' system
    /// store starts parsing every root on the machine, which an upload over plain HTTP (or
    /// one whose certificate is fine) must not pay for.
    enum Roots: Sendable {
        case system
        case file(String, certificates: [NIOSSLCertificate])

        var store: CertificateStore {
            switch self {
            case .system: CertificateStore.systemTrustRoots
            case .file(_, let certificates): CertificateStore(certificates.compactMap(Certificate.init(converting:)))
            }
        }

        var origin: CertificateProblem.TrustStore {
            switch self {
            case .system: .system
            case .file(let path, _): .file(path)
            }
        }
    }

    /// The checks, given the certificates (leaf first); separate from the connection so they
    /// can be tested on their own.
    static func problems(
        chain: [Certificate], host: String, peerAddress: String?, roots: Roots, now: Date
    ) async -> [CertificateProblem] {
        let leaf = chain[0]
        var found: [CertificateProblem] = []

        var trust = Verifier(rootCertificates: roots.store) { RFC5280Policy.withValidityCheckDisabled() }
        let trustedChain: [Certificate]?
        switch await trust.validate(leaf: leaf, intermediates: CertificateStore(chain.dropFirst())) {
        case .validCertificate(let validated): trustedChain = Array(validated)
        case .couldNotValidate: trustedChain = nil
        }
        if trustedChain == nil {
            // The authority the presented chain ends at (the leaf's own name when it signed itself).
            let top = chain.last!
            let selfSigned = chain.count == 1 && leaf.issuer == leaf.subject
            found.append(.untrusted(issuer: name(top.issuer), selfSigned: selfSigned, store: roots.origin))
        }

        for (index, certificate) in (trustedChain ?? chain).enumerated() {
            guard certificate.notValidBefore <= certificate.notValidAfter else { continue }
            let validity = certificate.notValidBefore...certificate.notValidAfter
            if now > validity.upperBound {
                found.append(.expired(subject: name(certificate.subject), isLeaf: index == 0, validity: validity, now: now))
            } else if now < validity.lowerBound {
                found.append(.notYetValid(subject: name(certificate.subject), isLeaf: index == 0, validity: validity, now: now))
            }
        }

        if await !matches(leaf, host: host, peerAddress: peerAddress) {
            found.append(.nameMismatch(asked: host, names: names(in: leaf)))
        }
        return found
    }

    /// swift-certificates' server-identity rule, applied to the leaf alone. It is the rule
    /// NIOSSL applies in the handshake (the same code, ported): a DNS name matches the host
    /// asked for (wildcards in the first label), an IP address the address connected to, and
    /// the common name counts only when there is no subject alternative name.
    static func matches(_ leaf: Certificate, host: String, peerAddress: String?) async -> Bool {
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        var verifier = Verifier(rootCertificates: CertificateStore([leaf])) {
            LeafIdentity(
                leaf: leaf,
                identity: ServerIdentityPolicy(
                    serverHostname: isAddress ? nil : host, serverIP: peerAddress ?? (isAddress ? host : nil)))
        }
        if case .validCertificate = await verifier.validate(leaf: leaf, intermediates: CertificateStore()) { return true }
        return false
    }

    /// The names a certificate is made out for: its DNS names and addresses, or its common
    /// name when it has no subject alternative names.
    static func names(in certificate: Certificate) -> [String] {
        let alternatives = (try? certificate.extensions.subjectAlternativeNames) ?? nil
        guard let alternatives, !alternatives.isEmpty else {
            return commonName(certificate.subject).map { ["\($0) (its common name; it has no subject alternative name)"] } ?? []
        }
        return alternatives.compactMap { general in
            switch general {
            case .dnsName(let dns): return dns
            case .ipAddress(let octets): return address(Array(octets.bytes))
            default: return nil
            }
        }
    }

    static func name(_ distinguished: DistinguishedName) -> String {
        commonName(distinguished) ?? distinguished.description
    }

    static func commonName(_ distinguished: DistinguishedName) -> String? {
        for relative in distinguished {
            for attribute in relative where attribute.type == .RDNAttributeType.commonName {
                return attribute.value.description
            }
        }
        return nil
    }

    static func address(_ bytes: [UInt8]) -> String? {
        switch bytes.count {
        case 4:
            return bytes.map(String.init).joined(separator: ".")
        case 16:
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            let ok = bytes.withUnsafeBytes { raw in inet_ntop(AF_INET6, raw.baseAddress, &text, socklen_t(text.count)) != nil }
            return ok ? String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        default:
            return nil
        }
    }

    /// Connects and takes the server's certificates from the handshake, then refuses them:
    /// the handshake never completes, no request is sent. Also the address connected to,
    /// which NIOSSL matches a certificate's IP addresses against.
    static func presentedChain(
        host: String, port: Int, eventLoop: EventLoop, timeout: TimeAmount
    ) async -> (chain: [Certificate], peerAddress: String?)? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification  // so the callback below runs
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        let captured = eventLoop.makePromise(of: [NIOSSLCertificate]?.self)
        let settled = NIOLockedValueBox(false)
        @Sendable func settle(_ chain: [NIOSSLCertificate]?) {
            let first = settled.withLockedValue { done in
                defer { done = true }
                return !done
            }
            if first { captured.succeed(chain) }
        }
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(
                        context: context, serverHostname: isAddress ? nil : host,
                        customVerificationCallback: { certificates, verdict in
                            settle(certificates)
                            verdict.succeed(.failed)
                        })
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        let channel: Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            return nil
        }
        channel.closeFuture.whenComplete { _ in settle(nil) }
        let deadline = eventLoop.scheduleTask(in: timeout) { settle(nil) }
        let chain = try? await captured.futureResult.get()
        deadline.cancel()
        try? await channel.close()
        guard let chain else { return nil }
        return (chain.compactMap(Certificate.init(converting:)), channel.remoteAddress?.ipAddress)
    }
}

extension Certificate {
    init?(converting certificate: NIOSSLCertificate) {
        guard let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) else { return nil }
        self = parsed
    }
}

/// `ServerIdentityPolicy` for a chain of the leaf alone, taking on every critical extension
/// the leaf carries (key usage is usually critical): only the name is in question here.
private struct LeafIdentity: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier]
    var identity: ServerIdentityPolicy

    init(leaf: Certificate, identity: ServerIdentityPolicy) {
        self.verifyingCriticalExtensions = leaf.extensions.filter(\.critical).map(\.oid)
        self.identity = identity
    }

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        identity.chainMeetsPolicyRequirements(chain: chain)
    }
}
