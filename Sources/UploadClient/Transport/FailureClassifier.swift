import Foundation
import NIOCore
import NIOPosix
import NIOHTTP1
import NIOSSL
import AsyncHTTPClient
import UploadCore

/// Turns what AsyncHTTPClient and SwiftNIO throw into a failure a person can read and act on.
enum FailureClassifier {
    /// The body was sent and no (complete) answer came within the answer clock.
    static func noAnswer(_ timeouts: UploadTimeouts) -> UploadFailure {
        UploadFailure(.noAnswer, "no answer within \(seconds(timeouts.answer)) after the upload was sent")
    }

    static func stalled(_ timeouts: UploadTimeouts) -> UploadFailure {
        UploadFailure(.stalled, "the upload stalled: nothing could be sent for \(seconds(timeouts.stall))")
    }

    /// What went wrong with the proxy, said with its name, when the error is the proxy's: a
    /// refusal is final (trying again cannot change it), a proxy that does not answer is not.
    /// A proxy answered 407: it wants a login, or refused the one given.
    static func proxyWantsLogin(_ proxy: ProxyTarget) -> UploadFailure {
        UploadFailure(
            .other,
            proxy.login == nil
                ? "the proxy \(proxy.display) wants a login (407 Proxy Authentication Required); give it in the proxy URL, http://user:password@\(proxy.host):\(proxy.port)"
                : "the proxy \(proxy.display) refused the login given in its URL (407 Proxy Authentication Required)")
    }

    /// `bridge` and `endpoint`: what the SOCKS bridge found when AsyncHTTPClient only has its reply.
    /// The resolver's reason in its own words ("Name or service not known"), without NIO's type
    /// name and the host said again.
    static func resolverWords(_ error: any Error) -> String {
        if let unknown = error as? SocketAddressError.UnknownHost { return unknown.errorDescription }
        return String(describing: error)
    }

    static func throughProxy(
        _ error: Error, proxy: ProxyTarget, timeouts: UploadTimeouts,
        bridge: SOCKSBridge? = nil, endpoint: Endpoint? = nil
    ) -> UploadFailure? {
        let name = proxy.display
        if let refused = error as? SOCKS5Connector.Refused { return refused.failure }
        // Already said in full (a SOCKS5 handshake's clock, a name not resolved here).
        if let failure = error as? UploadFailure { return failure }
        if let client = error as? HTTPClientError {
            switch client {
            case .proxyAuthenticationRequired:
                return proxyWantsLogin(proxy)
            case .invalidProxyResponse:
                return UploadFailure(
                    .other,
                    "the proxy \(name) refused to open a connection to the server (its answer to CONNECT was not 200; many proxies allow it to port 443 only)")
            case .httpProxyHandshakeTimeout, .socksHandshakeTimeout:
                return UploadFailure(.connectTimeout, "the proxy \(name) did not answer within \(seconds(timeouts.connect))")
            default:
                break
            }
        }
        if String(reflecting: type(of: error)).contains("SOCKSError") {
            if let bridge, let endpoint, let known = bridge.refusal(host: endpoint.host, port: endpoint.port) {
                return known
            }
            return UploadFailure(.other, "the SOCKS5 proxy \(name) refused: \(error)")
        }
        let failure = classify(error, bodySent: false, timeouts: timeouts)
        if failure.kind == .cannotConnect || failure.kind == .connectTimeout {
            return UploadFailure(failure.kind, "cannot reach the proxy \(name): \(failure.message)", code: failure.code)
        }
        return nil
    }

