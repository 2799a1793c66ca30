import Foundation

/// A URL's origin (RFC 6454): scheme, host and port, the port the scheme's default when the
/// URL names none. Credentials belong to one, never to a host name alone: the same host on
/// another port, or over http after https, is another origin.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    public let scheme: String
    public let host: String
    public let port: Int

    /// nil for a URL without a scheme or host, or with a scheme whose default port is unknown
    /// and no port given.
    public init?(_ url: String) {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host, !host.isEmpty else { return nil }
        let defaultPort: Int? = switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
        guard let port = parsed.port ?? defaultPort else { return nil }
        self.scheme = scheme
        // Foundation keeps IPv6 brackets on some paths and not others; and names ignore case.
        self.host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        self.port = port
    }

    public var description: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}

/// The one rule for where the user's headers (`-H`, `--netrc`'s `Authorization`) may go: to the
/// origin of the endpoint they were given for, and nowhere else — not a redirect's target, not
/// an upload resource the server names (a tus `Location`, the draft's `104`), on another port
/// or scheme. As curl does without `--location-trusted`, but by origin rather than host name.
public enum CredentialScope {
    /// Whether a request to `url` may carry the headers given for `endpoint`.
    public static func carries(to url: String, givenFor endpoint: String) -> Bool {
        guard let target = Origin(url), let own = Origin(endpoint) else { return false }
        return target == own
    }

    /// The user's headers for a request to `url`: all of them on the endpoint's origin, none elsewhere.
    public static func headers(_ headers: [RequestHeader], to url: String, givenFor endpoint: String) -> [RequestHeader] {
        carries(to: url, givenFor: endpoint) ? headers : []
    }

    /// What a log says of a redirect to `url`: where it goes without the headers, nothing otherwise.
    public static func redirectNote(to url: String, givenFor endpoint: String) -> String {
        guard !carries(to: url, givenFor: endpoint) else { return "" }
        return " (\(Origin(url)?.description ?? "another origin") is not the endpoint's origin: the request's own headers, -H and --netrc, are not sent there)"
    }
}
