import Foundation

/// A URL's origin (RFC 6454): scheme, host and port, the port the scheme's default when the
/// URL names none. Credentials belong to one, never to a host name alone: the same host on
/// another port, or over http after https, is another origin.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    public let scheme: String
    public let host: String
    public let port: Int

    public init(scheme: String, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// The origin of an `http`/`https` URL (`Endpoint`); nil for any other text.
    public init?(_ url: String) {
        guard let endpoint = Endpoint(url) else { return nil }
        self = endpoint.origin
    }

    public var description: String {
        // Built by concatenation: it is asked for several times per upload, and Foundation's
        // `contains` over strings and interpolation were a hundredth of an agent's work.
        scheme + "://" + (HostName.isIPv6(host) ? "[" + host + "]" : host) + ":" + String(port)
    }
}

/// `Endpoint`'s credential rule for URLs kept as text (records, reports): where the user's
/// headers went, and what a log says of a redirect.
public enum CredentialScope {
    /// Whether a request to `url` may carry the headers given for `endpoint`.
    public static func carries(to url: String, givenFor endpoint: String) -> Bool {
        guard let target = Endpoint(url), let own = Endpoint(endpoint) else { return false }
        return own.sharesCredentials(with: target)
    }

    /// What a log says of a redirect to `url`: where it goes without the headers, nothing otherwise.
    public static func redirectNote(to url: String, givenFor endpoint: String) -> String {
        guard !carries(to: url, givenFor: endpoint) else { return "" }
        return " (\(Origin(url)?.description ?? "another origin") is not the endpoint's origin: the request's own headers, -H and --netrc, are not sent there)"
    }
}