    /// `bodySent` says whether the whole body had reached the socket; it tells a stalled upload
    /// from a server that never answered.
    static func classify(_ error: Error, bodySent: Bool, timeouts: UploadTimeouts) -> UploadFailure {
        if let failure = error as? UploadFailure { return failure }
        if error is CancellationError { return cancelled(bodySent: bodySent) }
        if let client = error as? HTTPClientError {
            switch client {
            case .cancelled, .requestStreamCancelled:
                return cancelled(bodySent: bodySent)
            case .connectTimeout, .tlsHandshakeTimeout:
                return UploadFailure(.connectTimeout, "could not connect within \(seconds(timeouts.connect))")
            case .writeTimeout:
                return stalled(timeouts)
            case .readTimeout:
                return bodySent ? noAnswer(timeouts) : stalled(timeouts)
            case .remoteConnectionClosed:
                return UploadFailure(
                    .connectionLost,
                    bodySent
                        ? "the server closed the connection without answering"
                        : "the server closed the connection during the upload")
            case .redirectLimitReached, .redirectCycleDetected:
                return UploadFailure(.tooManyRedirects, "too many redirects")
            case .deadlineExceeded:
                return UploadFailure(.noAnswer, "the upload did not finish before its deadline")
            default:
                return UploadFailure(.other, String(describing: client))
            }
        }
        if let connection = error as? NIOConnectionError {
            if let dns = connection.dnsAError ?? connection.dnsAAAAError {
                return UploadFailure(.cannotConnect, "cannot resolve \(connection.host): \(Self.resolverWords(dns))")
            }
            if let first = connection.connectionErrors.first {
                let inner = classify(first.error, bodySent: false, timeouts: timeouts)
                if inner.kind == .certificateRejected { return inner }
                return UploadFailure(.cannotConnect, "cannot connect to \(connection.host):\(connection.port): \(inner.message)", code: inner.code)
            }
            return UploadFailure(.cannotConnect, "cannot connect to \(connection.host):\(connection.port)")
        }
        if let io = error as? IOError {
            let code = io.errnoCode
            let text = String(cString: strerror(code))
            switch code {
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL:
                return UploadFailure(.cannotConnect, "cannot connect: \(text)", code: code)
            case ECONNRESET, EPIPE, ECONNABORTED:
                return UploadFailure(.connectionLost, "connection lost during the upload: \(text)", code: code)
            case ETIMEDOUT:
                return UploadFailure(.connectTimeout, text, code: code)
            default:
                return UploadFailure(.other, text, code: code)
            }
        }
        if let channel = error as? ChannelError {
            switch channel {
            case .connectTimeout:
                return UploadFailure(.connectTimeout, "could not connect within \(seconds(timeouts.connect))")
            case .ioOnClosedChannel, .outputClosed, .alreadyClosed, .eof:
                return UploadFailure(.connectionLost, "connection lost during the upload")
            default:
                return UploadFailure(.other, String(describing: channel))
            }
        }
        if let tls = error as? NIOSSLError {
            if case .handshakeFailed(let inner) = tls, isCertificateVerification(inner) { return certificateRejected(tls) }
            return UploadFailure(.cannotConnect, "TLS handshake failed: \(tls)")
        }
        if let tls = error as? BoringSSLError {
            if isCertificateVerification(tls) { return certificateRejected(tls) }
            return UploadFailure(.cannotConnect, "TLS handshake failed: \(tls)")
        }
        if let tls = error as? NIOSSLExtraError, tls == .failedToValidateHostname {
            // NIOSSL's own check after a trusted chain; its text says "<none>" for an IP target.
            return UploadFailure(.certificateRejected, "certificate name mismatch: the certificate is not made out for the host asked for")
        }
        if let malformed = error as? MalformedAnswer {
            return UploadFailure(.other, malformed.description)
        }
        if let parsing = error as? HTTPParserError {
            // Through AsyncHTTPClient the bytes are not at hand: the parser's words, said as the server's.
            return UploadFailure(.other, "the server's answer was refused as malformed (\(parsing))")
        }
        if let unknown = error as? SocketAddressError.UnknownHost {
            return UploadFailure(.cannotConnect, "cannot resolve \(unknown.host): \(Self.resolverWords(unknown))")
        }
        if let resolution = error as? SocketAddressError {
            return UploadFailure(.cannotConnect, "cannot resolve host: \(resolution)")
        }
        return UploadFailure(.other, String(describing: error))
    }

    /// BoringSSL says `CERTIFICATE_VERIFY_FAILED` for an untrusted, expired or not yet valid
    /// certificate alike (its error codes are not public in NIOSSL; the reason's name is stable).
    static func isCertificateVerification(_ error: BoringSSLError) -> Bool {
        switch error {
        case .sslError(let stack), .unknownError(let stack):
            return stack.contains { $0.description.contains("CERTIFICATE_VERIFY_FAILED") }
        default:
            return false
        }
    }

    /// Said this way only until `CertificateInspection` finds out which problem it is.
    static func certificateRejected(_ error: Error) -> UploadFailure {
        UploadFailure(.certificateRejected, "the server's certificate was not accepted: \(error)")
    }

    /// Once the whole body was sent the server may have stored the file; only its answer is lost.
    static func cancelled(bodySent: Bool) -> UploadFailure { .cancelled(bodySent: bodySent) }

    static func seconds(_ amount: TimeAmount) -> String {
        ByteFormat.duration(Double(amount.nanoseconds) / 1e9)
    }
}

/// The clocks an attempt runs against.
public struct UploadTimeouts: Sendable, Equatable {
    /// Establishing the connection (TCP and TLS).
    public var connect: TimeAmount
    /// Nothing written for this long while sending the body.
    public var stall: TimeAmount
    /// No answer this long after the body was sent.
    public var answer: TimeAmount
    /// The whole of the question whether an origin resumes uploads (`OPTIONS`), connecting
    /// included, and never longer than `answer`: a server that takes the question and says
    /// nothing (an application behind a proxy that only routes `POST`) once held every upload
    /// over the resume threshold for the whole answer timeout. Any server that answers at all
    /// answers an `OPTIONS` in a few round trips; past this the question counts as unanswered
    /// (the upload goes as the draft's optimistic creation where that can be seen, else plain).
    public var discovery: TimeAmount

    public static let defaultDiscovery: TimeAmount = .seconds(3)

    public init(
        connect: TimeAmount = .seconds(10), stall: TimeAmount = .seconds(30), answer: TimeAmount = .seconds(60),
        discovery: TimeAmount = UploadTimeouts.defaultDiscovery
    ) {
        self.connect = connect
        self.stall = stall
        self.answer = answer
        self.discovery = discovery
    }

    /// The answer clock in seconds, as messages give it.
    var answerSeconds: Double { Double(answer.nanoseconds) / 1e9 }
}
